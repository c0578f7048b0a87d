"""``draft``: a (1+k) speculative draft step, with a capture-lane admission predicate.

One forward reads the last accepted token followed by ``k`` mask tokens at ``k+1`` consecutive
positions and proposes ``k+1`` logits rows. The lane is chosen by ``capture_lane_admitted``, which
MUST ask ``cudagraph_enabled()``: the seam reads ``SEAM_CUDAGRAPH`` itself, and a predicate that
does not would, with the switch off on a capture-capable backend, run the eager warm pass and then
the whole forward a second time inside an inert scope, every propose (#1352). With the switch off
this driver does exactly the eager lane's work: one forward per propose. Rollback switch:
``SEAM_DRAFT_GRAPH=0``. ``lane_fingerprint`` is the instrument the lane-identity gate runs.
"""

from __future__ import annotations

from typing import Callable, Sequence

import torch

from drivers.config import DriverConfig
from drivers.fingerprint import backend_by_name, work_fingerprint
from drivers.step_driver import Machinery, StepDriver
from drivers.tiny_model import EagerReference, KVCache, decode_forward
from seam import Backend, CaptureMode, cudagraph_enabled, driver_graph_enabled

#: Proposes ``lane_fingerprint`` runs, and how many draft tokens each accepts before the next.
FINGERPRINT_PROPOSES = 4
ACCEPTED_PER_PROPOSE = 2

#: One draft step: (last accepted token per slot, position) -> logits [B, 1+k, V].
Proposer = Callable[[Sequence[int], int], torch.Tensor]


def capture_lane_admitted(backend: Backend) -> bool:
    """The capture lane only where a scope would really capture AND the draft's own switch is on."""
    return backend.can_capture and cudagraph_enabled() and driver_graph_enabled("draft")


def draft_rows(cfg: DriverConfig, last: Sequence[int], position: int) -> tuple[list[list[int]], list[list[int]]]:
    """The (1+k) step's token and position rows: the accepted token, then ``k`` mask tokens."""
    mask = cfg.vocab - 1
    tokens = [[t] + [mask] * cfg.draft_k for t in last]  # [B][1+k]
    positions = [[position + i for i in range(1 + cfg.draft_k)] for _ in last]  # [B][1+k]
    return tokens, positions


class DraftDriver(StepDriver):
    """The draft model's (1+k) step over ``cfg.slots`` slots."""

    name = "draft"
    machinery = Machinery.SEAM

    def __init__(self, backend: Backend, cfg: DriverConfig = DriverConfig(), *, graph: bool | None = None) -> None:
        super().__init__(backend, cfg, graph=graph)
        self.cache = KVCache.allocate(cfg, backend.alloc)
        width = 1 + cfg.draft_k
        self.tokens = self.new_input((cfg.slots, width))  # [B, 1+k]
        self.positions = self.new_input((cfg.slots, width))  # [B, 1+k]
        self.start_step(CaptureMode.FULL, self.tokens, self.positions)

    def capture_wanted(self) -> bool:
        """The draft's own predicate, ``capture_lane_admitted`` (the lane-identity gate's subject)."""
        return capture_lane_admitted(self.backend)

    def _forward(self) -> torch.Tensor:
        return decode_forward(self.weights, self.cache, self.tokens.device, self.positions.device)  # [B, 1+k, V]

    def propose(self, last: Sequence[int], position: int) -> torch.Tensor:
        """Logits [B, 1+k, V] of one draft step after ``last`` (one token per slot) at ``position``."""
        tokens, positions = draft_rows(self.cfg, last, position)
        return self.run_step([t for row in tokens for t in row], [p for row in positions for p in row])


def propose_schedule(cfg: DriverConfig, propose: Proposer, proposes: int) -> list[torch.Tensor]:
    """Run ``proposes`` draft steps, each accepting ``ACCEPTED_PER_PROPOSE`` tokens of the previous one."""
    last, position, outputs = list(range(1, cfg.slots + 1)), 0, []
    for _ in range(proposes):
        logits = propose(last, position)  # [B, 1+k, V]
        outputs.append(logits)
        last = logits[:, ACCEPTED_PER_PROPOSE - 1].argmax(-1).tolist()
        position += ACCEPTED_PER_PROPOSE
    return outputs


def reference_proposals(cfg: DriverConfig, proposes: int, device: str = "cpu") -> list[torch.Tensor]:
    """The eager reference of ``propose_schedule``."""
    ref = EagerReference(cfg, device)
    return propose_schedule(cfg, lambda last, pos: ref(*draft_rows(cfg, last, pos)), proposes)


def lane_fingerprint(backend_name: str) -> dict[str, object]:
    """Build the backend by name, run a few proposes, return ``{copies, launches, lane, output_digest}``."""
    backend = backend_by_name(backend_name)
    cfg = DriverConfig()
    driver = DraftDriver(backend, cfg)
    outputs = propose_schedule(cfg, driver.propose, FINGERPRINT_PROPOSES)
    return work_fingerprint(backend, driver.lane, outputs)

