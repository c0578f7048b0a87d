"""Three small real-layout projects written by the tests, each with one named mutation and its known red set.

- ``srcpkg``: src layout configured in pyproject (``package-dir = {"" = "src"}``), installed EDITABLE
  into a temporary venv (a real ``pip install -e --no-build-isolation --no-deps``; setuptools then
  writes ``__editable__.rw_srcpkg-0.1.pth`` holding the ORIGINAL ``src/`` path);
- ``flatpkg``: flat layout, ``filterwarnings = error`` and ``pythonpath = ["."]`` in its pytest settings
  (without it the project's own ``pytest`` cannot import ``flatpkg``, and seamgate says so: issue 27);
- ``cfgpkg``: packages under ``lib/``, configured in setup.cfg (``[options] package_dir = =lib``), with
  ``pythonpath = ["lib"]`` for its own ``pytest``.

The temporary venv is made with ``--system-site-packages`` from the interpreter running the tests; a
``.pth`` file in it runs ``site.addsitedir`` on that interpreter's own site-packages (a venv made from
a venv sees the BASE interpreter's packages, not the outer venv's), so seamgate and pytest are found.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin:/usr/local/bin"}

_TESTS = (
    "from {pkg}.core import add, scale\n\n\n"
    "def test_add_small():\n    assert add(1, 2) == 3\n\n\n"
    "def test_add_negative():\n    assert add(-1, -2) == -3\n\n\n"
    "def test_scale():\n    assert scale(2, 3) == 6\n"
)
_CORE = "def add(a, b):\n    return a + b\n\n\ndef scale(x, k):\n    return x * k\n"
_CATALOG = (
    "version: 1\nmutations:\n"
    "  - id: add-subtracts\n    title: add subtracts\n    target: {target}\n"
    "    replace: {{old: \"return a + b\", new: \"return a - b\"}}\n"
)
_GATE = (
    "version: 1\ngates:\n"
    "  - id: add-rule\n    kind: rule\n    title: add-subtracts reds the two add tests only\n"
    "    source: {mutation: add-subtracts}\n    select: [tests]\n    arms: [cpu-emulated]\n"
    "    expect:\n      red:\n        nodeids:\n"
    "          - tests/test_core.py::test_add_small\n          - tests/test_core.py::test_add_negative\n"
    "      counts: {failed: 2}\n"
)
#: The red set every project's gate states (and ``seamgate run`` must find exactly).
RED = ["tests/test_core.py::test_add_negative", "tests/test_core.py::test_add_small"]
_SEAMGATE = "\n[tool.seamgate]\ngates = [\"gates\"]\ncatalog = [\"mutations\"]\n"

PROJECTS: dict[str, dict[str, str]] = {
    "srcpkg": {
        "pyproject.toml": (
            "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n"
            "[project]\nname = \"rw-srcpkg\"\nversion = \"0.1\"\n\n"
            "[tool.setuptools]\npackage-dir = {\"\" = \"src\"}\n\n"
            "[tool.setuptools.packages.find]\nwhere = [\"src\"]\n" + _SEAMGATE
        ),
        "src/srcpkg/__init__.py": "",
        "src/srcpkg/core.py": _CORE,
        "tests/test_core.py": _TESTS.format(pkg="srcpkg"),
        "mutations/catalog.yaml": _CATALOG.format(target="src/srcpkg/core.py"),
        "gates/rule.yaml": _GATE,
    },
    "flatpkg": {
        "pyproject.toml": (
            "[project]\nname = \"rw-flatpkg\"\nversion = \"0.1\"\n\n"
            "[tool.pytest.ini_options]\nfilterwarnings = [\"error\"]\npythonpath = [\".\"]\n" + _SEAMGATE
        ),
        "flatpkg/__init__.py": "",
        "flatpkg/core.py": _CORE,
        "tests/test_core.py": _TESTS.format(pkg="flatpkg"),
        "mutations/catalog.yaml": _CATALOG.format(target="flatpkg/core.py"),
        "gates/rule.yaml": _GATE,
    },
    "cfgpkg": {
        "pyproject.toml": "[tool.pytest.ini_options]\npythonpath = [\"lib\"]\n" + _SEAMGATE,
        "setup.cfg": "[metadata]\nname = rw-cfgpkg\nversion = 0.1\n\n[options]\npackage_dir =\n    =lib\n"
                     "packages = find:\n\n[options.packages.find]\nwhere = lib\n",
        "lib/cfgpkg/__init__.py": "",
        "lib/cfgpkg/core.py": _CORE,
        "tests/test_core.py": _TESTS.format(pkg="cfgpkg"),
        "mutations/catalog.yaml": _CATALOG.format(target="lib/cfgpkg/core.py"),
        "gates/rule.yaml": _GATE,
    },
}


def write(root: Path, name: str) -> Path:
    """Write project ``name`` under ``root`` as a git repository with one commit; returns its folder."""
    folder = root / name
    for rel, text in PROJECTS[name].items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env={**GIT_ENV, "HOME": str(root)})
    return folder


#: A ``.pth`` line that makes ``import torch`` fail as if torch were not installed (imports stay offline).
HIDE_TORCH = ("import sys; sys.meta_path.insert(0, type('NoTorch', (), {'find_spec': staticmethod(lambda name, "
              "path=None, target=None: (_ for _ in ()).throw(ModuleNotFoundError(\"No module named 'torch'\", "
              "name=name)) if name.split('.')[0] == 'torch' else None)})())\n")


def make_venv(where: Path, *, without_torch: bool = False) -> Path:
    """A venv that sees this interpreter's packages (torch hidden when asked); returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(where)],
                   check=True, capture_output=True)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    outer = [p for p in site.getsitepackages() if Path(p).is_dir()] or [sysconfig.get_paths()["purelib"]]
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in outer)
    Path(purelib, "_outer_site.pth").write_text(lines)
    if without_torch:
        Path(purelib, "_hide_torch.pth").write_text(HIDE_TORCH)
    return python


def install_editable(python: Path, project: Path) -> str:
    """``pip install -e`` of ``project`` into ``python``'s venv (offline); returns pip's output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON"))}
    done = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                           "--no-index", "-e", str(project)], capture_output=True, text=True, env=env, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f"pip install -e failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout + done.stderr


#: Red-first with a test that imports the feature it tests: commit 1 has ``old_function`` only; commit 2
#: adds ``new_function`` and ``tests/test_new.py`` (``from featpkg import new_function``), which cannot
#: even be collected against commit 1. The gate lays the new test over ``HEAD~1``.
FEATURE_OLD = {
    "pyproject.toml": ("[project]\nname = \"rw-featpkg\"\nversion = \"0.1\"\n\n[tool.pytest.ini_options]\n"
                       "pythonpath = [\".\"]\n" + _SEAMGATE),
    "featpkg/__init__.py": "def old_function(x):\n    return x + 1\n",
    "tests/test_old.py": "from featpkg import old_function\n\n\ndef test_old():\n    assert old_function(1) == 2\n",
    "mutations/catalog.yaml": "version: 1\nmutations: []\n",
}
FEATURE_NEW = {
    "featpkg/__init__.py": FEATURE_OLD["featpkg/__init__.py"] + "\n\ndef new_function(x):\n    return x * 2\n",
    "tests/test_new.py": (
        "from featpkg import new_function\n\n\n"
        "def test_doubles():\n    assert new_function(2) == 4\n\n\n"
        "def test_zero():\n    assert new_function(0) == 0\n"
    ),
}
#: The red-first gate; ``{extra}`` is where ``collection_errors_are_red`` goes.
FEATURE_GATE = (
    "version: 1\ngates:\n"
    "  - id: new-function-red-first\n    kind: red-first\n    title: test_new.py is red against HEAD~1, green now\n"
    "    source: {{ref: HEAD~1, overlay: [tests/test_new.py]}}\n    select: [tests/test_new.py]\n"
    "{extra}"
    "    expect:\n      red: {{files: [tests/test_new.py]}}\n      counts: {{cases: 2, passed: 0, failed: 2}}\n"
    "      green_after: true\n"
)
FEATURE_RED = ["tests/test_new.py::test_doubles", "tests/test_new.py::test_zero"]


def write_feature(root: Path, extra: str = "") -> Path:
    """The two-commit ``featpkg`` repository (the gate file with ``extra`` in the second commit)."""
    folder = root / "featpkg"
    env = {**GIT_ENV, "HOME": str(root)}
    for number, files in enumerate((FEATURE_OLD, {**FEATURE_NEW, "gates/red_first.yaml": FEATURE_GATE.format(extra=extra)})):
        for rel, text in files.items():
            path = folder / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        steps = ([["init", "-q"]] if number == 0 else []) + [["add", "-A"], ["commit", "-qm", f"commit {number + 1}"]]
        for args in steps:
            subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env=env)
    return folder
