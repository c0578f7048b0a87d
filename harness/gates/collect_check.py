"""``seamgate validate --collect``: every node id a gate names must be one pytest collects, checked before a run.

The validator checks that a ``select`` entry's FILE exists; a node id inside it (``tests/x.py::test_y``)
and an expected red node id (``expect.red.nodeids``) are only known to pytest. This runs pytest's
``--collect-only`` once, in a child process, on a copy of the working tree (no bytecode written, no cache),
over every file the gates name, with ``SEAM_ARMS`` set to every arm the gates list (so ``[cuda]`` and
``[rocm]`` parametrizations exist), and names each node id that was not collected with the
``file:line:col`` of its YAML entry. An entry matches a collected id equal to it, or one it is a
prefix of (``tests/x.py::TestC`` matches ``tests/x.py::TestC::test_a``, ``test_f`` matches
``test_f[cpu-emulated]``); ``{arm}`` in an expected id stands for each arm of its gate.

Exit codes: a node id that does not exist is the gate file's mistake, ``USAGE_ERROR`` (2); a test
file pytest cannot collect at all (an import error on the working tree) is ``GATE_ERROR`` (3), its
node ids unchecked. Both name every problem at once.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Sequence

from harness.errors import GateFileError
from harness.exit_codes import ExitCode
from harness.gates.model import Gate
from harness.project_copy import materialize
from mutations.catalog import catalog_files, display_path
from mutations.document import DocumentError, Node, read_document
from reports.outcome import RunOutcome

#: Seconds the collecting child may take.
COLLECT_TIMEOUT = 600.0


@dataclass(frozen=True)
class Entry:
    """One node id written in a gate file, and where."""

    gate: str
    key: str
    value: str
    where: str


class CollectionProblems(GateFileError):
    """Node ids pytest does not collect (``USAGE_ERROR``), or files it cannot collect (``GATE_ERROR``)."""

    def __init__(self, problems: Sequence[str], code: ExitCode) -> None:
        super().__init__(problems)
        self.exit_code = code


def located_entries(paths: Sequence[Path], project_root: Path) -> list[Entry]:
    """Every ``select`` entry and expected red node id of the gate files, with its ``file:line:col``."""
    entries: list[Entry] = []
    for path in catalog_files(paths):
        display = display_path(path, project_root)
        try:
            root = read_document(path, display)
        except DocumentError:
            continue  # the loader reported it already
        gates = root.value.get("gates") if root is not None and root.is_mapping else None
        for gate in gates.value if gates is not None and gates.is_sequence else []:
            fields = gate.value if gate.is_mapping else {}
            gate_id = fields["id"].value if "id" in fields else "?"
            entries += _items(fields.get("select"), gate_id, "select", display)
            red = _child(_child(fields.get("expect"), "red"), "nodeids")
            entries += _items(red, gate_id, "expect.red.nodeids", display)
    return entries


def _child(node: Node | None, key: str) -> Node | None:
    return node.value.get(key) if node is not None and node.is_mapping else None


def _items(node: Node | None, gate: str, key: str, display: str) -> list[Entry]:
    if node is None or not node.is_sequence:
        return []
    return [Entry(gate, key, item.value, f"{display}:{item.line}:{item.column}")
            for item in node.value if isinstance(item.value, str)]


def collection_errors(stdout: str) -> dict[str, str]:
    """File -> why pytest could not collect it, read from a ``--collect-only -q`` report: the short
    ``ERROR file - reason`` lines, replaced by the ``E`` lines of the file's ``ERROR collecting`` section
    where there is one (the last 400 characters)."""
    errors = {m.group(1): (m.group(2) or "").strip() for m in re.finditer(r"(?m)^ERROR (\S+)(?: - (.*))?$", stdout)
              if "::" not in m.group(1)}
    for section in re.finditer(r"(?ms)^_+ ERROR collecting (\S+) _+$(.*?)(?=^_{3,} |^={3,} )", stdout):
        lines = [line[1:].strip() for line in section.group(2).splitlines() if line.startswith("E ")]
        if lines:
            errors[section.group(1)] = " ".join(lines)[-400:]
    return errors


def collect(project_root: Path, files: Sequence[str], arms: Sequence[str]) -> tuple[set[str], dict[str, str], str]:
    """pytest ``--collect-only -q`` of ``files`` in a child: (node ids, file -> collection error, output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONDONTWRITEBYTECODE="1", SEAM_ARMS=",".join(arms))
    # On a COPY of the project, as every run is: a plugin of the user's environment may write into the
    # folder pytest runs in (pytest-benchmark makes `.benchmarks/` at start-up), and the user's tree is
    # never to be left modified.
    with tempfile.TemporaryDirectory(prefix="seamgate-collect-") as scratch:
        tree = materialize(project_root, Path(scratch) / "tree", None)
        done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                               "-o", "addopts=", "--continue-on-collection-errors", "--", *files],
                              cwd=tree, env=env, capture_output=True, text=True, timeout=COLLECT_TIMEOUT,
                              stdin=subprocess.DEVNULL)
    ids = {line.strip() for line in done.stdout.splitlines() if "::" in line and not line.startswith(("ERROR", " "))}
    errors = collection_errors(done.stdout)
    if not ids and done.returncode not in (0, 1, 2, 5):
        errors.setdefault("(pytest)", f"exit {done.returncode}: " + (done.stderr or done.stdout).strip()[-400:])
    return ids, errors, done.stdout + done.stderr


def users_collection_errors(tree: Path, files: Sequence[str]) -> dict[str, str]:
    """What the user's own plain ``pytest`` cannot collect of ``files``, run in ``tree`` (a copy): file -> error.

    As the user's ``pytest`` console script runs: ``python -P`` (the current folder is NOT put on
    ``sys.path``, as ``python -m pytest`` would), the user's rootdir, ini (``pythonpath``, ``addopts``,
    plugins), ``conftest.py`` and ``PYTHONPATH``, and none of seamgate's import roots. ``addopts`` that
    pytest refuses under ``--collect-only`` (exit 4) are dropped for a second try. ``(pytest)`` names
    a session that could not start at all (a conftest that cannot be imported).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SEAMGATE_", "PYTEST_XDIST"))}
    env.update(PYTHONDONTWRITEBYTECODE="1")
    base = [sys.executable, "-P", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
            "--continue-on-collection-errors"]
    def collect_only(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *extra, "--", *files], cwd=tree, env=env, capture_output=True, text=True,
                              timeout=COLLECT_TIMEOUT, stdin=subprocess.DEVNULL)

    try:
        done = collect_only()
        if done.returncode == 4:
            done = collect_only("-o", "addopts=")
    except subprocess.TimeoutExpired:
        return {"(pytest)": f"--collect-only took over {COLLECT_TIMEOUT:g} s"}
    errors = collection_errors(done.stdout)
    if done.returncode in (3, 4) or (done.returncode not in (0, 1, 2, 5) and not errors):
        errors.setdefault("(pytest)", f"exit {done.returncode}: " + (done.stderr or done.stdout).strip()[-400:])
    return errors


def _found(entry: str, ids: set[str]) -> bool:
    return entry in ids or any(i.startswith((entry + "::", entry + "[")) for i in ids)


def _not_collected(entry: Entry, value: str, ids: set[str]) -> str:
    """The problem line for ``value`` (of ``entry``) that pytest did not collect, with the nearest collected ids."""
    file_part = value.split("::", 1)[0]
    near = nearest(value, ids)
    hint = f" (collected in {file_part}: {', '.join(near)}{', ...' if len(near) == 3 else ''})" if near \
        else f" (pytest collects nothing in {file_part})"
    return (f"{entry.where}: gate {entry.gate!r}: {entry.key} entry {value!r} is not a node id "
            f"pytest collects{hint}; fix the id, or remove the entry")


def nearest(value: str, ids: set[str], n: int = 3) -> list[str]:
    """Up to ``n`` collected ids of ``value``'s file, the most alike first (a typo's likely meaning)."""
    file_part = value.split("::", 1)[0]
    same_file = sorted(i for i in ids if i.startswith(file_part + "::"))
    close = difflib.get_close_matches(value, same_file, n=n, cutoff=0.0)
    return close or same_file[:n]


def check_against_baselines(gates_runs: Sequence[tuple[Gate, str, RunOutcome]], project_root: Path,
                            flaky: Collection[str] = ()) -> None:
    """Raise ``CollectionProblems`` (``USAGE_ERROR``) for each node id a gate names that its baseline did not collect.

    ``seamgate run``'s check, from the baselines it ran anyway (no extra pytest session): for each gate
    and arm, every ``select`` node id and expected red node id (``{arm}`` read as that arm) must be, or
    prefix, a case of the baseline. An id in a file the baseline could not collect (a collection error)
    is left to the run, which reports that error; a baseline that did not complete is left to the
    baseline-red report. The baselines' ``flaky`` cases, left out of their outcomes, were collected: a gate
    naming one is judged (an error that says it is flaky), not told its id does not exist.
    """
    problems: list[str] = []
    located: dict[str, list[Entry]] = {}
    for gate, arm, run in gates_runs:
        if run.end != "completed":
            continue
        file = Path(gate.origin.file)
        path = file if file.is_absolute() else project_root / file
        if str(path) not in located:
            located[str(path)] = located_entries([path], project_root) if path.is_file() else []
        ids = {c.nodeid for c in run.cases} | set(flaky)
        broken = {c.nodeid.split("::", 1)[0] for c in run.errors}
        for entry in located[str(path)]:
            if entry.gate != gate.id or "::" not in entry.value:
                continue
            value = entry.value.replace("{arm}", arm)
            if value.split("::", 1)[0] in broken or _found(value, ids):
                continue
            line = _not_collected(entry, value, ids)
            if line not in problems:
                problems.append(line)
    if problems:
        raise CollectionProblems(problems, ExitCode.USAGE_ERROR)


def check_collected(gates: Sequence[Gate], paths: Sequence[Path], project_root: Path) -> int:
    """Raise ``CollectionProblems`` naming every node id pytest does not collect; return how many ids were checked."""
    arms_of = {g.id: g.arms for g in gates}
    entries = [e for e in located_entries(paths, project_root) if "::" in e.value and e.gate in arms_of]
    files = sorted({e.value.split("::", 1)[0] for e in entries})
    if not files:
        return 0
    arms = list(dict.fromkeys(a for g in gates for a in g.arms))
    ids, errors, _ = collect(project_root, files, arms)
    missing: list[str] = []
    broken: list[str] = []
    for entry in entries:
        file_part = entry.value.split("::", 1)[0]
        if file_part in errors:
            broken.append(f"{entry.where}: gate {entry.gate!r}: {entry.key} entry {entry.value!r} cannot be checked: "
                          f"pytest cannot collect {file_part} on the working tree: {errors[file_part] or 'see pytest'}")
            continue
        wanted = [entry.value.replace("{arm}", arm) for arm in arms_of[entry.gate]] \
            if "{arm}" in entry.value else [entry.value]
        missing += [_not_collected(entry, value, ids) for value in wanted if not _found(value, ids)]
    if "(pytest)" in errors:
        broken.append(f"pytest --collect-only failed: {errors['(pytest)']}")
    if missing or broken:
        raise CollectionProblems(missing + broken, ExitCode.USAGE_ERROR if missing else ExitCode.GATE_ERROR)
    return len(entries)
