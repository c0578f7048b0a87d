"""Every test here runs inside ``emulate_cuda()`` (the fixture ``emulated``), on a fresh device."""

from __future__ import annotations

from typing import Iterator

import pytest

from seam.torch_cuda import emulate_cuda


@pytest.fixture
def emulated() -> Iterator[None]:
    with emulate_cuda():
        yield
