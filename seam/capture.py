"""``capture_one``: the warmup -> synchronize -> barrier -> capture ordering contract (seeds 002, 003).

Each warmup forward is followed by its ``post_warmup_hook``. After the LAST hook: ``synchronize()``
(work of the final warmup, auxiliary queues included, must be finished before capture begins), then
the barrier (ranks aligned at that boundary), then the graph is CONSTRUCTED and exactly one forward
is captured. ``is_capturing()`` is true for the whole preparation, so a model can turn auxiliary
overlap off during the uncaptured warmups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar, Union

from seam.graph import BreakableGraph
from seam.mode import CaptureMode
from seam.monitor import preparing
from seam.scope import GraphCaptureScope

if TYPE_CHECKING:
    from seam.backend import Backend, Queue

T = TypeVar("T")
GraphSpec = Union[CaptureMode, Callable[[], BreakableGraph]]


@dataclass(frozen=True)
class Captured(Generic[T]):
    """What ``capture_one`` made."""

    #: The captured graph (not captured, and empty, when the scope was inert).
    graph: BreakableGraph
    #: What the captured forward returned: its static output buffers. Replay before reading them.
    output: T
    #: True when capture was off or impossible and the forward simply ran eagerly.
    inert: bool


def run_barrier(barrier: Any) -> None:
    """A ``torch.distributed`` process group (its barrier), a plain callable, or ``None``."""
    if barrier is None:
        return
    if callable(barrier):
        barrier()
        return
    import torch.distributed as dist

    dist.barrier(group=barrier)


def capture_one(
    forward: Callable[[], T],
    *,
    backend: "Backend",
    graph: GraphSpec,
    warmups: int = 2,
    post_warmup_hook: Callable[[], None] | None = None,
    barrier: Any = None,
    queue: "Queue | None" = None,
) -> Captured[T]:
    """Warm up, synchronize, rendezvous, then construct ``graph`` and capture one ``forward``.

    ``graph`` is a ``CaptureMode`` (a ``BreakableGraph`` is built in that mode) or a zero-argument
    factory returning one.
    """
    queue = queue or backend.default_queue()
    with preparing(), backend.use_queue(queue):
        for _ in range(warmups):
            forward()
            if post_warmup_hook is not None:
                post_warmup_hook()
        backend.synchronize()
        run_barrier(barrier)
        g = BreakableGraph(backend, graph) if isinstance(graph, CaptureMode) else graph()
        with GraphCaptureScope(backend, queue, g) as scope:
            output = forward()
    return Captured(g, output, scope.inert)
