"""``seamgate init``: scaffold seamgate into an existing pytest project, writing all of it or nothing.

What it writes (the texts are in ``harness/cli/templates/``):

* ``pyproject.toml``: a ``[tool.seamgate]`` table APPENDED to the file, every byte before it kept as
  it was (its line endings too); a project without one gets a new ``pyproject.toml`` holding only
  that table (pytest reads its settings from a pyproject.toml only when it has
  ``[tool.pytest.ini_options]``, so a ``pytest.ini``/``setup.cfg``/``tox.ini`` project is unchanged);
* ``gates/seamgate_example.yaml``: one commented example gate;
* ``mutations/seamgate_example.yaml``: a catalog with one example mutation;
* ``seamgate_example/test_seamgate_example.py``: a step captured through the seam (the code under
  test, standing in for the user's driver) and two tests using the ``backend`` fixture, which needs
  torch (``pip install "seamgate[seam]"``). It has a folder of its own, outside the project's
  ``tests/``: the example is code under test (the evidence hash covers ``.py`` files outside
  ``tests/``), so ``seamgate run`` works on a project that has no code of its own yet;
* ``seamgate_example/conftest.py``: ignores the folder unless ``SEAM_ARMS`` is set (seamgate exports
  it to every pytest it starts), so the project's own plain ``pytest`` stays exactly as green as
  before, with or without ``testpaths``, with or without torch (a project without ``testpaths``
  would otherwise collect the example, and fail without torch or under ``filterwarnings = error``).

Nothing is overwritten: when ``gates/``, ``mutations/`` or ``seamgate_example/`` exists, or the
pyproject already has ``[tool.seamgate]`` (or would not stay valid TOML), every such thing is listed
and nothing is written (``USAGE_ERROR``). A write that fails half way removes what it wrote.
"""

from __future__ import annotations

import importlib.util
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.errors import CommandLineError
from reports.outcome import counted

TEMPLATES = Path(__file__).with_name("templates")
GATE_FILE = "gates/seamgate_example.yaml"
CATALOG_FILE = "mutations/seamgate_example.yaml"
TEST_FILE = "seamgate_example/test_seamgate_example.py"
#: Makes the user's own plain ``pytest`` ignore ``seamgate_example/`` (seamgate's children export ``SEAM_ARMS``).
CONFTEST_FILE = "seamgate_example/conftest.py"
#: The example mutation and gate ids (``seamgate mutations reds`` / ``--gate`` in the printed next steps).
MUTATION_ID = "seamgate-example-eager"
GATE_ID = "seamgate-example"


@dataclass(frozen=True)
class Planned:
    """One file ``seamgate init`` writes."""

    #: Path relative to the project root, ``/``-separated.
    path: str
    #: The whole new text of the file (for pyproject.toml: the old text with the table appended).
    text: str
    #: One line: what it is, as printed.
    what: str
    #: The text the file held before (``None``: the file is new).
    before: str | None = None


def plan(root: Path) -> list[Planned]:
    """What init would write into ``root``; ``CommandLineError`` listing everything already there."""
    if not root.is_dir():
        raise CommandLineError(f"seamgate init {root}: no such folder (or not a folder); name an existing project folder")
    taken = [f"{name}/ already exists" for name in ("gates", "mutations", "seamgate_example") if os.path.lexists(root / name)]
    pyproject = _pyproject(root)
    if isinstance(pyproject, str):
        taken.append(pyproject)
    if taken:
        raise CommandLineError(
            f"seamgate init {root}: refused, nothing was written: " + "; ".join(taken) +
            ". seamgate init only adds new files (and a [tool.seamgate] table); move these aside or set "
            "seamgate up by hand (seamgate's docs/tutorial.md)")
    return [pyproject,
            Planned(GATE_FILE, _template("example_gate.yaml"), "one commented example gate"),
            Planned(CATALOG_FILE, _template("example_catalog.yaml"), "a catalog with one example mutation"),
            Planned(TEST_FILE, _template("example_test.py"),
                    'a captured step and its tests on the `backend` fixture (needs torch: pip install "seamgate[seam]")'),
            Planned(CONFTEST_FILE, _template("example_conftest.py"),
                    "keeps the example out of your own plain `pytest` (seamgate run still runs it)")]


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def _pyproject(root: Path) -> Planned | str:
    """The planned pyproject.toml, or why it may not be written."""
    path = root / "pyproject.toml"
    table = _template("seamgate_table.toml")
    if not path.exists():
        return Planned("pyproject.toml", table, "new, holding only [tool.seamgate]")
    try:
        before = path.read_bytes().decode("utf-8")
        settings = tomllib.loads(before)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return f"pyproject.toml cannot be read as TOML ({exc}); fix it first"
    tool = settings.get("tool", {})
    if isinstance(tool, dict) and "seamgate" in tool:
        return "pyproject.toml already has a [tool.seamgate] table"
    newline = "\r\n" if "\r\n" in before else "\n"
    gap = "" if not before else (newline if before.endswith(("\n", "\r")) else newline * 2)
    after = before + gap + table.replace("\n", newline)
    try:
        tomllib.loads(after)
    except tomllib.TOMLDecodeError as exc:  # e.g. `tool = {...}` as an inline table cannot take a sub-table
        return f"pyproject.toml would not stay valid TOML with a [tool.seamgate] table appended ({exc}); add it by hand"
    lines = table.count("\n")
    return Planned("pyproject.toml", after, f"[tool.seamgate] appended ({counted(lines, 'line')}; the rest unchanged)", before)


def write(root: Path, planned: list[Planned]) -> None:
    """Write every planned file; on a failure, remove what was created and restore pyproject.toml."""
    created: list[Path] = []
    restored: list[Planned] = []
    try:
        for item in planned:
            path = root / item.path
            for folder in reversed([p for p in path.parents if not p.exists() and root in p.parents]):
                folder.mkdir()
                created.append(folder)
            if item.before is not None:
                restored.append(item)
            else:
                created.append(path)
            with open(path, "w", encoding="utf-8", newline="") as out:
                out.write(item.text)
    except OSError:
        for item in restored:
            (root / item.path).write_text(item.before or "", encoding="utf-8", newline="")
        for path in reversed(created):
            if path.is_dir():
                os.rmdir(path)
            elif path.exists():
                path.unlink()
        raise


def init(root: Path) -> list[Planned]:
    """Plan, then write; returns what was written."""
    planned = plan(root)
    write(root, planned)
    return planned


def next_steps(root: Path, planned: list[Planned]) -> str:
    """What ``seamgate init`` prints after writing."""
    width = max(len(p.path) for p in planned)
    lines = [f"seamgate init: wrote into {root}:"]
    lines += [f"  {p.path:<{width}}  {p.what}" for p in planned]
    if importlib.util.find_spec("torch") is None:
        lines.append('note: torch is not installed here; the example\'s tests need it (pip install "seamgate[seam]")')
    lines += ["next:",
              '  pip install "seamgate[seam]"          # torch and the seam, for the `backend` fixture',
              "  echo .seamgate/ >> .gitignore          # seamgate keeps its results there",
              "  seamgate validate                      # the gate and the catalog are read strictly",
              f"  seamgate mutations reds {MUTATION_ID}  # the example mutation's red set, as a gate's expect block",
              "  seamgate run                           # the example gate: PASS on cpu-emulated, cuda OWED without a GPU",
              "then read seamgate's docs/tutorial.md: your own driver, red-first against your pre-migration commit, reports."]
    return "\n".join(lines) + "\n"
