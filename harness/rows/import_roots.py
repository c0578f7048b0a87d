"""Import roots of a materialized tree: the folders that must come first on a run's ``sys.path``.

A project installed editable (``pip install -e``) has a ``.pth`` line or an import finder that points
at its ORIGINAL source folder. A run in an off-tree copy must import the COPY's code, so the copy's
package roots go ahead of everything else:

- the copy root itself (flat layout; the tests and ``conftest.py``);
- ``src/`` when it exists (src layout);
- the folders the packaging configuration names: pyproject ``[tool.setuptools] package-dir``
  (``"" = "lib"``, or ``pkg = "lib/pkg"`` whose parent is the root), ``[tool.setuptools.packages.find]
  where``, and setup.cfg ``[options] package_dir`` / ``[options.packages.find] where``.

``top_level_names`` are the modules those roots hold (regular packages, ``.py`` files, and folders
of ``.py`` files below a root other than the copy root): the child's import finder claims them for
the roots, and the counting plugin checks that each one imported was loaded from the copy.
Stdlib only: it is read by the executor and by the counting plugin inside the run.
"""

from __future__ import annotations

import configparser
import os
import tomllib
from pathlib import Path

#: Environment variables that carry the roots and names into a run (set by the executor).
ROOTS_ENV = "SEAMGATE_IMPORT_ROOTS"
NAMES_ENV = "SEAMGATE_PROJECT_MODULES"


def import_roots(tree: Path) -> list[Path]:
    """The copy root, then every configured package root inside it, then ``src/``; no duplicates."""
    tree = Path(tree)
    found: list[Path] = [tree]
    for rel in (*_pyproject_roots(tree), *_setup_cfg_roots(tree), "src"):
        candidate = (tree / rel) if rel not in ("", ".") else tree
        try:
            inside = candidate.resolve().is_relative_to(tree.resolve())
        except OSError:
            continue
        if inside and candidate.is_dir() and candidate not in found:
            found.append(candidate)
    return found


def _pyproject_roots(tree: Path) -> list[str]:
    try:
        data = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    setuptools = data.get("tool", {}).get("setuptools", {})
    if not isinstance(setuptools, dict):
        return []
    roots = _package_dir(setuptools.get("package-dir"))
    packages = setuptools.get("packages")
    find = packages.get("find") if isinstance(packages, dict) else None
    if isinstance(find, dict):
        where = find.get("where", [])
        roots += [w for w in ([where] if isinstance(where, str) else where) if isinstance(w, str)]
    return roots


def _package_dir(mapping: object) -> list[str]:
    """``{"" : "src"}`` -> ``src``; ``{"pkg": "lib/pkg"}`` -> ``lib`` (a path entry holds ``pkg``)."""
    if not isinstance(mapping, dict):
        return []
    roots = []
    for name, folder in mapping.items():
        if not isinstance(folder, str):
            continue
        if name == "":
            roots.append(folder)
        elif "." not in name and Path(folder).name == name:
            roots.append(str(Path(folder).parent))
    return roots


def _setup_cfg_roots(tree: Path) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read(tree / "setup.cfg", encoding="utf-8")
    except (configparser.Error, UnicodeDecodeError):
        return []
    roots: list[str] = []
    if parser.has_option("options", "package_dir"):
        mapping = {}
        for line in parser.get("options", "package_dir").splitlines():
            if "=" in line:
                name, _, folder = line.partition("=")
                mapping[name.strip()] = folder.strip()
        roots += _package_dir(mapping)
    if parser.has_option("options.packages.find", "where"):
        roots += [w.strip() for w in parser.get("options.packages.find", "where").split() if w.strip()]
    return roots


def top_level_names(roots: list[Path]) -> list[str]:
    """The top-level module names the roots hold (see the module docstring), sorted."""
    names: set[str] = set()
    for index, root in enumerate(roots):
        try:
            entries = list(os.scandir(root))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.endswith(".py") and entry.is_file() and name[:-3].isidentifier():
                names.add(name[:-3])
            elif entry.is_dir() and name.isidentifier():
                path = Path(entry.path)
                if (path / "__init__.py").is_file() or (index > 0 and any(path.glob("*.py"))):
                    names.add(name)
    return sorted(names)


def foreign_imports(modules: dict[str, object], copy_root: Path, names: set[str]) -> list[dict[str, str]]:
    """Every loaded module of the project (by top-level name) whose file lies outside ``copy_root``."""
    root = Path(copy_root).resolve()
    found = []
    for name, module in sorted(modules.items()):
        if name.split(".")[0] not in names or module is None:
            continue
        file = getattr(module, "__file__", None)
        if not file:
            continue
        try:
            path = Path(file).resolve()
        except OSError:
            continue
        if not path.is_relative_to(root):
            found.append({"module": name, "path": str(path)})
    return found


def project_names(tree: Path) -> tuple[str, ...]:
    """The project's top-level module names (those of ``import_roots``): what a fork server must never
    import, even from an installed copy of the project."""
    return tuple(top_level_names(import_roots(tree)))
