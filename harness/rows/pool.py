"""The row pool: thunks run ``--jobs`` at a time on threads, each result handed on as it comes, a signal interrupting the wait.

One pool for every row of either scenario: ``seamgate run`` hands it its baselines, row estimates and
rows (``harness/run/runner.py``, ``Session.parallel``), ``seamgate sweep`` its batches of mutants and
their shared clean check (``harness/sweep/sweep.py``, ``Sweep.execute``). The wait wakes every 0.2 s,
so SIGINT/SIGTERM (raised in the main thread: ``harness/run/signals.py``, the sweep's command) is seen
while rows run; then, or on any other error, no thunk starts any more, the runs in flight are killed
(``on_stop``) and the workers drain before the caller removes the temp folder under them.
"""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable


def run_parallel(thunks: list[Callable[[], Any]], jobs: int, *, on_stop: Callable[[], None],
                 on_done: Callable[[Any], None] | None = None) -> list[Any]:
    """Run ``thunks`` ``jobs`` at a time, started in their order; their results in order, each passed to
    ``on_done`` (in the caller's thread) as it comes.

    ``on_stop``: called when the wait is interrupted (a signal, a thunk's error), before the workers drain:
    it kills the runs in flight and refuses every run started after it (``Executor.stop``): a thunk whose run
    was killed may go on to start another, and the pool waits for every thunk to end."""
    results: list[Any] = [None] * len(thunks)
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="seamgate-row")
    try:
        futures: dict[Future[Any], int] = {pool.submit(t): i for i, t in enumerate(thunks)}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            for future in done:
                results[futures[future]] = future.result()
                if on_done is not None:
                    on_done(results[futures[future]])
    except BaseException:
        # Stop feeding runs, kill the ones in flight, and let the workers drain before the
        # caller removes the temp folder under them.
        on_stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results
