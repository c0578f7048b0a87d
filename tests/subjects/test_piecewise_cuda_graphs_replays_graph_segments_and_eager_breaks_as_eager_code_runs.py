"""``piecewise-cuda-graphs==0.1.0`` (Meta, BSD), unmodified, through its public API on both arms.

``piecewise_graph(seq)`` captures a body as CUDA graph segments split at each ``@no_graph`` call, which
runs eagerly and is kept as an eager step; ``seq.replay()`` replays the segments and re-runs the eager
steps in order. Every case takes the ``torch_cuda`` fixture: ``[cpu-emulated]`` runs inside
``seam.emulate_cuda()``, ``[cuda]`` on the GPU. Named mutations of the library's own code
(``mutations/catalog/subjects.yaml``) and their gates (``gates/subjects.yaml``) pin what each case sees.
"""

from __future__ import annotations

import ast
import gc
import os
import subprocess
import sys
import weakref
from pathlib import Path

import pytest
import torch

import piecewise_cuda_graphs as pcg
from piecewise_cuda_graphs import CUDAGraphSequence, no_graph, piecewise_graph

from seam.cuda_backend import end_generator_capture

N = 64


def _inputs(step: int) -> torch.Tensor:
    return torch.linspace(-1.0, 1.0, N, device="cuda") * (step + 1) + step


@no_graph
def _scale_into(dst: torch.Tensor, src: torch.Tensor, factor: float) -> None:
    dst.copy_(torch.tanh(src) * factor)


def _body(x: torch.Tensor, mid: torch.Tensor, out: torch.Tensor, factor: float) -> None:
    h = x * 2.0 + 1.0
    _scale_into(mid, h, factor)
    out.copy_(mid.sin() + h)



def test_the_library_under_test_is_the_pinned_release_from_the_projects_subjects_folder(torch_cuda: str) -> None:
    """scripts/setup.sh installs it into .subjects/ and conftest.py puts that first on sys.path, so that an
    off-tree copy's tests import the copy's (mutated) module: the gates' mutations are only seen through it."""
    assert pcg.__version__ == "0.1.0"
    assert Path(pcg.__file__).resolve().parent == Path(__file__).resolve().parents[2] / ".subjects"

def test_each_replay_recomputes_the_segments_and_the_eager_break_from_new_inputs_as_eager_code_does(torch_cuda: str) -> None:
    x, mid, out = (torch.zeros(N, device="cuda") for _ in range(3))
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        _body(x, mid, out, 3.0)
    for step in range(4):
        x.copy_(_inputs(step))
        g.replay()
        e_mid, e_out = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
        _body(_inputs(step), e_mid, e_out, 3.0)
        torch.cuda.synchronize()
        assert torch.equal(out, e_out) and torch.equal(mid, e_mid), f"replay {step} differs from eager"


def test_the_eager_break_runs_its_python_at_capture_and_again_at_every_replay_and_the_body_only_once(torch_cuda: str) -> None:
    calls = {"body": 0, "eager": 0}
    src, dst = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")

    @no_graph
    def count_and_copy(d: torch.Tensor, s: torch.Tensor) -> None:
        calls["eager"] += 1
        d.copy_(s + calls["eager"])  # a host value that changes every call: only Python can write it

    g = CUDAGraphSequence()
    with piecewise_graph(g):
        calls["body"] += 1
        src.add_(1.0)
        count_and_copy(dst, src)
    assert calls == {"body": 1, "eager": 1}
    for step in range(3):
        src.zero_()
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(dst, torch.full((N,), 1.0 + calls["eager"], device="cuda"))
    assert calls == {"body": 1, "eager": 4}


def test_the_no_graph_function_runs_outside_any_capture_while_the_body_captures(torch_cuda: str) -> None:
    seen: list[tuple[str, bool, bool]] = []
    buf = torch.zeros(N, device="cuda")

    @no_graph
    def look(b: torch.Tensor) -> None:
        seen.append(("eager", torch.cuda.is_current_stream_capturing(), pcg.is_in_piecewise_graph()))

    g = CUDAGraphSequence()
    assert not pcg.is_in_piecewise_graph()
    with piecewise_graph(g):
        seen.append(("body", torch.cuda.is_current_stream_capturing(), pcg.is_in_piecewise_graph()))
        buf.add_(1.0)
        look(buf)
        seen.append(("body", torch.cuda.is_current_stream_capturing(), pcg.is_in_piecewise_graph()))
        buf.add_(1.0)
    assert seen == [("body", True, True), ("eager", False, True), ("body", True, True)]
    assert not pcg.is_in_piecewise_graph() and not torch.cuda.is_current_stream_capturing()


def test_at_replay_the_eager_break_writes_the_buffer_it_was_given_at_capture_even_after_the_tensor_is_rebound(torch_cuda: str) -> None:
    src, dst = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    captured_memory = dst.view(-1)  # the memory dst held at capture
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        src.add_(1.0)
        _scale_into(dst, src, 2.0)
    dst.set_(torch.full((N,), -7.0, device="cuda"))  # the Python tensor now names other memory
    src.fill_(0.5)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(captured_memory, torch.tanh(torch.full((N,), 1.5, device="cuda")) * 2.0)
    assert torch.equal(dst, torch.full((N,), -7.0, device="cuda")), "the eager step followed the rebound tensor"


def test_the_graph_keeps_no_reference_to_the_tensors_passed_to_a_no_graph_function(torch_cuda: str) -> None:
    src, dst = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        _scale_into(dst, src, 1.0)
    alive = weakref.ref(src)
    del src
    gc.collect()
    assert alive() is None, "the graph kept the argument tensor alive"
    assert g is not None


def test_a_no_graph_arguments_memory_is_freed_when_the_caller_drops_it(torch_cuda: str) -> None:
    dst = torch.zeros(N, device="cuda")
    src = torch.ones(1 << 20, device="cuda")  # 4 MiB, outside any graph pool
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        _scale_into(dst, src[:N], 1.0)
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated()
    del src
    gc.collect()
    assert torch.cuda.memory_allocated() <= held - (1 << 22), "the eager step's arguments still hold their memory"
    assert g is not None


def test_the_segments_of_one_graph_share_one_memory_pool(torch_cuda: str) -> None:
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    addresses = []
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        tmp = x * 2.0
        addresses.append(tmp.data_ptr())
        out.copy_(tmp)
        del tmp
        pcg.force_no_graph()
        tmp = x * 3.0
        addresses.append(tmp.data_ptr())
        out.add_(tmp)
        del tmp
    assert addresses[0] == addresses[1], "the second segment did not reuse the first segment's freed memory"


def test_a_graph_given_another_graphs_pool_reuses_the_memory_that_graph_freed(torch_cuda: str) -> None:
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    first = CUDAGraphSequence()
    with piecewise_graph(first):
        tmp = x * 2.0
        freed_by_first = tmp.data_ptr()
        out.copy_(tmp)
        del tmp
    second = CUDAGraphSequence(pool=first.pool())
    with piecewise_graph(second):
        tmp = x * 5.0
        reused = tmp.data_ptr()
        out.add_(tmp)
        del tmp
    assert reused == freed_by_first


def test_pool_hands_out_one_handle_for_the_graphs_life_and_a_given_pool_is_kept(torch_cuda: str) -> None:
    own = CUDAGraphSequence()
    handle = own.pool()
    assert own.pool() == handle and own.pool() == handle
    shared = CUDAGraphSequence(pool=handle)
    assert shared.pool() == handle
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    with piecewise_graph(own):
        out.add_(x)
        pcg.force_no_graph()
        out.add_(x)
    assert own.pool() == handle, "capture changed the graph's pool"
    assert CUDAGraphSequence().pool() != handle


def test_reset_drops_every_segment_so_a_replay_does_nothing_and_the_graph_captures_again(torch_cuda: str) -> None:
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        out.add_(x)
        _scale_into(out, out, 1.0)
        out.add_(x)
    g.reset()
    out.zero_()
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, torch.zeros(N, device="cuda")), "a replay after reset() still ran captured work"
    with piecewise_graph(g):
        out.mul_(2.0)
    out.fill_(3.0)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full((N,), 6.0, device="cuda"))


def test_a_capture_inside_a_capture_is_refused_and_the_outer_capture_is_closed(torch_cuda: str) -> None:
    x = torch.ones(N, device="cuda")
    with pytest.raises(RuntimeError, match="nested piecewise_graph captures are not supported"):
        with piecewise_graph(CUDAGraphSequence()):
            x.add_(1.0)
            with piecewise_graph(CUDAGraphSequence()):
                x.add_(1.0)
    assert not torch.cuda.is_current_stream_capturing() and not pcg.is_in_piecewise_graph()


@pytest.mark.parametrize("shape", ["tensor", "tuple", "dict"])
def test_a_no_graph_function_returning_a_cuda_tensor_is_refused_even_inside_a_container(torch_cuda: str, shape: str) -> None:
    x = torch.ones(N, device="cuda")

    @no_graph
    def leaks(t: torch.Tensor) -> object:
        y = t * 2.0
        return {"tensor": y, "tuple": (1, y), "dict": {"out": [y]}}[shape]

    with pytest.raises(RuntimeError, match="`.*leaks` is decorated with `@no_graph` but returns one or more CUDA tensors"):
        with piecewise_graph(CUDAGraphSequence()):
            x.add_(1.0)
            leaks(x)
    assert not torch.cuda.is_current_stream_capturing() and not pcg.is_in_piecewise_graph()


def test_a_no_graph_function_may_return_a_host_value_which_the_rest_of_the_capture_bakes_in(torch_cuda: str) -> None:
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")

    @no_graph
    def host_values(t: torch.Tensor) -> tuple[int, torch.Tensor]:
        return 4, torch.full((2,), 0.5)

    g = CUDAGraphSequence()
    with piecewise_graph(g):
        k, cpu = host_values(x)
        out.copy_(x * k + float(cpu[0]))
    x.fill_(2.0)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, torch.full((N,), 8.5, device="cuda"))


def test_a_side_stream_left_unjoined_before_a_no_graph_call_is_refused_in_the_librarys_words(torch_cuda: str) -> None:
    x = torch.ones(N, device="cuda")
    side = torch.cuda.Stream()
    before = torch.cuda.current_stream()
    try:
        with pytest.raises(RuntimeError, match="side stream was not joined back to the capturing stream before "
                                               "entering an @no_graph function") as caught:
            with piecewise_graph(CUDAGraphSequence()):
                y = x + 1.0
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    y.mul_(2.0)
                pcg.force_no_graph()
        assert "unjoined" in str(caught.value.__cause__), "the CUDA error is kept as the cause"
        assert not torch.cuda.is_current_stream_capturing() and not pcg.is_in_piecewise_graph()
    finally:
        # torch.cuda.graph leaves its capture stream current when capture_end fails (its __exit__ never
        # reaches the stream context's): put the caller's back so later tests in this process run on it.
        torch.cuda.set_stream(before)
        # The refused end left the default CUDA generator capturing (torch ends its capture only on an end CUDA
        # accepts): end it, so the draws of later tests in this process work (the torch_cuda fixture fails a test
        # that leaves it so).
        end_generator_capture(torch.cuda.current_device())


def test_a_side_stream_joined_before_the_no_graph_call_is_captured_and_replayed(torch_cuda: str) -> None:
    x, out = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    side = torch.cuda.Stream()
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        y = x + 1.0
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            z = y * 3.0
        torch.cuda.current_stream().wait_stream(side)
        pcg.force_no_graph()
        out.copy_(z - x)
    for step in range(3):
        x.fill_(float(step))
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, torch.full((N,), (step + 1.0) * 3.0 - step, device="cuda"))


_DEBUG_CHILD = """
import torch, piecewise_cuda_graphs as lib
x = torch.ones(8, device="cuda")
joined, unjoined = torch.cuda.Stream(), torch.cuda.Stream()
try:
    with lib.piecewise_graph(lib.CUDAGraphSequence()):
        y = x + 1.0
        for side in (joined, unjoined):
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                y.mul_(2.0)
        torch.cuda.current_stream().wait_stream(joined)
        lib.force_no_graph()
except RuntimeError as error:
    print(repr((joined.cuda_stream, unjoined.cuda_stream, str(error))))
"""


@pytest.mark.slow
def test_in_debug_mode_the_unjoined_refusal_names_the_side_stream_left_unjoined_and_not_the_joined_one(
        torch_cuda: str) -> None:
    """PIECEWISE_CUDA_GRAPHS_DEBUG=1 is read at import, so the case runs in a child (emulated too on cpu-emulated:
    emulate_cuda() hands SEAM_EMULATE_CUDA=1 to children); the library's GPU-trace callbacks see the forks."""
    env = dict(os.environ, PIECEWISE_CUDA_GRAPHS_DEBUG="1")
    subjects = Path(__file__).resolve().parents[2] / ".subjects"
    env["PYTHONPATH"] = os.pathsep.join([str(subjects)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    child = subprocess.run([sys.executable, "-c", _DEBUG_CHILD], env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0 and child.stdout.strip(), child.stderr[-2000:]
    joined, unjoined, message = ast.literal_eval(child.stdout.strip().splitlines()[-1])
    assert "side stream was not joined back to the capturing stream" in message
    assert message.endswith(f"Unjoined side-stream id(s): [{unjoined}]."), message
    assert str(joined) not in message


@pytest.mark.parametrize("where", ["graph segment", "no_graph function"])
def test_an_exception_in_the_body_propagates_unchanged_and_leaves_no_capture_open(torch_cuda: str, where: str) -> None:
    x = torch.ones(N, device="cuda")

    class Boom(Exception):
        pass

    @no_graph
    def explode(t: torch.Tensor) -> None:
        raise Boom("from the eager function")

    with pytest.raises(Boom):
        with piecewise_graph(CUDAGraphSequence()):
            x.add_(1.0)
            if where == "graph segment":
                raise Boom("from the body")
            explode(x)
    assert not torch.cuda.is_current_stream_capturing() and not pcg.is_in_piecewise_graph()
    g = CUDAGraphSequence()  # and the next capture works
    with piecewise_graph(g):
        x.mul_(2.0)
    x.fill_(1.0)
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(x, torch.full((N,), 2.0, device="cuda"))


def test_outside_a_capture_a_no_graph_function_just_runs_and_enable_false_leaves_it_inline(torch_cuda: str) -> None:
    x, out = torch.ones(N, device="cuda"), torch.zeros(N, device="cuda")
    _scale_into(out, x, 2.0)
    assert torch.equal(out, torch.tanh(x) * 2.0)

    calls = []

    def add_into(d: torch.Tensor, s: torch.Tensor) -> None:
        calls.append(1)
        d.add_(s)

    assert no_graph(add_into, enable=False) is add_into
    g = CUDAGraphSequence()
    with piecewise_graph(g):
        out.zero_()
        no_graph(add_into, enable=False)(out, x)  # captured inline: its Python runs once
    x.fill_(5.0)
    g.replay()
    g.replay()
    torch.cuda.synchronize()
    assert calls == [1] and torch.equal(out, torch.full((N,), 5.0, device="cuda"))
