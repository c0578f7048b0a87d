"""The same capture programs on every capture-capable backend agree, case by case, with DESIGN §4.

| in capture                              | expected observation                      |
|-----------------------------------------|-------------------------------------------|
| side queue forked, not joined at close  | UnjoinedForkError                         |
| ``.item()`` / ``synchronize()``         | CaptureSyncError                          |
| pageable host -> device copy            | PageableCopyError                         |
| input reallocated after capture         | replay reads the OLD buffer               |
| ... where the seam checks the address   | AddressChangedError                       |
| input refreshed in place                | replay sees the new values                |

On a machine without a GPU the cuda arm is OWED; on the H200 both arms run this same file, and
``test_raw_cuda_*`` checks the right-hand column against raw torch CUDA graphs (no seam guard), in a
child process because a refused capture can leave the CUDA context unusable.
"""

from __future__ import annotations

import json
from typing import Callable

import pytest
import torch

from seam import AddressChangedError, Backend, BreakableGraph, CaptureError, GraphCaptureScope

from .conftest import run_child


def _capture(backend: Backend, body: Callable[[], object]) -> tuple[BreakableGraph, object]:
    graph = BreakableGraph(backend)
    with GraphCaptureScope(backend, backend.default_queue(), graph):
        out = body()
    return graph, out


def unjoined_fork(b: Backend) -> str:
    q, side = b.default_queue(), b.new_queue()
    x = b.alloc((4,))

    def body() -> None:
        b.wait_event(side, b.record_event(q))
        with b.use_queue(side):
            x.add_(1)

    _capture(b, body)
    return "captured"


def item_in_capture(b: Backend) -> str:
    x = b.alloc((4,))
    _capture(b, lambda: x.sum().item())
    return "captured"


def synchronize_in_capture(b: Backend) -> str:
    _capture(b, b.synchronize)
    return "captured"


def pageable_copy_in_capture(b: Backend) -> str:
    dst, src = b.alloc((4,)), torch.ones(4)
    _capture(b, lambda: dst.copy_(src, non_blocking=True))
    return "captured"


def reallocated_input(b: Backend) -> str:
    x = b.to_device(torch.tensor([1.0]))
    graph, out = _capture(b, lambda: x * 10)
    x = b.to_device(torch.tensor([5.0]))  # noqa: F841 - the new buffer the graph never sees
    graph.replay()
    b.synchronize()
    return "old" if out.cpu().tolist() == [10.0] else "new"


def reallocated_input_checked(b: Backend) -> str:
    x = b.to_device(torch.tensor([1.0]))
    graph, _ = _capture(b, lambda: x * 10)
    graph.register_input(x, "x")
    graph.replay(inputs=[b.to_device(torch.tensor([5.0]))])
    return "replayed"


def refreshed_in_place(b: Backend) -> str:
    x = b.to_device(torch.tensor([1.0]))
    graph, out = _capture(b, lambda: x * 10)
    b.copy(x, torch.tensor([5.0]), b.default_queue())
    graph.replay()
    b.synchronize()
    return "new" if out.cpu().tolist() == [50.0] else "old"


#: DESIGN §4, as observations.
EXPECTED: dict[str, str] = {
    "unjoined_fork": "UnjoinedForkError",
    "item_in_capture": "CaptureSyncError",
    "synchronize_in_capture": "CaptureSyncError",
    "pageable_copy_in_capture": "PageableCopyError",
    "reallocated_input": "old",
    "reallocated_input_checked": "AddressChangedError",
    "refreshed_in_place": "new",
}
PROGRAMS = {f.__name__: f for f in (unjoined_fork, item_in_capture, synchronize_in_capture, pageable_copy_in_capture,
                                    reallocated_input, reallocated_input_checked, refreshed_in_place)}


def observe(program: Callable[[Backend], str], backend: Backend) -> str:
    try:
        return program(backend)
    except CaptureError as err:
        return type(err).__name__


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_every_capture_backend_agrees_with_the_design_table(backend: Backend, case: str) -> None:
    assert observe(PROGRAMS[case], backend) == EXPECTED[case]
    assert not backend.capturing, "a refused capture leaves no capture open"


def test_address_changed_error_names_the_input_and_both_addresses(backend: Backend) -> None:
    with pytest.raises(AddressChangedError, match=r"x moved from 0x[0-9a-f]+ \(captured\) to 0x[0-9a-f]+"):
        reallocated_input_checked(backend)


RAW_CUDA = """
    import json, torch
    s = torch.cuda.Stream(); g = torch.cuda.CUDAGraph(); side = torch.cuda.Stream()
    x = torch.ones(4, device="cuda"); host = torch.ones(4)
    torch.cuda.synchronize()
    case = {case!r}
    first = None  # the FIRST error: the one the capture body raised, not capture_end's follow-up
    with torch.cuda.stream(s):
        g.capture_begin()
        try:
            if case == "unjoined":
                side.wait_stream(s)
                with torch.cuda.stream(side):
                    x.add_(1)
            elif case == "item":
                x.sum().item()
            elif case == "pageable":
                x.copy_(host, non_blocking=True)
        except RuntimeError as err:
            first = str(err)
        try:
            g.capture_end()
        except RuntimeError as err:
            first = first or str(err)
    print(json.dumps({{"raised": None if first is None else first[:300]}}))
"""


@pytest.mark.arm("cuda")
@pytest.mark.parametrize("case,needle", [("unjoined", "unjoined"), ("item", "captur"), ("pageable", "")])
def test_raw_cuda_refuses_what_the_emulator_refuses(case: str, needle: str) -> None:
    proc = run_child(RAW_CUDA.format(case=case))
    assert proc.returncode == 0, proc.stderr
    raised = json.loads(proc.stdout.strip().splitlines()[-1])["raised"]
    assert raised is not None, f"raw CUDA accepted {case} inside capture"
    print(f"raw CUDA refused {case}: {raised!r}")  # recorded in the device run's log (evidence/)
    assert needle in raised.lower()
