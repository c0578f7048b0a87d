"""A work fingerprint reads every value of every output, and the lane's copies and launches, nothing else.

The lane-identity gate says "values identical" from ``output_digest`` and "work different" from the
copies and launches of ``work_fingerprint``. A digest that hashes only part of a tensor (its first
row, its first element, a prefix of its bytes), or a fingerprint that reads another counter, would
call two different runs identical. These tests pin the digest to sha256 over every byte in order
and change one value at a time, anywhere in a tensor, and one unit of work at a time.
"""

from __future__ import annotations

import hashlib

import pytest
import torch

from drivers import draft
from drivers.fingerprint import output_digest, work_fingerprint
from seam import EagerBackend, EmulatedBackend


def sha256_of(*tensors: torch.Tensor) -> str:
    """The documented digest: sha256 over the raw bytes of every output, in order."""
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.contiguous().numpy().tobytes())
    return h.hexdigest()


def logits() -> torch.Tensor:
    return torch.arange(2 * 4 * 6, dtype=torch.float32).reshape(2, 4, 6) / 7.0  # [B, 1+k, V]


def test_the_digest_is_sha256_over_the_raw_bytes_of_every_output_in_order() -> None:
    a, b = logits(), torch.tensor([[1, 2, 3]], dtype=torch.int64)
    assert output_digest([a, b]) == sha256_of(a, b)
    assert output_digest([a]) == hashlib.sha256(a.numpy().tobytes()).hexdigest()
    assert output_digest([]) == hashlib.sha256().hexdigest()


@pytest.mark.parametrize("where", [(0, 0, 0), (0, 0, 5), (0, 3, 0), (1, 0, 0), (1, 2, 3), (1, 3, 5)],
                         ids=["first", "end-of-first-row", "last-row-of-slot-0", "slot-1", "middle", "last"])
def test_changing_any_one_value_of_an_output_changes_the_digest(where: tuple[int, int, int]) -> None:
    base = logits()
    changed = base.clone()
    changed[where] += 0.5
    assert output_digest([base]) != output_digest([changed]), f"the value at {where} was not hashed"
    assert output_digest([base, base]) != output_digest([base, changed]), f"the value at {where} of the second output"


def test_a_single_bit_of_one_float_changes_the_digest() -> None:
    base = logits()
    nudged = base.clone()
    nudged[1, 3, 5] = torch.nextafter(nudged[1, 3, 5], torch.tensor(float("inf")))
    assert output_digest([base]) != output_digest([nudged])


def test_a_strided_view_is_hashed_by_its_values_in_order() -> None:
    base = logits()[0]  # [4, 6]
    view = base.t()  # [6, 4], not contiguous
    assert not view.is_contiguous()
    assert output_digest([view]) == output_digest([view.contiguous()]) == sha256_of(view.contiguous())
    assert output_digest([view]) != output_digest([base])  # same values, another order


def test_an_output_that_still_requires_grad_is_hashed_by_its_values() -> None:
    plain = logits()
    tracked = plain.clone().requires_grad_(True)
    assert output_digest([tracked * 1]) == output_digest([plain])


class AcceleratorOutput:
    """A stand-in for an output in accelerator memory (this machine has none): like a CUDA tensor it
    refuses ``numpy()`` and gives its values only to ``.to("cpu")``."""

    def __init__(self, values: torch.Tensor) -> None:
        self.values = values

    def detach(self) -> "AcceleratorOutput":
        return self

    def contiguous(self) -> "AcceleratorOutput":
        return self

    def to(self, device: object) -> object:
        return self.values.clone() if device is not None and torch.device(device).type == "cpu" else self

    def numpy(self) -> None:
        raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.")


def test_an_output_in_accelerator_memory_is_read_back_to_the_host_and_hashed_by_its_values() -> None:
    a = logits()
    assert output_digest([AcceleratorOutput(a)]) == output_digest([a])  # type: ignore[list-item]


def test_the_fingerprint_counts_each_copy_and_each_launch_and_nothing_else() -> None:
    backend = EagerBackend()
    out = [logits()]
    start = work_fingerprint(backend, "eager", out)
    assert (start["copies"], start["launches"]) == (0, 0)
    dst = backend.alloc((3,))
    backend.alloc_pinned((3,))
    backend.synchronize()
    assert work_fingerprint(backend, "eager", out) == start, "allocations and syncs are not work of the lane"
    backend.copy(dst, torch.ones(3), backend.default_queue())
    one_copy = work_fingerprint(backend, "eager", out)
    assert (one_copy["copies"], one_copy["launches"]) == (1, 0)
    for _ in range(3):
        backend.launch(lambda: None)
    assert (work_fingerprint(backend, "eager", out)["copies"], work_fingerprint(backend, "eager", out)["launches"]) == (1, 3)


def test_the_fingerprint_names_the_lane_it_was_given_and_the_digest_of_the_outputs_given() -> None:
    backend = EmulatedBackend()
    a, b = logits(), logits() + 1
    fa, fb = work_fingerprint(backend, "capture", [a]), work_fingerprint(backend, "eager", [b])
    assert fa["lane"] == "capture" and fb["lane"] == "eager"
    assert fa["output_digest"] == output_digest([a]) != fb["output_digest"] == output_digest([b])
    assert set(fa) == {"copies", "launches", "lane", "output_digest"}


def test_the_draft_lane_fingerprint_digests_every_proposal_of_its_run() -> None:
    got = draft.lane_fingerprint("eager")
    backend = EagerBackend()
    driver = draft.DraftDriver(backend)
    outputs = draft.propose_schedule(driver.cfg, driver.propose, draft.FINGERPRINT_PROPOSES)
    assert len(outputs) == draft.FINGERPRINT_PROPOSES == 4
    assert got["output_digest"] == sha256_of(*outputs)
    assert got["output_digest"] != sha256_of(*outputs[:-1])
    per_propose = 1 + driver.cfg.draft_k
    assert (got["copies"], got["launches"], got["lane"]) == (2 * draft.FINGERPRINT_PROPOSES, draft.FINGERPRINT_PROPOSES, "eager")
    assert outputs[0].shape == (driver.cfg.slots, per_propose, driver.cfg.vocab)
