"""A run's hashes: the project's files, the code under test, each gate arm's inputs and the commit, each read once.

Kept rows are checked against the file hashes (``harness/results/reuse.py``), evidence and a PASS's
provenance against the gate's hash (``harness/results/evidence.py``) over the files the gate's cases
reached (``reached_files``). Many threads of one run ask for them; each is computed by the first and shared.
"""

from __future__ import annotations

import ast
import contextlib
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

from harness.gates.model import Gate
from harness.reach.bodies import function_bodies
from harness.reach.reach import Reach
from harness.results.evidence import evidence_hash, gate_hash
from harness.results.platforms import code_under_test, git_commit, hash_code_under_test
from harness.results.reuse import file_hashes, files_read
from harness.results.source_hash import SourceReader
from mutations.model import Mutation
from reports.outcome import Provenance


class RunHashes:
    """The hashes of one run's project, each computed once (thread-safe)."""

    def __init__(self, project: Path, materializer: Any) -> None:
        self.project = project
        #: The materializer's catalog names a mutation gate's entry (``None``: no catalog).
        self.materializer = materializer
        self.guard = threading.Lock()
        self._hashes: dict[str, str] | None = None
        self._code_hash: str | None = None
        self._gate_hashes: dict[str, str] = {}
        self._code_list: list[str] | None = None
        self._bytes: dict[Path, bytes] = {}
        #: Each project file's two readings without comments (``harness/results/source_hash.py``).
        self.reader = SourceReader(project)
        self._body_spans: dict[str, list[tuple[int, int]] | None] = {}
        self._commit: str | None = None

    def hashes(self) -> dict[str, str]:
        """sha256 of every project file, by relative path."""
        with self.guard:
            if self._hashes is None:
                self._hashes = file_hashes(self.project)
            return self._hashes

    def code_hash(self) -> str:
        """sha256 of the code under test, read once per invocation (evidence is checked against it)."""
        with self.guard:
            if self._code_hash is None:
                self._code_hash = hash_code_under_test(self.project)
            return self._code_hash

    def measured(self, gate: Gate, arm: str, reached: list[str] | None) -> tuple[str, tuple[str, ...]]:
        """The evidence hash of a verdict measured here (``harness.results.evidence.evidence_hash``), and the
        files it read in full. ``reached``: the project files the gate's cases ran (``reached_files``);
        ``None`` (unknown): every code file is read in full."""
        self.code_hash()  # refuses a project with no code under test (EmptyHashError), once per invocation
        mutation = self._mutation(gate)
        hashed = self._code_files() if reached is None else \
            sorted(set(reached) | ({mutation.target} if mutation is not None else set()))
        with self.guard:
            return evidence_hash(self.project, self._one_arm(gate, arm), mutation, hashed, self._code_files(),
                                 reader=self.reader)

    def current(self, gate: Gate, arm: str) -> Callable[[Provenance], str]:
        """This tree's hash over what a record of ``gate`` and ``arm`` hashed: the files it lists, or (a record
        with no list) every code file byte for byte (``gate_hash``). Each computed once."""
        self.code_hash()

        def of(record: Provenance) -> str:
            key = f"{gate.id}\0{arm}\0" + ("\0".join(record.hashed_files) if record.hashed_files is not None else "*")
            with self.guard:
                if key not in self._gate_hashes:
                    one, mutation = self._one_arm(gate, arm), self._mutation(gate)
                    self._gate_hashes[key] = (
                        gate_hash(self.project, one, mutation, self._code_files(), read=self._read_once)
                        if record.hashed_files is None else
                        evidence_hash(self.project, one, mutation, record.hashed_files, self._code_files(),
                                      reader=self.reader)[0])
                return self._gate_hashes[key]
        return of

    def _mutation(self, gate: Gate) -> Mutation | None:
        """The catalog entry of a mutation gate (``None``: another kind, or no catalog)."""
        catalog = getattr(self.materializer, "catalog", None)
        if gate.source.kind == "mutation" and gate.source.mutation and catalog is not None:
            with contextlib.suppress(KeyError):  # an unknown id is the gate's ERROR, judged elsewhere
                return catalog.get(gate.source.mutation)
        return None

    @staticmethod
    def _one_arm(gate: Gate, arm: str) -> Gate:
        # The record of ONE arm: the gate as judged for that arm alone, so a GPU machine's run with
        # `--arm cuda` (which drops the other arms) hashes the same gate as this one does.
        return replace(gate, arms=(arm,))

    def reached(self, reach: Reach | None, case_ids: Iterable[str], select: Iterable[str]) -> list[str] | None:
        """``reached_files`` of this project, the function bodies of each file parsed once."""
        return reached_files(self.project, reach, case_ids, select, self._bodies)

    def _bodies(self, rel: str) -> list[tuple[int, int]] | None:
        with self.guard:
            if rel not in self._body_spans:
                try:
                    self._body_spans[rel] = function_bodies(ast.parse((self.project / rel).read_bytes()))
                except (OSError, SyntaxError, ValueError):
                    self._body_spans[rel] = None
            return self._body_spans[rel]

    def _code_files(self) -> list[str]:
        if self._code_list is None:
            self._code_list = code_under_test(self.project)
        return self._code_list

    def _read_once(self, path: Path) -> bytes:
        """A file's bytes, read once per invocation (every gate and arm hashes the same code files)."""
        if path not in self._bytes:
            self._bytes[path] = path.read_bytes()
        return self._bytes[path]

    def commit(self) -> str:
        with self.guard:
            if self._commit is None:
                self._commit = git_commit(self.project)
            return self._commit


def reached_files(project: Path, reach: Reach | None, case_ids: Iterable[str], select: Iterable[str],
                  bodies: Callable[[str], list[tuple[int, int]] | None]) -> list[str] | None:
    """The project's Python files the cases ``case_ids`` ran a line of, themselves, through a fixture they
    use or in a measured child (``harness.results.reuse.files_read``), with every file a function body of
    which ran at import or collection (its result can be any module's state). ``None``: unknown (no reach
    recorded, no case, or a case whose reach is unknown). ``bodies(rel)``: the file's function bodies
    (``None``: it does not parse, so every line counts)."""
    ids = list(case_ids)
    if reach is None or not ids:
        return None
    files = files_read(reach, ids, {}, select)
    if files is None:
        return None
    for rel, by_context in reach.files.items():
        spans = bodies(rel) if by_context.get("") else []
        if spans is None or any(first <= line <= last for line in by_context.get("", ()) for first, last in spans):
            files.add(rel)
    return sorted(rel for rel in files if rel.endswith(".py") and (project / rel).is_file()
                  and "__pycache__" not in rel and not any(part.startswith(".") for part in rel.split("/")))
