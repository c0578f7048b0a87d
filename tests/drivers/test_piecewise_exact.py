"""piecewise: logits equal the eager reference bit for bit, on the default lane and with the graph off."""

from __future__ import annotations

import pytest

from seam import Backend

from .exactness import assert_matches_reference


@pytest.mark.parametrize("graph", [None, False], ids=["default-lane", "graph-off"])
def test_piecewise_logits_equal_the_eager_reference_bit_for_bit_over_six_steps(backend: Backend, graph: bool | None) -> None:
    assert_matches_reference("piecewise", backend, graph)
