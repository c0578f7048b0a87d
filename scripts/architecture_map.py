"""Write ARCHITECTURE.md: one line per file, taken from the file's own first docstring or comment line.

    .venv/bin/python scripts/architecture_map.py      # rewrite ARCHITECTURE.md
``tests/test_architecture_map.py`` fails when the map and the tree disagree; run this to mend it,
then read the diff: a file whose first line does not say what it is gets a better first line.

Only PRODUCT code is listed file by file. Data folders (gates, catalogs, docs, evidence, templates),
examples and test folders are listed as folders with a fixed description, so a new gate, catalog entry,
doc, example or test (in a new test folder too) leaves the map as it was.
"""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Product code: one line per file (a new module needs a first line that says what it is).
SECTIONS = {
    "seam/": "The reference seam (imports nothing of ours)",
    "drivers/": "Reference drivers on the seam (`drivers -> seam`)",
    "mutations/": "The mutation engine (the catalog is data: see the folders below)",
    "harness/": "The gate runner; here what every job below shares, then one sub-package per job (`harness -> mutations, reports`)",
    "reports/": "Result model, JUnit ingestion, renderers",
    "bench/": "Benchmarks (figures in docs/benchmarks.md)",
    "scripts/": "Set-up and maintenance scripts",
    ".ci/": "Continuous integration",
}
#: Data folders: listed as folders, so adding a gate, a catalog entry, a doc, an example or a measurement
#: never makes this map (and so the project's own tests) stale.
DATA_FOLDERS = {
    "examples/": "example projects, each a pytest project of its own; `examples/toyengine/` is the tutorial's (`docs/tutorial.md`)",
    "harness/cli/templates/": "the files `seamgate init` writes into a project (`harness/cli/scaffold.py`)",
    "gates/": "the gate suite: YAML gate files (`docs/gates.md`)",
    "mutations/catalog/": "the named mutations: YAML catalogs and the diffs they name (`docs/mutations.md`)",
    "evidence/": "measurements from GPU machines with their provenance (`evidence/README.md`)",
    "evidence/history/": "older GPU measurements kept for the record, not read as evidence",
    "docs/": "documentation",
}
TESTS = "tests/"
TOP_LEVEL = {
    "README.md": "the two fresh-machine commands, what seamgate is, commands, dependencies",
    "ARCHITECTURE.md": "this map",
    "pyproject.toml": "packaging (PEP 621), the `seamgate` script, the `pytest11` plugin entry point, `[tool.seamgate]`",
    ".gitignore": "what git leaves out (the venv, caches, build outputs, carried wheels)",
}
TEST_FOLDERS = {
    "tests/": "repository-wide checks (this map); any test folder not named below",
    "tests/seam/": "the seam's rules as counters and trace orders, the emulator, the cross-backend table",
    "tests/plugin/": "the pytest plugin: per-arm backend fixture, OWED skips, SEAM_ARMS",
    "tests/drivers/": "per driver: a seam test (which machinery ran) and an exact test (values only); G4; lane identity",
    "tests/mutations/": "the mutation engine on fixture catalogs and projects",
    "tests/harness/": "gate files, CLI, executor, fork server, evaluation, red-first, lane identity, SIGKILL",
    "tests/reports/": "the result model and renderers; fixture-project builders shared by harness tests",
    "tests/reliability/": "the hostile-input and fault corpus (and the command that writes docs/reliability.md)",
    "tests/fidelity/": "the fidelity corpus: programs run on every arm against what the H200 does, the raw-CUDA witness, the torch.cuda corpus, docs/fidelity.md and docs/fidelity-seam.md",
    "tests/realworld/": "fixture projects shaped like real ones (src layout installed editable, flat, setup.cfg)",
    "tests/tutorial/": "every command of docs/tutorial.md run on a copy of examples/toyengine; `seamgate init`",
}
#: The one command that mends the map (the test's failure message names it).
REGENERATE = ".venv/bin/python scripts/architecture_map.py"


def first_line(path: Path) -> str:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        doc = ast.get_docstring(ast.parse(text))
        if doc:
            return doc.strip().splitlines()[0]
    if path.parent.name == "evidence" and path.name != "README.md":
        return "a measurement from a GPU machine (what, where, which commit: evidence/README.md)"
    if path.suffix == ".diff":
        return "unified diff of a named mutation (see the catalog entry that names this file)"
    if path.suffix == ".json" and "schema" in path.name:
        title = json.loads(text).get("title", path.stem)
        return f"JSON Schema (draft 2020-12): {title}, for editors and other tools"
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#!"):
            continue
        if stripped.startswith("#"):
            return stripped.lstrip("#").strip()
        if stripped:
            return stripped[:150]
    return "(empty)"


def files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted(p for p in out.splitlines() if (ROOT / p).exists())


def _sections(all_files: list[str]) -> list[tuple[str, str]]:
    """Each product folder of SECTIONS, then each of its sub-packages as a section of its own, titled by its
    ``__init__.py``'s first line (so ``harness/``'s sub-packages, one per job, read as a table of contents)."""
    out: list[tuple[str, str]] = []
    for prefix, title in SECTIONS.items():
        out.append((prefix, title))
        inits = sorted(p for p in all_files if p.startswith(prefix) and p.endswith("/__init__.py")
                       and p.count("/") > prefix.count("/"))
        out += [(p[: -len("__init__.py")], first_line(ROOT / p).replace("|", "/")) for p in inits]
    return out


def render() -> str:
    all_files = files()
    lines = ["# Architecture: one line per file", "",
             "Generated by `scripts/architecture_map.py` from each file's first docstring or comment line;",
             "`tests/test_architecture_map.py` fails when this map and the tree disagree.", ""]
    top = [p for p in all_files if "/" not in p]
    lines += ["## top level", "", "| file | what it is |", "|---|---|"]
    lines += [f"| `{p}` | {TOP_LEVEL.get(p) or first_line(ROOT / p).replace('|', '/')} |" for p in top]
    lines.append("")
    data = sorted(DATA_FOLDERS, key=len, reverse=True)
    sections = _sections(all_files)
    for prefix, title in sections:
        # A file is listed under the deepest section holding it: a sub-package's files under that sub-package,
        # a file in a plain folder (no ``__init__.py``, e.g. ``seam/torch_cuda/autostart/``) under its package.
        rows = [p for p in all_files if p.startswith(prefix)
                and max((s for s, _ in sections if p.startswith(s)), key=len) == prefix
                and not p.endswith("__init__.py") and not any(p.startswith(d) for d in data)]
        if not rows:
            continue
        lines += [f"## `{prefix}` — {title}", "", "| file | what it is |", "|---|---|"]
        lines += [f"| `{p}` | {first_line(ROOT / p).replace('|', '/')} |" for p in rows]
        lines.append("")
    folders = sorted({d for d in DATA_FOLDERS if any(p.startswith(d) for p in all_files)})
    lines += ["## Data folders", "", "| folder | what it holds |", "|---|---|"]
    lines += [f"| `{d}` | {DATA_FOLDERS[d]} |" for d in folders]
    lines.append("")
    # Test folders by their fixed description; a folder not named in TEST_FOLDERS is covered by `tests/`
    # (a new test folder must not make the map stale: issue 12).
    test_dirs = sorted(d for d in TEST_FOLDERS if any(p.startswith(d) for p in all_files))
    lines += ["## `tests/` — the project's own tests, mirroring the folders above", "", "| folder | what it is |", "|---|---|"]
    lines += [f"| `{d}` | {TEST_FOLDERS[d]} |" for d in test_dirs]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    (ROOT / "ARCHITECTURE.md").write_text(render(), encoding="utf-8")
    print("wrote ARCHITECTURE.md")
