"""The seamgate pytest plugin: a ``backend`` fixture parametrized over the platform arms.

Loaded through the ``pytest11`` entry point, so any suite (ours or a user's) that asks for the
``backend`` fixture runs once per platform arm. An arm that cannot run here is SKIPPED with a reason
that starts with ``OWED:`` and states the requirement; the gate runner reads that prefix and reports
the arm as OWED, never as green.

``SEAM_ARMS`` (comma-separated arm names) restricts the arms parametrized; the gate runner sets it
to run one arm per child process.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:
    from seam.backend import Backend

from seam.arms import ARM_NAMES, NO_BACKEND, PARAMETRIZED

#: Platform arms this plugin knows: the one registry the gate validator reads too (``seam/arms.py``).
KNOWN_ARMS: tuple[str, ...] = ARM_NAMES


def selected_arms() -> tuple[str, ...]:
    """The arms to parametrize: ``SEAM_ARMS`` if set (any known arm), else the arms with a backend here."""
    raw = os.environ.get("SEAM_ARMS", "").strip()
    if not raw:
        return PARAMETRIZED
    arms = tuple(a.strip() for a in raw.split(",") if a.strip())
    unknown = [a for a in arms if a not in KNOWN_ARMS]
    if unknown:
        raise pytest.UsageError(
            f"SEAM_ARMS names unknown arm(s) {unknown}; known arms: {', '.join(KNOWN_ARMS)}"
        )
    return arms


def arm_unavailable_reason(arm: str) -> str | None:
    """Why ``arm`` cannot run on this machine, or ``None`` when it can."""
    if arm == "cpu-emulated":
        return None
    if arm == "cuda":
        if not real_cuda_available():
            return "cuda arm needs an NVIDIA GPU with a CUDA build of torch (torch.cuda.is_available() is False)"
        return None
    return NO_BACKEND.get(arm, f"no backend for arm {arm!r} in this build")


def real_cuda_available() -> bool:
    """Whether a REAL CUDA device is here: under ``emulate_cuda()`` torch.cuda says yes, but the cuda arm
    means the hardware."""
    import torch

    from seam.torch_cuda import is_emulating

    return not is_emulating() and torch.cuda.is_available()


@contextlib.contextmanager
def on_arm(arm: str) -> Iterator[None]:
    """``torch.cuda`` as ``arm`` has it: emulated on ``cpu-emulated``, the hardware on ``cuda``; initialised on both
    (on a GPU every test but a process's first finds CUDA initialised; a fresh emulated device is not, as a fresh
    process's CUDA is not: ``torch.cuda.init()`` makes the two arms start alike)."""
    import torch

    if arm == "cpu-emulated":
        from seam.torch_cuda import emulate_cuda

        with emulate_cuda():
            torch.cuda.init()
            yield
    else:
        torch.cuda.init()
        yield


def make_backend(arm: str) -> "Backend":
    """A fresh backend for ``arm`` (the arm must be available), to use inside ``on_arm(arm)``.

    One seam (issue 24): both arms run the same ``CudaBackend`` on the ``torch.cuda`` API; on
    ``cpu-emulated`` that API is the emulated device (``on_arm`` enters ``emulate_cuda()``), on ``cuda``
    the GPU. The backend's ``name`` is therefore ``cuda`` on both: a test that depends on the arm asks
    for the ``arm`` fixture."""
    from seam import CudaBackend

    if arm in ("cpu-emulated", "cuda"):
        return CudaBackend()
    raise ValueError(f"no backend for arm {arm!r}")


def arm_of(request: pytest.FixtureRequest) -> str:
    """The platform arm of this test instance: the parameter of its ``backend`` or ``torch_cuda``."""
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    for name in ("backend", "torch_cuda"):
        if name in params:
            return params[name]
    raise pytest.UsageError(
        f"{request.node.nodeid}: the `arm` fixture names the arm of a test that asks for `backend` or "
        "`torch_cuda`; this one asks for neither"
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "arm(name): the test exercises one platform arm only (deselected when SEAM_ARMS excludes it, OWED when the hardware is missing)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect ``@pytest.mark.arm(X)`` tests whose arm is not selected; skip as OWED where X cannot run."""
    arms = selected_arms()
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("arm")
        if marker is None:
            keep.append(item)
            continue
        arm = marker.args[0]
        if arm not in arms:
            drop.append(item)
            continue
        reason = arm_unavailable_reason(arm)
        if reason is not None:
            item.add_marker(pytest.mark.skip(reason=f"OWED: {reason}"))
        keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name in ("backend", "torch_cuda"):
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, selected_arms(), indirect=True)


@pytest.fixture
def torch_cuda(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test runs once per arm against ``torch.cuda`` itself: on ``cpu-emulated`` inside
    ``emulate_cuda()``, on ``cuda`` on the GPU (OWED without one). The value is the arm's name."""
    yield from torch_cuda_for(request.param)


def torch_cuda_for(arm: str) -> Iterator[str]:
    """The ``torch_cuda`` fixture's body, which ``seamgate_plugin``'s fixture runs too: OWED (a skip saying so)
    where the arm cannot run, else the test runs inside the arm (``on_arm``)."""
    reason = arm_unavailable_reason(arm)
    if reason is not None:
        pytest.skip(f"OWED: {reason}")
    with on_arm(arm):
        yield arm
        _put_the_default_stream_back()
        _end_a_capturing_generator()


def _put_the_default_stream_back() -> None:
    """After a test on ``torch.cuda``: the default stream is current again, as at the test's start.

    ``torch.cuda.graph``'s ``__exit__`` exits its stream context only after ``capture_end`` returns, so a capture CUDA
    refuses at its end leaves the capture's stream current (torch 2.11 and 2.13, on a GPU and emulated alike), and a
    test may leave one current itself. On the cuda arm the process keeps it for the tests after, where the emulated
    arm's device is made fresh for each test: there a later "capture on the default stream" began on that stream
    instead of being refused (session 40: after the NCCL library's refused-communicator test, the refused-begin file's
    first case; on the H100 the process then ended in ``~CUDAGraph``)."""
    import torch

    default = torch.cuda.default_stream()
    if torch.cuda.current_stream() != default:
        torch.cuda.set_stream(default)


def _end_a_capturing_generator() -> None:
    """After a test on ``torch.cuda``: fail its teardown if it left the default CUDA generator capturing, and end that
    capture, so the tests after it can draw.

    torch runs a graph's ``capture_epilogue`` only when CUDA accepts the capture's end, and (torch 2.11) its
    ``capture_prologue`` before it refuses the default stream or a pool recorded to: after an end CUDA refused (an
    unjoined fork, an invalidated capture), such a refused begin, or a capture left open, every later eager draw on the device raises
    "Offset increment outside graph capture encountered unexpectedly." for the rest of the process (H100, session 23:
    one such test turned 20 later cases of its shard red, none of them at fault). The check draws once, with the
    generator's state put back; the emulated device behaves alike (``seam/torch_cuda/capture.py``)."""
    import torch

    from seam.cuda_backend import end_generator_capture

    state = torch.cuda.get_rng_state()
    try:
        torch.empty(1, device="cuda").normal_()
    except RuntimeError as err:
        if "Offset increment outside graph capture" not in str(err):
            raise
        end_generator_capture(torch.cuda.current_device())
        pytest.fail("the test left the default CUDA generator capturing (a capture refused at its end, one refused "
                    "at its begin after the generator's prologue, or one left open), so every later draw on the device in this process would raise 'Offset increment "
                    "outside graph capture encountered unexpectedly.'; seamgate ended that capture for the tests "
                    "after it. End a capture cleanly in the test's own teardown (seam.cuda_backend."
                    "end_generator_capture does)", pytrace=False)
    finally:
        with contextlib.suppress(RuntimeError):
            torch.cuda.set_rng_state(state)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator["Backend"]:
    """A fresh backend of the arm this test instance runs on, with the seam's counters reset."""
    yield from backend_for(request.param)


def backend_for(arm: str) -> Iterator["Backend"]:
    """The ``backend`` fixture's body, which ``seamgate_plugin``'s fixture runs too: OWED (a skip saying so) where
    the arm cannot run, else the seam's counters reset and a fresh backend, inside the arm (``on_arm``)."""
    from seam import reset_graph_break_stats, reset_step_input_stats

    reason = arm_unavailable_reason(arm)
    if reason is not None:
        pytest.skip(f"OWED: {reason}")
    reset_graph_break_stats()
    reset_step_input_stats()
    with on_arm(arm):
        yield make_backend(arm)


@pytest.fixture
def arm(request: pytest.FixtureRequest) -> str:
    """The platform arm this test instance runs on (``cpu-emulated`` or ``cuda``): the backend is a
    ``CudaBackend`` on both, so ``backend.name`` no longer says which."""
    return arm_of(request)
