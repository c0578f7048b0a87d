"""Whether graph preparation (warmups and capture) is under way: ``is_capturing()``.

Seed 003: a model may fork auxiliary streams for overlap; during the UNCAPTURED warmups that
precede a capture, that overlap can leave work in flight across the capture boundary. A model reads
``is_capturing()`` to turn auxiliary overlap off while a graph is being prepared.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

_depth = 0


def is_capturing() -> bool:
    """True while ``capture_one`` prepares a graph or a capturing scope is open."""
    return _depth > 0


@contextlib.contextmanager
def preparing() -> Iterator[None]:
    """Mark the ``with`` body as graph preparation."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
