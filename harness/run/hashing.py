"""A run's hashes: the project's files, the code under test, each gate arm's inputs and the commit, each read once.

Kept rows are checked against the file hashes (``harness/results/reuse.py``), evidence and a PASS's
provenance against the gate's hash (``harness/results/evidence.py``). Many threads of one run ask for
them; each is computed by the first and shared.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.gates.model import Gate
from harness.results.evidence import gate_hash
from harness.results.platforms import code_under_test, git_commit, hash_code_under_test
from harness.results.reuse import file_hashes


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

    def gate_hash(self, gate: Gate, arm: str) -> str:
        """sha256 of what ``gate``'s verdict depends on (``harness.results.evidence.gate_hash``): code under
        test, the gate, its selected test files, its mutation's catalog entry. Once per gate and arm."""
        self.code_hash()  # refuses a project with no code under test (EmptyHashError), once per invocation
        with self.guard:
            key = f"{gate.id}\0{arm}"
            if key not in self._gate_hashes:
                mutation = None
                catalog = getattr(self.materializer, "catalog", None)
                if gate.source.kind == "mutation" and gate.source.mutation and catalog is not None:
                    with contextlib.suppress(KeyError):  # an unknown id is the gate's ERROR, judged elsewhere
                        mutation = catalog.get(gate.source.mutation)
                # The record of ONE arm: the gate as judged for that arm alone, so a GPU machine's run with
                # `--arm cuda` (which drops the other arms) hashes the same gate as this one does.
                self._gate_hashes[key] = gate_hash(self.project, replace(gate, arms=(arm,)), mutation,
                                                   self._code_files(), read=self._read_once)
            return self._gate_hashes[key]

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
