"""The project's seamgate settings: the ``[tool.seamgate]`` table of ``pyproject.toml``.

Unknown keys are refused (naming the key, the file and a close match), because a misspelt
setting that is silently ignored leaves the user believing it took effect.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import ConfigError
from harness.rows.time_limits import BASELINE_TIMEOUT
from mutations.shape import unknown_key_message

#: Set in a gate's environment by ``count_assertions: true`` (``harness/gates/gatefile.py``): that gate's runs
#: pass ``-o enable_assertion_pass_hook=true`` and count passing assertions. Off by default, because the
#: hook changes what tests see (a passing ``assert`` is formatted, its operands kept alive and repr'd).
COUNT_ASSERTIONS_ENV = "SEAMGATE_COUNT_ASSERTIONS"

#: ``sweep`` is the ``[tool.seamgate.sweep]`` table (``SweepSettings``).
_KEYS = ("gates", "catalog", "jobs", "evidence", "copy_include", "copy_exclude", "baseline_timeout", "sweep",
         "count_assertions")
_TABLE = re.compile(r"^\s*\[tool\.seamgate\]\s*(#.*)?$", re.MULTILINE)


#: The keys of ``[tool.seamgate.sweep]``.
_SWEEP_KEYS = ("paths", "tests", "equivalents")


@dataclass(frozen=True)
class SweepSettings:
    """``[tool.seamgate.sweep]``: what ``seamgate sweep`` reads when its command line does not say."""

    #: What it mutates with no PATHS.
    paths: tuple[str, ...] = ("seam",)
    #: The pytest selection (empty: pytest's own testpaths).
    tests: tuple[str, ...] = ()
    #: Reviewed equivalent mutants (``None``: none).
    equivalents: str | None = None


@dataclass(frozen=True)
class Config:
    """Settings with their defaults; paths are relative to the project root."""

    #: Gate files or folders ``seamgate run``/``validate`` read when none are named.
    gates: tuple[str, ...] = ("gates",)
    #: Mutation catalog files or folders.
    catalog: tuple[str, ...] = ("mutations/catalog",)
    #: Parallel runs when ``--jobs`` is not given.
    jobs: int = 1
    #: JSON reports measured on other machines (``harness/results/evidence.py``): OWED arms look there.
    evidence: tuple[str, ...] = ("evidence",)
    #: Glob patterns of files every copy holds even when git ignores them (a generated ``_version.py``).
    copy_include: tuple[str, ...] = ()
    #: Glob patterns of files (or folders) no copy holds (``harness/project_copy.py`` says what a copy is).
    copy_exclude: tuple[str, ...] = ()
    #: Seconds a baseline run may take before it is killed and read TIMEOUT (``docs/runner.md``); when every
    #: gate reading a baseline sets its own ``timeout``, the largest of those applies instead
    #: (``harness/rows/time_limits.py``).
    baseline_timeout: float = BASELINE_TIMEOUT
    #: Every gate counts passing assertions unless it says ``count_assertions: false`` (default off:
    #: ``COUNT_ASSERTIONS_ENV``).
    count_assertions: bool = False
    #: ``[tool.seamgate.sweep]``.
    sweep: SweepSettings = SweepSettings()
    #: The file the settings came from (``None``: defaults, no ``[tool.seamgate]`` table).
    source: str | None = None

    def gate_paths(self, project_root: Path) -> list[Path]:
        return [project_root / p for p in self.gates]

    def catalog_paths(self, project_root: Path) -> list[Path]:
        return [project_root / p for p in self.catalog]


def has_seamgate_table(pyproject: Path) -> bool:
    """True when ``pyproject`` exists and has a ``[tool.seamgate]`` table (a cheap text check)."""
    try:
        return bool(_TABLE.search(pyproject.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError):
        return False


def find_project(start: Path) -> Path:
    """The nearest folder at or above ``start`` whose pyproject.toml has ``[tool.seamgate]``, else ``start``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if has_seamgate_table(folder / "pyproject.toml"):
            return folder
    return start


def load_config(project_root: Path) -> Config:
    """The settings of ``project_root``; ``ConfigError`` for a bad table, defaults when absent."""
    path = project_root / "pyproject.toml"
    if not path.is_file():
        return Config()
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}; fix the syntax") from None
    table = data.get("tool", {}).get("seamgate")
    if table is None:
        return Config()
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.seamgate] must be a table")
    return _from_table(table, path, text)


def _from_table(table: dict[str, Any], path: Path, text: str) -> Config:
    problems = [f"{_where(path, text, key)}: [tool.seamgate]: {unknown_key_message(key, _KEYS)}"
                for key in table if key not in _KEYS]
    gates = _paths(table, "gates", path, text, problems, Config.gates)
    catalog = _paths(table, "catalog", path, text, problems, Config.catalog)
    evidence = _paths(table, "evidence", path, text, problems, Config.evidence)
    jobs = table.get("jobs", Config.jobs)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        problems.append(f"{_where(path, text, 'jobs')}: [tool.seamgate]: 'jobs' must be an integer >= 1, got {jobs!r}")
    copy_include = _patterns(table, "copy_include", path, text, problems)
    copy_exclude = _patterns(table, "copy_exclude", path, text, problems)
    baseline_timeout = table.get("baseline_timeout", Config.baseline_timeout)
    if isinstance(baseline_timeout, bool) or not isinstance(baseline_timeout, (int, float)) \
            or not 0 < baseline_timeout < float("inf"):
        problems.append(f"{_where(path, text, 'baseline_timeout')}: [tool.seamgate]: 'baseline_timeout' must be a "
                        f"finite number of seconds > 0, got {baseline_timeout!r}; write e.g. baseline_timeout = 600")
    count_assertions = table.get("count_assertions", Config.count_assertions)
    if not isinstance(count_assertions, bool):
        problems.append(f"{_where(path, text, 'count_assertions')}: [tool.seamgate]: 'count_assertions' must be "
                        f"true or false, got {count_assertions!r}")
    sweep = _sweep_settings(table.get("sweep", {}), path, problems)
    if problems:
        raise ConfigError("\n".join(problems))
    return Config(gates=gates, catalog=catalog, jobs=jobs, evidence=evidence, copy_include=copy_include,
                  copy_exclude=copy_exclude, baseline_timeout=float(baseline_timeout),
                  count_assertions=count_assertions, sweep=sweep, source=str(path))


def _sweep_settings(table: Any, path: Path, problems: list[str]) -> SweepSettings:
    """``[tool.seamgate.sweep]``, checked: each problem joins ``problems``, naming the file and the key
    (the defaults stand in for a bad value, so every problem is found in one read)."""
    if not isinstance(table, dict):
        problems.append(f"{path}: [tool.seamgate] sweep must be a table ([tool.seamgate.sweep])")
        return SweepSettings()
    unknown = sorted(set(table) - set(_SWEEP_KEYS))
    if unknown:
        problems.append(f"{path}: [tool.seamgate.sweep]: unknown key(s) {', '.join(unknown)}; "
                        f"known: {', '.join(_SWEEP_KEYS)}")
    lists = {}
    for key in ("paths", "tests"):
        default = tuple(getattr(SweepSettings, key))
        value = table.get(key, list(default))
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            problems.append(f"{path}: [tool.seamgate.sweep]: {key!r} must be a list of paths, got {value!r}")
            value = default
        lists[key] = tuple(value)
    equivalents = table.get("equivalents")
    if equivalents is not None and (not isinstance(equivalents, str) or not equivalents):
        problems.append(f"{path}: [tool.seamgate.sweep]: 'equivalents' must be a path, got {equivalents!r}")
        equivalents = None
    return SweepSettings(paths=lists["paths"], tests=lists["tests"], equivalents=equivalents)


def _patterns(table: dict[str, Any], key: str, path: Path, text: str, problems: list[str]) -> tuple[str, ...]:
    """A list of glob patterns relative to the project: no absolute path, no '..'."""
    value = _paths(table, key, path, text, problems, ())
    for pattern in value:
        if pattern.startswith(("/", "\\")) or ".." in pattern.replace("\\", "/").split("/"):
            problems.append(f"{_where(path, text, key)}: [tool.seamgate]: {key!r} pattern {pattern!r} must be "
                            "relative to the project, without '..' (e.g. 'src/pkg/_version.py')")
    return value


def _paths(table: dict[str, Any], key: str, path: Path, text: str, problems: list[str],
           default: tuple[str, ...]) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(f"{_where(path, text, key)}: [tool.seamgate]: {key!r} must be a list of paths "
                        f"(strings), got {value!r}")
        return default
    return tuple(value)


def _where(path: Path, text: str, key: str) -> str:
    """``path:line`` of ``key = ...`` inside the table when it can be found, else ``path``."""
    table = _TABLE.search(text)
    if table is None:
        return str(path)
    found = re.compile(rf"^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", re.MULTILINE).search(text, table.end())
    return f"{path}:{text.count(chr(10), 0, found.start()) + 1}" if found else str(path)
