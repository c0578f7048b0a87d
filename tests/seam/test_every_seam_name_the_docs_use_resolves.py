"""Every ``seam.NAME`` the docs, the README and the examples tell a user to write resolves: a public name of
the seam (``seam.NAME``, PEP 562's lazy export) or one of its modules. ``seam.emulate_cuda()`` was
documented as the way in while ``seam`` did not export it (an AttributeError for every reader)."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import seam

ROOT = Path(__file__).resolve().parents[2]
#: ``seam.NAME``, not a file name (``seam.py``, ``seam.md``) and not part of a longer dotted word.
_NAME = re.compile(r"(?<![\w./-])seam\.([A-Za-z_]\w*)(?!\.(?:py|md)\b)")
_FILES = ("README.md", "docs/*.md", "examples/**/*.py", "examples/**/*.md")


def _named() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pattern in _FILES:
        for path in sorted(ROOT.glob(pattern)):
            for match in _NAME.finditer(path.read_text(encoding="utf-8")):
                if match.group(1) not in ("py", "md"):
                    found.setdefault(match.group(1), set()).add(str(path.relative_to(ROOT)))
    return found


def _resolves(name: str) -> bool:
    if importlib.util.find_spec(f"seam.{name}") is not None:
        return True
    try:
        getattr(seam, name)
    except AttributeError:
        return False
    return True


def test_the_docs_name_seam_functions() -> None:
    assert "emulate_cuda" in _named(), "the scan finds no seam.emulate_cuda: the pattern is broken"


def test_every_seam_name_the_docs_use_resolves() -> None:
    unresolved = {name: sorted(files) for name, files in _named().items() if not _resolves(name)}
    assert not unresolved, f"seam.NAME written in docs that `import seam` does not give: {unresolved}"


def test_seam_emulate_cuda_is_the_emulation_itself() -> None:
    from seam.torch_cuda import emulate_cuda

    assert seam.emulate_cuda is emulate_cuda
    assert "emulate_cuda" in seam.__all__
