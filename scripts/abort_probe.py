"""H200 probe: does closing a capture that is given up (the seam's abort) harm ANOTHER capture open at
the same time? Prints one line per case: what CUDA said and whether the outer capture replays right.

    python3 scripts/abort_probe.py        # on the GPU machine; evidence/h200-abort-probe-<commit>.txt
"""

from __future__ import annotations

import traceback

import torch


def outer_after(inner) -> str:  # type: ignore[no-untyped-def]
    """Capture ``x += 1`` on one stream while ``inner(stream)`` runs a second capture on another."""
    s_outer, s_inner = torch.cuda.Stream(), torch.cuda.Stream()
    x = torch.zeros(4, device="cuda")
    y = torch.zeros(4, device="cuda")
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    said = []
    with torch.cuda.stream(s_outer):
        g.capture_begin()
        x.add_(1)
    try:
        said.append(inner(s_inner, y))
    except Exception as err:  # noqa: BLE001 - a probe reports everything
        said.append(f"inner raised {type(err).__name__}: {str(err).splitlines()[0]}")
    said.append(end_and_replay("outer", g, s_outer) + f": x={x.tolist()}")
    return "; ".join(said)


def end_and_replay(name: str, graph: torch.cuda.CUDAGraph, stream: torch.cuda.Stream) -> str:
    """End ``graph``'s capture on ``stream`` and replay it once; what happened, in a few words."""
    try:
        with torch.cuda.stream(stream):
            graph.capture_end()
        graph.replay()
        torch.cuda.synchronize()
        return f"{name} ended and replayed"
    except Exception as err:  # noqa: BLE001 - a probe reports everything
        torch.cuda.synchronize()
        return f"{name} capture_end raised {type(err).__name__}: {str(err).splitlines()[0]}"


def inner_end_then_reset(s, y):  # type: ignore[no-untyped-def]
    h = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        h.capture_begin()
        y.add_(1)
        h.capture_end()
    h.reset()
    return "inner ended and reset"


def inner_end_kept(s, y):  # type: ignore[no-untyped-def]
    h = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        h.capture_begin()
        y.add_(1)
        h.capture_end()
    inner_end_kept.keep = h  # type: ignore[attr-defined]
    return "inner ended, kept"


def seam_abort_inside_another() -> str:
    from seam import CudaBackend
    a, b = CudaBackend(), CudaBackend()
    qa, qb = a.default_queue(), b.default_queue()
    x, y = a.alloc((4,)), b.alloc((4,))
    a.synchronize()
    a.begin_capture(qa)
    with a.use_queue(qa):
        x.add_(1)
    said = []
    try:
        b.begin_capture(qb)
        with b.use_queue(qb):
            y.add_(1)
        b.abort_capture(qb)
        said.append("b began and aborted")
    except Exception as err:  # noqa: BLE001 - since e452035 the seam refuses the second begin
        said.append(f"b.begin_capture raised {type(err).__name__}")
    try:
        g = a.end_capture(qa)
    except Exception as err:  # noqa: BLE001
        return "; ".join([*said, f"outer end_capture raised {type(err).__name__}: {err}"])
    a.replay(g, qa)
    a.synchronize()
    return "; ".join([*said, f"outer replayed: x={x.cpu().tolist()}"])


def seam_abort_after_invalidation() -> str:
    from seam import CudaBackend
    b = CudaBackend()
    q, x = b.default_queue(), b.alloc((4,))
    other = torch.cuda.Stream()
    ev = torch.cuda.Event()
    ev.record(other)
    b.begin_capture(q)
    with torch.cuda.stream(q.native):
        x.add_(1)
        try:
            ev.query()
        except RuntimeError:
            pass
    graph = b._open  # noqa: SLF001 - the probe looks at torch's object directly
    with torch.cuda.stream(q.native):
        try:
            graph.capture_end()
            end = "capture_end passed"
        except RuntimeError as err:
            end = f"capture_end raised: {str(err).splitlines()[0]}"
    try:
        graph.reset()
        reset = "reset passed"
    except RuntimeError as err:
        reset = f"reset raised: {str(err).splitlines()[0]}"
    b._close()  # noqa: SLF001
    b._capture_queue = b._open_capture = None  # noqa: SLF001
    return f"{end}; {reset}"


def inner_begun_outer_ends_first() -> str:
    """Which call does the harm: a second capture's BEGIN, or its end? The outer ends while the inner is open."""
    s_outer, s_inner = torch.cuda.Stream(), torch.cuda.Stream()
    x, y = torch.zeros(4, device="cuda"), torch.zeros(4, device="cuda")
    torch.cuda.synchronize()
    g, h, said = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph(), []
    with torch.cuda.stream(s_outer):
        g.capture_begin()
        x.add_(1)
    with torch.cuda.stream(s_inner):
        h.capture_begin()
        y.add_(1)
    said.append("inner begun")
    said += [end_and_replay("outer", g, s_outer), end_and_replay("inner", h, s_inner)]
    said.append(f"x={x.tolist()} y={y.tolist()}")
    return "; ".join(said)


if __name__ == "__main__":
    for name, case in [("raw: inner capture begun, outer ended first, then inner", inner_begun_outer_ends_first),
                       ("raw: inner capture ended and reset inside the outer", lambda: outer_after(inner_end_then_reset)),
                       ("raw: inner capture ended, kept, inside the outer", lambda: outer_after(inner_end_kept)),
                       ("seam: b.abort_capture inside a's capture", seam_abort_inside_another),
                       ("raw: capture_end then reset after an invalidation", seam_abort_after_invalidation)]:
        try:
            print(f"{name}: {case()}", flush=True)
        except Exception:  # noqa: BLE001
            print(f"{name}: PROBE FAILED\n{traceback.format_exc()}", flush=True)
            torch.cuda.synchronize()
