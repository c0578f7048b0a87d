"""A capture ends while another thread's thread_local capture is open, as on a GPU.

torch's ``capture_end`` ends the stream's capture and instantiates the graph; instantiating is one of the calls a
capture's mode may refuse: a ``global`` capture refuses it from any thread, a ``thread_local`` one from the thread
that began it only (CUDA's ``cudaStreamCaptureMode``). With two captures open in ONE thread the end of one is refused
and the other invalidated (the fidelity corpus' ``a_second_capture_on_another_stream_while_one_is_open``, H200); with
each capture in a thread of its own in ``thread_local`` mode, each ends and replays. The emulator refused the end of
any capture while another non-relaxed one was open, in any thread: breakable-cuda-graphs' and
piecewise-cuda-graphs' ``TestConcurrentCaptures`` (two threads capturing at once in ``thread_local`` mode) failed
there whenever the two captures overlapped (session 40).
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import torch

from seam.cuda_backend import end_generator_capture


def _in_a_thread(body: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    """``body`` run in a thread of its own; its result or exception lands in the dict."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = body()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def _joined(thread: threading.Thread, out: dict[str, Any]) -> Any:
    thread.join(timeout=60)
    assert not thread.is_alive(), "the capturing thread did not finish"
    if "error" in out:
        raise out["error"]
    return out["result"]


def test_each_of_two_threads_ends_its_thread_local_capture_while_the_others_is_open(torch_cuda: str) -> None:
    x = torch.ones(4, device="cuda")
    mine, theirs = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    their_capture_open, my_capture_ended = threading.Event(), threading.Event()

    def their_capture() -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.stream(theirs):
            graph.capture_begin(capture_error_mode="thread_local")
            y = x * 2
            their_capture_open.set()
            assert my_capture_ended.wait(timeout=60)
            graph.capture_end()  # nothing else open now
        return graph, y

    my_graph = torch.cuda.CUDAGraph()
    refused: RuntimeError | None = None
    with torch.cuda.stream(mine):
        my_graph.capture_begin(capture_error_mode="thread_local")
        y_mine = x + 1
        thread, out = _in_a_thread(their_capture)
        assert their_capture_open.wait(timeout=60)
        try:
            my_graph.capture_end()  # while the other thread's thread_local capture is open: ends
        except RuntimeError as err:
            refused = err
        my_capture_ended.set()
        thread.join(timeout=60)
    if refused is not None:  # a refused end leaves the default generator capturing: ended, for the tests after
        end_generator_capture(x.device)
        raise refused
    their_graph, y_theirs = _joined(thread, out)

    x.fill_(3.0)
    my_graph.replay()
    their_graph.replay()
    torch.cuda.synchronize()
    assert y_mine.tolist() == [4.0] * 4
    assert y_theirs.tolist() == [6.0] * 4
