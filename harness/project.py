"""The project a command works on: its root, its settings, its catalog and its gate files.

These lookups used to live in the CLI, which made ``harness.run.runner`` import ``harness.cli.main`` back;
both now import this module instead. A folder named with ``--project`` must BE a seamgate project
(its ``pyproject.toml`` has a ``[tool.seamgate]`` table): ``--project /etc`` is refused before
anything is written there (no ``.seamgate/run.lock``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from harness.config import Config, find_project, has_seamgate_table, load_config
from harness.errors import CommandLineError
from mutations.catalog import load_catalog
from mutations.model import Catalog


@dataclass(frozen=True)
class Project:
    """A project root and its ``[tool.seamgate]`` settings."""

    root: Path
    config: Config

    @classmethod
    def locate(cls, option: Path | None, cwd: Path | None = None) -> Project:
        """``--project DIR`` (which must be a seamgate project), else the nearest one upwards."""
        if option is None:
            root = find_project(cwd or Path.cwd())
            return cls(root, load_config(root))
        root = option.resolve()
        if not root.is_dir():
            what = "no such folder" if not root.exists() else \
                f"{root} is a file, not a folder; --project names the project's root folder (the one holding " \
                "pyproject.toml), e.g. --project ."
            raise CommandLineError(f"--project {option}: {what}")
        if not has_seamgate_table(root / "pyproject.toml"):
            raise CommandLineError(
                f"--project {option}: not a seamgate project: {root / 'pyproject.toml'} has no [tool.seamgate] "
                "table; point --project at the project root, or add a `[tool.seamgate]` line to its "
                "pyproject.toml (an empty table takes the defaults); nothing was written there")
        return cls(root, load_config(root))

    def catalog(self) -> Catalog:
        """The project's catalog; a default catalog folder that does not exist is an empty catalog."""
        paths = self.config.catalog_paths(self.root)
        if self.config.catalog == Config.catalog:
            paths = [p for p in paths if p.exists()]
        return load_catalog(paths, project_root=self.root)

    def gate_paths(self, named: Sequence[Path] = (), cwd: Path | None = None) -> list[Path]:
        """Named gate files (relative to the current folder), else the configured ones.

        A default ``gates/`` folder that does not exist means no gates; a configured or named path
        that does not exist is an error of the loader.
        """
        if named:
            base = cwd or Path.cwd()
            return [p if p.is_absolute() else base / p for p in named]
        paths = self.config.gate_paths(self.root)
        return [p for p in paths if p.exists()] if self.config.gates == Config.gates else paths

    def why_no_gate_files(self, named: Sequence[Path] = ()) -> str:
        """Why ``gate_paths`` is empty, said so a user knows what to write."""
        if named:
            return "the named gate files hold no gates"
        if not self.config.gates:
            return (f"[tool.seamgate] gates = [] in {self.config.source or 'pyproject.toml'} names no gate file; "
                    "list gate files or folders there (default: gates)")
        return (f"no gate files: {self.root / 'gates'} does not exist; write gates/*.yaml "
                "(docs/gates.md) or name gate files on the command line")
