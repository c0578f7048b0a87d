"""The allocator log's events: what an entry of ``allocator.CachingAllocator.log`` is.

The device's hot path writes them (``kinds``, ``CachingAllocator.note_*``); the model plays them
(``CachingAllocator.play``) and ``allocator_cycles`` reads their signatures. An entry is one of:

- ``(ALLOC, key, nbytes, stream, pool, owner)``: a block of ``nbytes`` for ``key`` on ``stream`` in ``pool``
  (``owner``: the weak reference to the storage it serves, or None);
- ``(FREE, key)``: ``key``'s block freed;
- ``(BEGIN, pool)`` / ``(RELEASE, pool)``: a private pool's use taken / given back;
- a weak reference itself (not a tuple): the storage it watched died, so the block keyed by its ``id`` is freed.
"""

ALLOC, FREE, BEGIN, RELEASE = range(4)
