"""The hostile-input corpus: each bad input, the command that meets it, and what must happen.

A ``Case`` is data: files written on top of the fixture project (``project.BASE``), the CLI
arguments, the exit code and a regex the message must match. ``run_case`` writes the project into
a fresh folder, snapshots the tree, runs ``harness.cli.main.main`` in this process (these cases fail
before any test runs, so they are fast), snapshots again and returns an ``Observed``. The test
(``test_corpus.py``) and the table command (``python -m tests.reliability.table``) both drive
``CASES`` through ``run_case``; the slow fault cases live in ``faults.py``.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from harness.cli.main import main
from harness.exit_codes import ExitCode
from tests.reliability.project import Content, tree_changes, tree_snapshot, write_project

#: Extra work on the written project before the run (symlinks, huge files); may return a note.
Setup = Callable[[Path], None]
#: Extra proof after the run (e.g. a refused YAML tag did not execute); returns problems.
Proof = Callable[[Path], list[str]]


@dataclass(frozen=True)
class Case:
    """One bad input and the behaviour it must get."""

    #: Stable readable id (the table's first column, the test's parameter id).
    name: str
    #: What was tried, in a few words (the table's second column).
    input: str
    #: ``seamgate`` arguments (after ``--project DIR``).
    args: tuple[str, ...]
    #: The exit code it must get.
    code: ExitCode
    #: A regex the first line of the message (stderr, else stdout) must match.
    message: str
    #: Files written on top of ``project.BASE`` (``None`` removes a base file).
    files: Mapping[str, Content | None] = field(default_factory=dict)
    setup: Setup | None = None
    proof: Proof | None = None
    #: Where the message is: ``err`` (``seamgate: error: ...``) or ``out`` (``mutations check``'s table).
    stream: str = "err"


@dataclass(frozen=True)
class Observed:
    """What one case did: the table's row, and the facts the test asserts."""

    name: str
    input: str
    code: int
    #: The first non-empty line of stderr, else of stdout.
    first_line: str
    #: stdout and stderr together.
    output: str
    #: Paths added, removed or changed in the project tree (empty: byte-identical).
    changes: tuple[str, ...]
    #: Problems found by the case's own proof (e.g. a refused tag executed after all).
    proof_problems: tuple[str, ...] = ()

    @property
    def unchanged(self) -> bool:
        return not self.changes

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.output


def describe_code(code: int) -> str:
    """``2 (USAGE_ERROR)``; a negative status is the signal that killed the process."""
    if code < 0:
        import signal

        return f"{code} (killed by {signal.Signals(-code).name})"
    try:
        return f"{code} ({ExitCode(code).name})"
    except ValueError:
        return f"{code} (not an ExitCode)"


def first_line(*texts: str) -> str:
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def error_line(err: str, out: str) -> str:
    """The run's ``seamgate: error:`` line (progress lines come before it off a terminal), else the first line."""
    return next((line for line in err.splitlines() if line.startswith("seamgate: error:")), first_line(err, out))


def problems_of(case_code: int, case_message: str, seen: Observed, *, user_mistake: bool = True) -> list[str]:
    """Every way ``seen`` falls short of the expectation (empty: the case behaves)."""
    problems = []
    if seen.code != case_code:
        problems.append(f"exit {seen.code}, expected {describe_code(case_code)}")
    if not re.search(case_message, seen.first_line):
        problems.append(f"first line {seen.first_line!r} does not match {case_message!r}")
    if user_mistake and seen.traceback:
        problems.append("a traceback was printed for a user's mistake")
    if seen.changes:
        problems.append(f"the project tree changed: {', '.join(seen.changes)}")
    problems.extend(seen.proof_problems)
    return problems


@contextlib.contextmanager
def _inside(folder: Path):
    previous = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


def run_cli(project: Path, args: tuple[str, ...]) -> tuple[int, str, str]:
    """``seamgate --project PROJECT ARGS`` in this process, cwd = the project; (code, out, err)."""
    out, err = io.StringIO(), io.StringIO()
    with _inside(project), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["--project", str(project), *args])
    return code, out.getvalue(), err.getvalue()


def run_case(case: Case, workdir: Path) -> Observed:
    """Write the case's project under ``workdir``, run it, and report what happened."""
    project = write_project(workdir / "project", case.files)
    if case.setup is not None:
        case.setup(project)
    before = tree_snapshot(project)
    code, out, err = run_cli(project, case.args)
    changes = tuple(tree_changes(before, tree_snapshot(project)))
    proof = tuple(case.proof(project)) if case.proof is not None else ()
    line = first_line(out, err) if case.stream == "out" else first_line(err, out)
    return Observed(case.name, case.input, code, line, out + err, changes, proof)


# --------------------------------------------------------------------------------------------
# The cases
# --------------------------------------------------------------------------------------------

def _gate(body: str) -> str:
    """A gate file whose one gate is ``body`` (indented YAML lines of the gate mapping)."""
    return "version: 1\ngates:\n  - " + body.strip("\n").replace("\n", "\n    ") + "\n"


def _catalog(body: str) -> str:
    return "version: 1\nmutations:\n  - " + body.strip("\n").replace("\n", "\n    ") + "\n"


_RULE = 'id: g\nkind: rule\nsource: {mutation: mul-adds}\nselect: [tests]\nexpect: {red: {files: [tests/test_mul.py]}}'
#: Where the refused-tag cases would leave their mark if the tag were ever constructed.
TAG_MARKER = "tag-executed.marker"
#: A file outside the project that a symlinked target points at; it must stay untouched.
OUTSIDE = "outside.py"
_OUTSIDE_TEXT = "def secret():\n    return 42\n"


def _tag_gate(tag: str) -> Callable[[Path], None]:
    """Write a gate file whose value is an object-constructing tag that would create the marker."""
    def setup(project: Path) -> None:
        marker = project.parent / TAG_MARKER
        (project / "gates/g.yaml").write_text(
            "version: 1\ngates:\n  - id: g\n    kind: rule\n"
            f"    title: {tag} [\"touch {marker}\"]\n"
            "    source: {mutation: mul-adds}\n    select: [tests]\n")
    return setup


def _tag_did_not_run(project: Path) -> list[str]:
    marker = project.parent / TAG_MARKER
    return [f"the refused YAML tag executed: {marker} exists"] if marker.exists() else []


def _huge(project: Path) -> None:
    """A gate file just over the 1 MiB cap: valid YAML padded with a comment."""
    (project / "gates/g.yaml").write_text(GATE_OK_PADDED + "#" + "x" * (1 << 20) + "\n")


GATE_OK_PADDED = _gate(_RULE)


def _symlink_out(project: Path) -> None:
    outside = project.parent / OUTSIDE
    outside.write_text(_OUTSIDE_TEXT)
    (project / "calc/link.py").symlink_to(outside)


def _outside_untouched(project: Path) -> list[str]:
    outside = project.parent / OUTSIDE
    return [] if outside.read_text() == _OUTSIDE_TEXT else [f"{outside} (outside the project) was written"]


def _symlink_loop(project: Path) -> None:
    (project / "gates/g.yaml").unlink()
    os.symlink("g.yaml", project / "gates/g.yaml")


def _fifo(project: Path) -> None:
    (project / "gates/g.yaml").unlink()
    os.mkfifo(project / "gates/g.yaml")


def _dev_zero(project: Path) -> None:
    (project / "gates/g.yaml").unlink()
    os.symlink("/dev/zero", project / "gates/g.yaml")


def _second_gate_file(project: Path) -> None:
    (project / "gates/h.yaml").write_text(_gate(_RULE))
    (project / "gates/g.yaml").write_text(_gate(_RULE))


_FILE = r"gates/g\.yaml:\d+:\d+: "
_CAT = r"mutations/catalog/calc\.yaml:\d+:\d+: mutation 'm': "

GATE_FILE_CASES: tuple[Case, ...] = (
    Case("gate-not-yaml", "gate file with an unclosed `[`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"not valid YAML",
         {"gates/g.yaml": "version: 1\ngates: [\n  - id: g\n    kind: rule\n"}),
    Case("gate-not-mapping", "gate file that is a YAML list", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml:\d+:\d+: .*mapping", {"gates/g.yaml": "- id: g\n- id: h\n"}),
    Case("gate-unknown-key", "`expcet:` instead of `expect:`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': unknown key 'expcet' .*did you mean 'expect'",
         {"gates/g.yaml": _gate(_RULE.replace("expect:", "expcet:"))}),
    Case("gate-wrong-type", "`timeout: soon` (a string, not a number)", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': .*timeout",
         {"gates/g.yaml": _gate(_RULE + "\ntimeout: soon")}),
    Case("gate-timeout-inf", "`timeout: .inf` (used to be accepted: no time limit at all)", ("validate",),
         ExitCode.USAGE_ERROR, _FILE + r"gate 'g': 'timeout' must be a number of seconds > 0 \(finite\), got inf, which "
         r"is no limit at all; write e\.g\. `timeout: 600`", {"gates/g.yaml": _gate(_RULE + "\ntimeout: .inf")}),
    Case("gate-timeout-nan", "`timeout: .nan`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': 'timeout' must be a number of seconds > 0 \(finite\), got nan, not a number",
         {"gates/g.yaml": _gate(_RULE + "\ntimeout: .nan")}),
    Case("gate-timeout-zero", "`timeout: 0`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': 'timeout' must be a number of seconds > 0 \(finite\), got an integer 0; write",
         {"gates/g.yaml": _gate(_RULE + "\ntimeout: 0")}),
    Case("gate-timeout-negative", "`timeout: -5`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': 'timeout' must be a number of seconds > 0 \(finite\), got an integer -5; write",
         {"gates/g.yaml": _gate(_RULE + "\ntimeout: -5")}),
    Case("gate-node-id-escape-sequence", "an expected red node id holding ESC `[2J` (clears the terminal when printed)",
         ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': expect\.red\.nodeids entry 'tests/test_mul\.py::test_mul\\x1b\[2J' holds the control "
         r"character U\+001B; .*remove it",
         {"gates/g.yaml": _gate(_RULE.replace("{files: [tests/test_mul.py]}",
                                              '{nodeids: ["tests/test_mul.py::test_mul\\e[2J"]}'))}),
    Case("gate-title-carriage-return", "a title holding `\\r` (overwrites the line it is printed on)", ("validate",),
         ExitCode.USAGE_ERROR, _FILE + r"gate 'g': title 'ok\\rFAIL' holds the control character U\+000D",
         {"gates/g.yaml": _gate(_RULE + '\ntitle: "ok\\rFAIL"')}),
    Case("gate-id-escape-sequence", "a gate id holding ESC", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g\\x1b\[2J': 'id' value 'g\\x1b\[2J' does not match", {"gates/g.yaml": _gate(_RULE.replace("id: g", 'id: "g\\e[2J"'))}),
    Case("gate-select-not-a-list", "`select: tests` (a string, not a list)", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': .*select",
         {"gates/g.yaml": _gate(_RULE.replace("select: [tests]", "select: tests"))}),
    Case("gate-duplicate-id", "the same gate id in two files", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/h\.yaml:\d+:\d+: gate 'g': id already used at gates/g\.yaml:\d+:\d+.*rename one", setup=_second_gate_file),
    Case("gate-duplicate-yaml-key", "`kind:` twice in one gate", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"duplicate key 'kind' \(first at line \d+",
         {"gates/g.yaml": _gate(_RULE + "\nkind: isolation")}),
    Case("gate-unknown-mutation", "`source: {mutation: mul-adz}`", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': unknown mutation 'mul-adz'.*mul-adds",
         {"gates/g.yaml": _gate(_RULE.replace("mul-adds", "mul-adz"))}),
    Case("gate-unknown-suite", "`select: [tests/test_mull.py]` (no such file)", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': .*tests/test_mull\.py",
         {"gates/g.yaml": _gate(_RULE.replace("select: [tests]", "select: [tests/test_mull.py]"))}),
    Case("gate-empty-file", "an empty gate file", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: the file is empty", {"gates/g.yaml": ""}),
    Case("gate-huge-file", "a gate file over 1 MiB", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: file is \d+ bytes, over the 1048576-byte limit.*split it", setup=_huge),
    Case("gate-non-utf8", "a gate file with byte 0xff in a title", ("validate",), ExitCode.USAGE_ERROR,
         _FILE + r"byte 0xff is not UTF-8; save the file as UTF-8",
         {"gates/g.yaml": _gate(_RULE).encode() + b"    title: caf\xff\n"}),
    Case("gate-tag-os-system", "`!!python/object/apply:os.system [touch MARKER]`", ("validate",),
         ExitCode.USAGE_ERROR, _FILE + r".*YAML tag '!!python/object/apply:os\.system' is refused",
         setup=_tag_gate("!!python/object/apply:os.system"), proof=_tag_did_not_run),
    Case("gate-tag-on-run", "the same tag, given to `seamgate run`", ("run",),
         ExitCode.USAGE_ERROR, _FILE + r".*YAML tag '!!python/object/apply:os\.system' is refused",
         setup=_tag_gate("!!python/object/apply:os.system"), proof=_tag_did_not_run),
    Case("gate-tag-python-name", "`!!python/name:os.system`", ("validate",),
         ExitCode.USAGE_ERROR, _FILE + r".*YAML tag '!!python/name:os\.system' is refused",
         setup=_tag_gate("!!python/name:os.system"), proof=_tag_did_not_run),
    Case("gate-bad-version", "`version: 2`", ("validate",), ExitCode.USAGE_ERROR, _FILE + r".*version",
         {"gates/g.yaml": _gate(_RULE).replace("version: 1", "version: 2")}),
    Case("gate-nested-600-flow", "`gates: [[[...]]]` nested 600 levels (1.2 KB)", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: lists and mappings nested deeper than 64 levels.*flatten",
         {"gates/g.yaml": "version: 1\ngates: " + "[" * 600 + "]" * 600 + "\n"}),
    Case("gate-nested-600-block", "a block mapping nested 600 levels", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: lists and mappings nested deeper than 64 levels.*flatten",
         {"gates/g.yaml": "version: 1\ngates:\n" + "".join(" " * i + f"k{i}:\n" for i in range(1, 600))}),
    Case("gate-symlink-loop", "a gate file that is a symlink to itself", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: cannot read the file: a symlink loop; point to a regular YAML file", setup=_symlink_loop),
    Case("gate-fifo", "a gate file that is a FIFO (used to hang)", ("validate",), ExitCode.USAGE_ERROR,
         r"gates/g\.yaml: is a FIFO \(named pipe\), not a regular file", setup=_fifo),
    Case("gate-dev-zero", "a gate file symlinked to /dev/zero (used to hang, memory growing)", ("validate",),
         ExitCode.USAGE_ERROR, r"gates/g\.yaml: is a device, not a regular file", setup=_dev_zero),
    Case("gate-file-missing", "`seamgate validate gates/nope.yaml`", ("validate", "gates/nope.yaml"),
         ExitCode.USAGE_ERROR, r"gates/nope\.yaml: no such gate file"),
    Case("config-unknown-key", "`[tool.seamgate] jbos = 2`", ("validate",), ExitCode.USAGE_ERROR,
         r"pyproject\.toml:\d+: \[tool\.seamgate\]: unknown key 'jbos'.*jobs",
         {"pyproject.toml": '[tool.seamgate]\ngates = ["gates"]\njbos = 2\n'}),
    Case("config-not-toml", "`pyproject.toml` that is not TOML", ("validate",), ExitCode.USAGE_ERROR,
         r"pyproject\.toml: not valid TOML",
         {"pyproject.toml": '[tool.seamgate]\ngates = ["gates"\n'}),
    Case("config-baseline-timeout-inf", "`[tool.seamgate] baseline_timeout = inf`", ("validate",), ExitCode.USAGE_ERROR,
         r"pyproject\.toml:\d+: \[tool\.seamgate\]: 'baseline_timeout' must be a finite number of seconds > 0, got "
         r"inf; write e\.g\. baseline_timeout = 600",
         {"pyproject.toml": '[tool.seamgate]\ngates = ["gates"]\nbaseline_timeout = inf\n'}),
    Case("project-is-a-file", "`seamgate run --project pyproject.toml` (a file; used to say 'no such folder')",
         ("run", "--project", "pyproject.toml"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: --project pyproject\.toml: .*pyproject\.toml is a file, not a folder; --project names "
         r"the project's root folder"),
    Case("catalog-fifo", "a catalog file that is a FIFO (`mutations list`; would hang a plain read)",
         ("mutations", "list"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: mutations/catalog/calc\.yaml: is a FIFO \(named pipe\), not a regular file",
         setup=lambda project: (os.unlink(project / "mutations/catalog/calc.yaml"),
                                os.mkfifo(project / "mutations/catalog/calc.yaml")) and None),
    Case("run-unknown-gate-id", "`seamgate run --gate mul-rul`", ("run", "--gate", "mul-rul"),
         ExitCode.USAGE_ERROR, r"mul-rul"),
)

MUTATION_CASES: tuple[Case, ...] = (
    Case("mutation-anchor-missing", "`replace.old` text not in the target", ("mutations", "check"),
         ExitCode.GATE_ERROR, r"ROT\s+m .*anchor not found in calc/ops\.py",
         {"mutations/catalog/calc.yaml": _catalog(
             'id: m\ntitle: t\ntarget: calc/ops.py\nreplace: {old: "return a / b", new: "return a"}')},
         stream="out"),
    Case("mutation-anchor-twice", "`delete: \"    return a \"` (matches twice)", ("mutations", "check"),
         ExitCode.GATE_ERROR, r"ROT\s+m .*matches 2 times.*occurrence",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: calc/ops.py\ndelete: "    return a "')},
         stream="out"),
    Case("mutation-patch-does-not-apply", "a diff whose removed line is no longer in the file (a patch applies at "
         "an offset, as `git apply`, but never without its lines)", ("mutations", "check"),
         ExitCode.GATE_ERROR, r"ROT\s+m .*hunk 1 .*does not apply: its context and removed lines are no longer in the file",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: calc/ops.py\npatch: m.diff'),
          "mutations/catalog/m.diff": ("--- a/calc/ops.py\n+++ b/calc/ops.py\n@@ -2,1 +2,1 @@\n"
                                       "-    return a ** b\n+    return a + b\n")},
         stream="out"),
    Case("mutation-no-compile", "a replacement that leaves invalid Python", ("mutations", "check"),
         ExitCode.GATE_ERROR, r"NO-COMPILE m .*calc/ops\.py:6 does not compile.*fix the entry",
         {"mutations/catalog/calc.yaml": _catalog(
             'id: m\ntitle: t\ntarget: calc/ops.py\nreplace: {old: "return a * b", new: "return a *"}')},
         stream="out"),
    Case("mutation-target-dotdot", "`target: ../outside.py`", ("mutations", "check"), ExitCode.USAGE_ERROR,
         _CAT + r".*leaves the project",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: ../outside.py\ndelete: "x"')},
         setup=lambda p: (p.parent / OUTSIDE).write_text(_OUTSIDE_TEXT), proof=_outside_untouched),
    Case("mutation-target-absolute", "`target: /tmp/outside.py`", ("mutations", "check"), ExitCode.USAGE_ERROR,
         _CAT + r".*is absolute",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: /tmp/outside.py\ndelete: "x"')}),
    Case("mutation-target-symlink-out", "`target: calc/link.py`, a symlink to a file outside",
         ("mutations", "check"), ExitCode.USAGE_ERROR, r"mutation 'm'.*outside the project",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: calc/link.py\ndelete: "return 42"')},
         setup=_symlink_out, proof=_outside_untouched),
    Case("mutation-target-symlink-out-on-run", "the same symlinked target, given to `seamgate run`", ("run",),
         ExitCode.USAGE_ERROR, r"mutation 'm'.*outside the project",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: calc/link.py\ndelete: "return 42"'),
          "gates/g.yaml": _gate(_RULE.replace("mul-adds", "m"))},
         setup=_symlink_out, proof=_outside_untouched),
    Case("mutation-target-not-python", "`target: README.md`", ("mutations", "check"), ExitCode.USAGE_ERROR,
         _CAT + r".*not a \.py file",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: README.md\ndelete: "x"'),
          "README.md": "x\n"}),
    Case("mutation-target-missing", "`target: calc/gone.py` (no such file)", ("mutations", "check"),
         ExitCode.GATE_ERROR, r"ROT\s+m .*does not exist",
         {"mutations/catalog/calc.yaml": _catalog('id: m\ntitle: t\ntarget: calc/gone.py\ndelete: "x"')},
         stream="out"),
    Case("mutation-catalog-tag", "`!!python/object/apply:os.system` in the catalog", ("mutations", "list"),
         ExitCode.USAGE_ERROR, r"mutations/catalog/calc\.yaml:\d+:\d+: .*YAML tag .* is refused",
         {"mutations/catalog/calc.yaml": "version: 1\nmutations:\n  - !!python/object/apply:os.system [\"true\"]\n"}),
)

def _existing_report_and_link(project: Path) -> None:
    (project / "r.json").write_text("{}\n")
    (project / "link.json").symlink_to("r.json")


def _block_device(project: Path) -> None:
    os.mknod(project.parent / "blk", stat.S_IFBLK | 0o600, os.makedev(7, 0))


_TWICE = r"^seamgate: error: --junit .*: the same file as --json r\.json .*one report would overwrite the other"

#: Output paths (issue 11): each is refused before anything runs; nothing is replaced, nothing written.
OUTPUT_CASES: tuple[Case, ...] = (
    Case("output-same-file-twice", "`run --json r.json --junit r.json` (one report would overwrite the other)",
         ("run", "--json", "r.json", "--junit", "r.json"), ExitCode.USAGE_ERROR, _TWICE),
    Case("output-same-file-two-spellings", "`run --json r.json --junit calc/../r.json`",
         ("run", "--json", "r.json", "--junit", "calc/../r.json"), ExitCode.USAGE_ERROR, _TWICE),
    Case("output-same-file-via-symlink", "`run --json r.json --junit link.json`, link.json a symlink to r.json",
         ("run", "--json", "r.json", "--junit", "link.json"), ExitCode.USAGE_ERROR, _TWICE,
         setup=_existing_report_and_link),
    Case("output-markdown-proc-version", "`run --markdown /proc/version` (used to print a traceback)",
         ("run", "--markdown", "/proc/version"), ExitCode.ENVIRONMENT,
         r"^seamgate: error: --markdown /proc/version: cannot write /proc/version: /proc is not writable"),
    Case("output-json-is-a-folder", "`run --json calc` (a folder)", ("run", "--json", "calc"),
         ExitCode.USAGE_ERROR, r"^seamgate: error: --json calc: .*calc is a folder; name a file"),
    Case("output-json-block-device", "`run --json ../blk`, a block device", ("run", "--json", "../blk"),
         ExitCode.USAGE_ERROR, r"^seamgate: error: --json \.\./blk: .*blk is a block device, not a regular file",
         setup=_block_device),
    Case("output-fd-not-open", "`run --json /dev/fd/987` (a descriptor this process does not have)",
         ("run", "--json", "/dev/fd/987"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: --json /dev/fd/987: file descriptor 987 is not open in this process; name a file"),
    Case("output-over-a-gate-file", "`run --junit gates/g.yaml` (the report would replace a gate file)",
         ("run", "--junit", "gates/g.yaml"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: --junit gates/g\.yaml: .*gates/g\.yaml is an input of this run .*the report would "
         r"replace it: name another file"),
    Case("output-over-pyproject", "`run --markdown pyproject.toml`", ("run", "--markdown", "pyproject.toml"),
         ExitCode.USAGE_ERROR, r"^seamgate: error: --markdown pyproject\.toml: .*is an input of this run"),
    Case("output-over-python-source", "`run --json calc/ops.py` (the report would replace the code)",
         ("run", "--json", "calc/ops.py"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: --json calc/ops\.py: .*calc/ops\.py is a Python source file; the report would replace it"),
    Case("output-folder-is-a-file", "`run --output pyproject.toml` (a file, not a folder)",
         ("run", "--output", "pyproject.toml"), ExitCode.USAGE_ERROR,
         r"^seamgate: error: --output pyproject\.toml: .*pyproject\.toml is a regular file, not a folder"),
    Case("output-folder-dev-null", "`run --output /dev/null`", ("run", "--output", "/dev/null"),
         ExitCode.USAGE_ERROR, r"^seamgate: error: --output /dev/null: /dev/null is a character device, not a folder"),
)

_BY_ID = _RULE.replace("{files: [tests/test_mul.py]}", "{nodeids: [tests/test_mul.py::test_mul]}")

#: ``seamgate validate --collect`` (issue 11): node ids that exist as files but not as pytest cases.
COLLECT_CASES: tuple[Case, ...] = (
    Case("collect-select-node-missing", "`validate --collect`, `select: [tests/test_mul.py::test_mull]` (the file "
         "exists, the test does not; plain validate accepts it)", ("validate", "--collect"), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': select entry 'tests/test_mul\.py::test_mull' is not a node id pytest collects "
         r"\(collected in tests/test_mul\.py: tests/test_mul\.py::test_mul\); fix the id",
         {"gates/g.yaml": _gate(_BY_ID.replace("select: [tests]", "select: [tests/test_mul.py::test_mull]"))}),
    Case("collect-red-node-missing", "`validate --collect`, `expect: {red: {nodeids: [tests/test_mul.py::test_gone]}}`",
         ("validate", "--collect"), ExitCode.USAGE_ERROR,
         _FILE + r"gate 'g': expect\.red\.nodeids entry 'tests/test_mul\.py::test_gone' is not a node id pytest "
         r"collects", {"gates/g.yaml": _gate(_BY_ID.replace("::test_mul]", "::test_gone]"))}),
    Case("collect-file-does-not-import", "`validate --collect` when tests/test_mul.py cannot be imported",
         ("validate", "--collect"), ExitCode.GATE_ERROR,
         _FILE + r"gate 'g': expect\.red\.nodeids entry 'tests/test_mul\.py::test_mul' cannot be checked: pytest "
         r"cannot collect tests/test_mul\.py on the working tree: .*ModuleNotFoundError",
         {"gates/g.yaml": _gate(_BY_ID), "tests/test_mul.py": "import no_such_module\n\n\ndef test_mul():\n    pass\n"}),
)

CASES: tuple[Case, ...] = GATE_FILE_CASES + MUTATION_CASES + OUTPUT_CASES + COLLECT_CASES

#: Inputs that once failed and must now SUCCEED (each read as the user meant it).
ACCEPTED: tuple[Case, ...] = (
    Case("collect-every-id-exists", "`validate --collect` on the fixture with its node ids all collected",
         ("validate", "--collect"), ExitCode.OK, r"^OK: 1 gate in 1 file; 1 node id collected by pytest$",
         {"gates/g.yaml": _gate(_BY_ID)}, stream="out"),
    # pytest-benchmark, installed on the H200 machine, makes `.benchmarks/` in the folder pytest starts in:
    # collection ran in the user's tree and left it there (the corpus's unchanged-tree check, red on that machine).
    Case("collect-a-plugin-writes-where-pytest-runs", "`validate --collect` where a plugin writes a folder into "
         "the directory pytest runs in (pytest-benchmark's `.benchmarks/`)", ("validate", "--collect"), ExitCode.OK,
         r"^OK: 1 gate in 1 file; 1 node id collected by pytest$",
         {"gates/g.yaml": _gate(_BY_ID), "conftest.py": "import pathlib\n\n\ndef pytest_configure(config):\n"
          "    pathlib.Path('.benchmarks').mkdir(exist_ok=True)\n"}, stream="out"),
    Case("gate-same-file-twice", "`seamgate validate gates/g.yaml gates/g.yaml` (used to report its own id as a duplicate)",
         ("validate", "gates/g.yaml", "gates/g.yaml"), ExitCode.OK, r"OK: 1 gate in 1 file", stream="out"),
)
