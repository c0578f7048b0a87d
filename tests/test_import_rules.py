"""The import rules of docs/contracts.md, read from the source with ``ast``: the seam imports nothing of ours,
``reports`` and ``mutations`` never import the harness, and no module of ours imports itself back through others.

Every import counts, function-local ones included (a circle hidden behind a local import is still a
circle), and so does ``importlib.import_module("...")`` with a literal name; imports under
``if TYPE_CHECKING:`` never run, so they count for the folder rules but not for circles.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Our importable code: these packages and top-level modules (tests, scripts and bench import them; never back).
PACKAGES = ("seam", "drivers", "mutations", "harness", "reports")
MODULES = ("seamgate_plugin",)
#: Known exceptions to a folder rule, each (importer, imported) with the issue that removes it. An entry whose
#: import is gone fails the test too, so the list only shrinks.
ALLOWED: dict[tuple[str, str], str] = {}
#: Known import circles, each as ``cycles`` reports it (sorted), with why it is there and what removes it. A circle
#: not found any more fails the test too, so this list also only shrinks.
ALLOWED_CIRCLES: dict[tuple[str, ...], str] = {}
#: (folder, the folders of ours it must never import, why).
FOLDER_RULES = (
    ("seam", ("drivers", "mutations", "harness", "reports", "seamgate_plugin"), "the seam imports nothing of ours"),
    ("reports", ("harness",), "reports never import the harness"),
    ("mutations", ("harness",), "mutations never import the harness"),
)


def module_files(root: Path) -> dict[str, Path]:
    """Every module of ours under ``root``, by dotted name (a package by its ``__init__.py``)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "templates" in parts:  # files `seamgate init` writes into a user's project, not ours
                continue
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for name in MODULES:
        if (root / f"{name}.py").is_file():
            found[name] = root / f"{name}.py"
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported(node: ast.AST, module: str, is_package: bool, known: dict[str, Path]) -> list[str]:
    """The modules one import statement (or ``importlib.import_module("x")`` call) asks for: ``from P import m``
    names the module ``P.m`` when there is one, else ``P``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        return [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in known else prefix for alias in node.names]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return [node.args[0].value]
    return []


def imports(root: Path) -> dict[str, dict[str, bool]]:
    """module -> {module of ours it imports: whether the import runs (``False``: only under TYPE_CHECKING)}."""
    files = module_files(root)
    graph: dict[str, dict[str, bool]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        skipped = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _type_checking(block)
                   for stmt in block.body for n in ast.walk(stmt)}
        edges: dict[str, bool] = {}
        for node in ast.walk(tree):
            for name in _imported(node, module, path.name == "__init__.py", files):
                # A module's own packages are imported before it, always: no edge (never a circle).
                if name in files and name != module and not module.startswith(name + "."):
                    edges[name] = edges.get(name, False) or id(node) not in skipped
        graph[module] = edges
    return graph


def folder_violations(graph: dict[str, dict[str, bool]]) -> list[str]:
    """Each import that breaks a folder rule and is not an allowed exception, as a readable line."""
    out = []
    for folder, banned, why in FOLDER_RULES:
        for module, edges in sorted(graph.items()):
            if module.split(".")[0] != folder:
                continue
            for target in sorted(edges):
                if target.split(".")[0] in banned and (module, target) not in ALLOWED:
                    out.append(f"{module} imports {target}: {why}")
    return out


def stale_exceptions(graph: dict[str, dict[str, bool]]) -> list[str]:
    return [f"{a} no longer imports {b}: remove its entry from ALLOWED ({why})"
            for (a, b), why in ALLOWED.items() if b not in graph.get(a, {})]


def cycles(graph: dict[str, dict[str, bool]]) -> list[list[str]]:
    """Every import circle among modules that really import each other (Tarjan's strongly connected
    components of the runtime graph; a component of more than one module is a circle), each sorted."""
    runtime = {m: sorted(t for t, runs in edges.items() if runs) for m, edges in graph.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # recursion depth is bounded by the module count (~150)
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in runtime.get(node, []):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(runtime):
        if module not in index:
            visit(module)
    return sorted(found)


def test_the_seam_imports_nothing_of_ours_and_reports_and_mutations_never_import_the_harness() -> None:
    graph = imports(ROOT)
    assert graph, f"no modules of ours found under {ROOT}: the test would be vacuous"
    assert not folder_violations(graph), "\n".join(folder_violations(graph))


def test_every_allowed_exception_is_still_an_import_of_ours() -> None:
    assert not stale_exceptions(imports(ROOT)), "\n".join(stale_exceptions(imports(ROOT)))


def unexplained_circles(found: list[list[str]]) -> list[list[str]]:
    return [c for c in found if tuple(c) not in ALLOWED_CIRCLES]


def stale_circles(found: list[list[str]]) -> list[str]:
    return [f"{' <-> '.join(c)} is no longer a circle: remove its entry from ALLOWED_CIRCLES ({why})"
            for c, why in ALLOWED_CIRCLES.items() if list(c) not in found]


def test_no_module_of_ours_imports_itself_back_through_others() -> None:
    found = unexplained_circles(cycles(imports(ROOT)))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_every_allowed_circle_is_still_a_circle() -> None:
    assert not stale_circles(cycles(imports(ROOT))), "\n".join(stale_circles(cycles(imports(ROOT))))


# The checks themselves, on a tiny tree: each rule can fail.

def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"seam/__init__.py": "", "harness/__init__.py": "", "reports/__init__.py": "",
                      "mutations/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_a_seam_module_importing_the_harness_and_a_report_importing_it_locally_are_both_named(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"seam/scope.py": "from harness import lock\n", "harness/lock.py": "",
                            "reports/out.py": "def f():\n    import harness.lock\n"})
    assert folder_violations(imports(root)) == ["seam.scope imports harness.lock: the seam imports nothing of ours",
                                                "reports.out imports harness.lock: reports never import the harness"]


def test_a_circle_hidden_behind_a_local_import_is_found_and_a_type_checking_one_is_not(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "harness/a.py": "from harness.b import x\n",
        "harness/b.py": "x = 1\ndef f():\n    from harness.a import y\n",
        "harness/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from harness.d import z\n",
        "harness/d.py": "import importlib\nimportlib.import_module('harness.c')\n"})
    assert cycles(imports(root)) == [["harness.a", "harness.b"]]


def test_an_allowed_exception_whose_import_is_gone_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ALLOWED, ("seam.pytest_plugin", "harness.arms"), "an example entry")
    root = _tree(tmp_path, {"seam/pytest_plugin.py": "", "harness/arms.py": ""})
    assert stale_exceptions(imports(root)) == [
        "seam.pytest_plugin no longer imports harness.arms: remove its entry from ALLOWED (an example entry)"]


def test_an_allowed_circle_that_is_gone_is_named_and_another_circle_is_not_excused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = ("harness.x", "harness.y")
    monkeypatch.setitem(ALLOWED_CIRCLES, allowed, "an example entry")
    other = ["harness.a", "harness.b"]
    assert unexplained_circles([list(allowed), other]) == [other]
    assert stale_circles([other]) == [
        f"{' <-> '.join(allowed)} is no longer a circle: remove its entry from ALLOWED_CIRCLES "
        f"({ALLOWED_CIRCLES[allowed]})"]
