"""The ``seamgate`` command line: argument parsing and dispatch, nothing else.

Each subcommand is a short function from parsed arguments to an ``ExitCode``. ``main`` turns
errors into exit codes: a user mistake prints ``seamgate: error: <message>`` without a traceback;
anything else is a bug in seamgate and prints its traceback.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import re
import sys
import traceback
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

from harness.config import Config
from harness.gates.can_fail import never_fail_problems
from harness.errors import CommandLineError, GateFileError, SeamgateUsageError, environment_message
from harness.cli.report import add_report
from harness.exit_codes import ExitCode
from harness.exit_mapping import code_for_error
from harness.gates.gatefile import load_gate_files
from harness.gates.model import ARM_NAMES
from harness.project import Project
from harness.sweep.cli import add_sweep
from mutations.catalog import catalog_files
from mutations.check import check_mutation, mutated_diff
from mutations.model import Catalog
from reports.outcome import counted
from reports.render import FORMATS, REPORT_FORMATS, parse_report_option

_SHARD = re.compile(r"^(\d+)/(\d+)$")
_DESCRIPTION = (
    "seamgate proves, declaratively, that the tests guarding a CUDA-graph capture migration really "
    "see it: gates run pytest selections against the working tree, the tree with a named mutation "
    "applied off-tree, or a git ref, and compare exactly which cases turn red."
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``seamgate`` command; returns the process exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        return int(args.handler(args))
    except KeyboardInterrupt:
        print("seamgate: interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the one place that turns errors into exit codes
        code = code_for_error(exc)
        if code is not None:
            text = exc if isinstance(exc, SeamgateUsageError) or code != ExitCode.ENVIRONMENT else environment_message(exc)
            print(f"seamgate: error: {text}", file=sys.stderr)
            return code
        traceback.print_exc()
        print("seamgate: this is a bug in seamgate; please report it with the traceback above",
              file=sys.stderr)
        return ExitCode.INTERNAL


@functools.lru_cache(maxsize=1)
def _installed_version() -> str:
    """The version pip installed (a source tree run without installing says so); read once per process."""
    try:
        return metadata.version("seamgate")
    except metadata.PackageNotFoundError:
        return "(not installed: run scripts/setup.sh)"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="seamgate", description=_DESCRIPTION, epilog=_exit_code_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"seamgate {_installed_version()}",
                        help="print the installed seamgate's version and exit")
    parser.add_argument("--project", type=Path, default=None, metavar="DIR",
                        help="the project root (default: the nearest folder upwards whose pyproject.toml "
                             "has [tool.seamgate], else the current folder)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_init(commands)
    _add_validate(commands)
    _add_gates(commands)
    _add_mutations(commands)
    _add_run(commands)
    add_sweep(commands, _positive_int)
    add_report(commands)
    return parser


def _exit_code_epilog() -> str:
    lines = ["exit codes:"]
    for code in ExitCode:
        doc = _member_doc(code)
        lines.append(f"  {int(code):>3}  {code.name}{': ' + doc if doc else ''}")
    return "\n".join(lines)


def _member_doc(code: ExitCode) -> str:
    """The ``#:`` comment above ``code`` in exit_codes.py (the enum's one source of meaning)."""
    source = Path(sys.modules[ExitCode.__module__].__file__ or "").read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(source):
        if line.strip().startswith(f"{code.name} ="):
            comments = []
            back = index - 1
            while back >= 0 and source[back].strip().startswith("#:"):
                comments.insert(0, source[back].strip()[2:].strip())
                back -= 1
            return " ".join(comments)
    return ""


def _add_init(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("init", help="scaffold seamgate into an existing pytest project",
                                 description="Add [tool.seamgate] to pyproject.toml (appended; created when absent), "
                                             "gates/ with one commented example gate, mutations/ with one example "
                                             "mutation, and seamgate_example/ with a captured step and its tests on "
                                             "the `backend` fixture (needs torch: pip install \"seamgate[seam]\"). "
                                             "Refuses, writing nothing, when any "
                                             "of it is already there. docs/tutorial.md goes on from there.")
    parser.add_argument("directory", nargs="?", type=Path, default=None, metavar="DIR",
                        help="the project root (default: --project, else the current folder)")
    parser.set_defaults(handler=cmd_init)


def cmd_init(args: argparse.Namespace) -> ExitCode:
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.cli.scaffold import init, next_steps

    root = (args.directory or args.project or Path.cwd()).resolve()
    sys.stdout.write(next_steps(root, init(root)))
    return ExitCode.OK


def _add_validate(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("validate", help="load and validate gate files",
                                 description="Load and validate gate files (and the mutation catalog they "
                                             "name). Prints 'OK: N gates in M files' or every problem.")
    parser.add_argument("gate_files", nargs="*", type=Path, metavar="GATE_FILE",
                        help="gate files or folders (default: [tool.seamgate] gates, else gates/)")
    parser.add_argument("--collect", action="store_true",
                        help="also run pytest --collect-only (a child, on the working tree) and name every select and "
                             "expected red node id it does not collect, with file:line:col (exit USAGE_ERROR; a test "
                             "file pytest cannot collect: GATE_ERROR)")
    parser.set_defaults(handler=cmd_validate)


def _add_gates(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("gates", help="list the gates", description="Work with the gate files.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="a table of every gate: id, kind, source, arms, where",
                                 description="List every gate of the gate files (validated first).")
    listing.add_argument("gate_files", nargs="*", type=Path, metavar="GATE_FILE",
                         help="gate files or folders (default: [tool.seamgate] gates)")
    listing.set_defaults(handler=cmd_gates_list)


def _add_mutations(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("mutations", help="list, show or check the named mutations",
                                 description="Work with the mutation catalog ([tool.seamgate] catalog: mutations/*.yaml as "
                                             "`seamgate init` writes it, mutations/catalog/*.yaml by default).")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("list", help="a table of every mutation: id, target, operation, title",
                       description="List the catalog.").set_defaults(handler=cmd_mutations_list)
    show = actions.add_parser("show", help="print the unified diff a mutation makes",
                              description="Print the unified diff of the mutated target against the original.")
    show.add_argument("mutation_id", metavar="ID")
    show.set_defaults(handler=cmd_mutations_show)
    check = actions.add_parser("check", help="check that mutations still apply and compile",
                               description="Check each mutation applies exactly once, the mutated file "
                                           "compiles, and print its diff stat. Exits GATE_ERROR when any rots.")
    check.add_argument("mutation_ids", nargs="*", metavar="ID", help="mutations to check (default: all)")
    check.set_defaults(handler=cmd_mutations_check)
    reds = actions.add_parser("reds", help="print the red set of a mutation (ID) or a git ref (--ref) in gate YAML form",
                              description="Run the mutation, or the git ref with the working tree's tests laid over "
                                          "it as a red-first gate runs it, over a selection (default: the union of "
                                          "what the gates naming it select) on the cpu-emulated arm, every case run, "
                                          "and print the red cases as the block a gate wants (`{arm}` for the arm).")
    reds.add_argument("mutation_id", metavar="ID", nargs="?", default=None, help="a catalog mutation (or give --ref)")
    reds.add_argument("--ref", default=None, metavar="GITREF",
                      help="instead of ID: a git ref (branch, tag, commit, HEAD~1), the old code of a red-first gate")
    reds.add_argument("--select", action="append", default=[], metavar="PATH",
                      help="a pytest path or node id to run (repeatable; default: what the gates naming ID or "
                           "GITREF select)")
    reds.add_argument("--overlay", action="append", default=[], metavar="PATH",
                      help="with --ref: a working-tree path laid over the ref (repeatable; default: the red-first "
                           "gates' overlay, else the selected paths)")
    reds.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                      help="seconds the mutation's (or ref's) run may take (default: max(10 s, 5 x the baseline's time))")
    reds.set_defaults(handler=cmd_mutations_reds)


def _add_run(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("run", help="run gates and report",
                                 description="Run the gates (each in isolated pytest processes) and report.")
    parser.add_argument("gate_files", nargs="*", type=Path, metavar="GATE_FILE",
                        help="gate files or folders (default: [tool.seamgate] gates)")
    parser.add_argument("--gate", action="append", default=[], metavar="ID", dest="gate",
                        help="run only this gate (repeatable)")
    parser.add_argument("--jobs", type=_positive_int, default=None, metavar="N",
                        help="parallel runs (default: [tool.seamgate] jobs)")
    parser.add_argument("--shard", type=parse_shard, default=None, metavar="K/N",
                        help="run the K-th of N shards (1 <= K <= N); join parts with `seamgate report --merge`")
    # --json, --junit, --markdown: the registry's formats with a flag of their own, in the flags' (alphabetical) order
    for flag, words in sorted(fmt.run_flag for fmt in REPORT_FORMATS if fmt.run_flag is not None):
        parser.add_argument(flag, type=Path, default=None, metavar="FILE", help=words)
    parser.add_argument("--report", type=_report_option, action="append", default=[], metavar="FMT=PATH",
                        dest="report", help=f"write the report in format FMT ({', '.join(FORMATS)}) to PATH, as "
                                            "`seamgate report --format FMT` renders it (repeatable)")
    parser.add_argument("--arm", action="append", default=[], metavar="ARM", dest="arm", choices=ARM_NAMES,
                        help="run only this platform arm of each gate (repeatable; e.g. --arm cuda on a GPU machine)")
    parser.add_argument("--fail-on-owed", action="store_true",
                        help="exit OWED when an arm could not run on this hardware")
    parser.add_argument("--output", type=Path, default=None, metavar="DIR",
                        help="keep this run's logs, JUnit, reach, outcomes.json and matrix.json in DIR "
                             "(default: .seamgate/runs/<timestamp>, with .seamgate/runs/latest pointing at the newest)")
    parser.add_argument("--no-reuse", action="store_true", dest="no_reuse",
                        help="run every row again (default: take a row kept by the newest run when nothing it read "
                             "changed: the file contents its cases reached, its test files, the mutation)")
    parser.add_argument("--dry-run", action="store_true", dest="dry_run",
                        help="print the plan (rows, cases to run and to infer, estimated time) and run nothing")
    parser.add_argument("--prove", action="store_true",
                        help="run every case of every source state (default: a mutation's run executes only the "
                             "cases whose baseline reach meets the changed lines; the rest are inferred, and marked so)")
    parser.add_argument("--project", type=Path, default=argparse.SUPPRESS, metavar="DIR",
                        help="the project root (same as the global --project)")
    parser.set_defaults(handler=cmd_run)


def _report_option(value: str) -> tuple[str, Path]:
    """``--report FMT=PATH``; a bad one is a usage error that names the known formats."""
    try:
        return parse_report_option(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_shard(text: str) -> tuple[int, int]:
    """``"k/n"`` -> ``(k, n)`` with ``1 <= k <= n``; argparse reports a ValueError as a usage error."""
    match = _SHARD.match(text.strip())
    if match is None:
        raise argparse.ArgumentTypeError(f"--shard must be K/N, e.g. 1/4; got {text!r}")
    k, n = int(match.group(1)), int(match.group(2))
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"--shard {text}: need 1 <= K <= N")
    return k, n


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return int(text)


def project_of(args: argparse.Namespace) -> tuple[Path, Config]:
    """The project root and its config (``harness.project.Project.locate``)."""
    project = Project.locate(args.project)
    return project.root, project.config


def load_project_catalog(root: Path, config: Config) -> Catalog:
    """The project's catalog; a default catalog folder that does not exist is an empty catalog."""
    return Project(root, config).catalog()


def _gate_paths(args: argparse.Namespace, root: Path, config: Config) -> list[Path]:
    return Project(root, config).gate_paths(args.gate_files)


def cmd_validate(args: argparse.Namespace) -> ExitCode:
    root, config = project_of(args)
    catalog = load_project_catalog(root, config)
    paths = _gate_paths(args, root, config)
    gates = load_gate_files(paths, project_root=root, catalog=catalog)
    problems = never_fail_problems(gates)
    if problems:
        raise GateFileError(problems)
    files = catalog_files([p for p in paths if p.exists()])
    if not gates:
        # Like pytest's exit 5: checking nothing is never OK (a CI step would read "OK: 0 gates" as green).
        why = Project(root, config).why_no_gate_files(paths if args.gate_files else ()) if not files \
            else f"the gate files hold no gates ({', '.join(str(f) for f in files)}); add gates (docs/gates.md)"
        print(f"seamgate validate: nothing was checked: {why} -> exit NOTHING_JUDGED", file=sys.stderr)
        return ExitCode.NOTHING_JUDGED
    checked = ""
    if getattr(args, "collect", False):
        # this command's machinery, loaded when it runs: every `seamgate` command imports this module
        from harness.gates.collect_check import check_collected

        checked = f"; {counted(check_collected(gates, paths, root), 'node id')} collected by pytest"
    print(f"OK: {counted(len(gates), 'gate')} in {counted(len(files), 'file')}{checked}")
    return ExitCode.OK


def cmd_mutations_list(args: argparse.Namespace) -> ExitCode:
    from rich.console import Console
    from rich.table import Table

    root, config = project_of(args)
    catalog = load_project_catalog(root, config)
    table = Table(title=f"{len(catalog)} mutations")
    table.add_column("id", no_wrap=True)
    table.add_column("target", no_wrap=True)
    table.add_column("op", no_wrap=True)
    table.add_column("title")
    for m in catalog:
        table.add_row(m.id, m.target, " + ".join(m.ops), m.title)
    Console(width=max(120, Console().width)).print(table)
    return ExitCode.OK


def cmd_mutations_show(args: argparse.Namespace) -> ExitCode:
    root, config = project_of(args)
    catalog = load_project_catalog(root, config)
    mutation = _known(catalog, args.mutation_id)
    sys.stdout.write(mutated_diff(root, mutation))
    return ExitCode.OK


def cmd_mutations_check(args: argparse.Namespace) -> ExitCode:
    root, config = project_of(args)
    catalog = load_project_catalog(root, config)
    chosen = [_known(catalog, i) for i in args.mutation_ids] if args.mutation_ids else list(catalog)
    bad = []
    for mutation in chosen:
        result = check_mutation(root, mutation)
        if result.ok:
            print(f"ok    {result.mutation_id}  {result.target}  {result.diffstat}")
            for note in result.notes:  # a patch hunk that applied at an offset: the diff is drifting
                print(f"      {result.mutation_id}: {note}")
        else:
            bad.append(result.mutation_id)
            print(f"{result.status.upper():<5} {result.mutation_id}  {result.target}  {result.problem}")
    if bad:
        print(f"{len(bad)} of {len(chosen)} mutations do not apply cleanly: {', '.join(bad)}", file=sys.stderr)
        return ExitCode.GATE_ERROR
    print(f"OK: {len(chosen)} mutations apply and compile")
    return ExitCode.OK


def cmd_gates_list(args: argparse.Namespace) -> ExitCode:
    from rich.console import Console
    from rich.table import Table

    root, config = project_of(args)
    gates = load_gate_files(_gate_paths(args, root, config), project_root=root, catalog=load_project_catalog(root, config))
    table = Table(title=counted(len(gates), "gate"))
    for column in ("id", "kind", "source", "arms", "select", "where"):
        table.add_column(column, no_wrap=column != "select")
    for g in gates:
        table.add_row(g.id, g.kind, g.source.label(), ", ".join(g.arms), counted(len(g.select), "entry", "entries") if g.select else "-",
                      f"{g.origin.file}:{g.origin.line}")
    Console(width=max(120, Console().width)).print(table)
    return ExitCode.OK if gates else ExitCode.NOTHING_JUDGED


def cmd_mutations_reds(args: argparse.Namespace) -> ExitCode:
    """Run one mutation or git ref (every case, no inference) and print its red set as a gate's ``expect`` block."""
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.cli.reds import red_set_yaml, run_reds

    if (args.mutation_id is None) == (args.ref is None):
        raise CommandLineError("name a mutation ID or --ref GITREF, not both" if args.ref else
                               "name a mutation ID or --ref GITREF (`seamgate mutations list` lists the IDs)")
    if args.overlay and args.ref is None:
        raise CommandLineError("--overlay goes with --ref GITREF (a mutation is applied to the working tree itself)")
    root, config = project_of(args)
    catalog = load_project_catalog(root, config)
    if args.ref is not None:
        return _reds_of_ref(args, root, config, catalog)
    mutation = _known(catalog, args.mutation_id)
    select = tuple(args.select)
    if not select:
        paths = Project(root, config).gate_paths()
        gates = load_gate_files(paths, project_root=root, catalog=catalog)
        # this command's machinery, loaded when it runs: every `seamgate` command imports this module
        from harness.plan.matrix import union_select

        select = union_select(g.select for g in gates if g.source.mutation == mutation.id)
    if not select:
        raise CommandLineError(f"no gate names mutation {mutation.id!r}: say what to run with --select PATH "
                               "(e.g. --select tests/seam)")
    code, red, message = run_reds(root, catalog, mutation.id, select, timeout=args.timeout)
    if red is None:
        print(f"seamgate: mutation {mutation.id} could not be judged: {message}", file=sys.stderr)
        return code
    sys.stdout.write(red_set_yaml(mutation.id, select, red))
    return ExitCode.OK


def _reds_of_ref(args: argparse.Namespace, root: Path, config: Config, catalog: Catalog) -> ExitCode:
    """``reds --ref``: the selection's red set at the ref with the new tests laid over it (a red-first gate's block)."""
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.cli.reds import check_ref, red_set_yaml, ref_source, run_red_set

    check_ref(root, args.ref)
    gates = load_gate_files(Project(root, config).gate_paths(), project_root=root, catalog=catalog) \
        if not args.select else []
    source, select = ref_source(root, args.ref, tuple(args.select), tuple(args.overlay), gates)
    code, red, message = run_red_set(root, catalog, source, select, timeout=args.timeout)
    if red is None:
        print(f"seamgate: ref {args.ref} could not be judged: {message}", file=sys.stderr)
        return code
    sys.stdout.write(red_set_yaml(source, select, red))
    return ExitCode.OK


def _known(catalog: Catalog, mutation_id: str):  # -> Mutation
    if mutation_id in catalog:
        return catalog.get(mutation_id)
    # only for an unknown id: every `seamgate` command imports this module
    from mutations.shape import suggestion

    raise CommandLineError(f"unknown mutation {mutation_id!r}{suggestion(mutation_id, catalog.ids())} "
                           f"(known: {', '.join(catalog.ids()) or 'none'})")


def cmd_run(args: argparse.Namespace) -> ExitCode:
    """Resolve the project, config and gate paths onto ``args``, then hand over to ``harness.run.runner``."""
    root, config = project_of(args)
    # this command's machinery, loaded when it runs: every `seamgate` command imports this module
    from harness.cli.outputs import check_outputs, inputs_of

    check_outputs((("--json", args.json), ("--junit", args.junit), ("--markdown", args.markdown),
                   *(("--report", path) for _, path in args.report)),
                  output=getattr(args, "output", None),
                  inputs=inputs_of(root, _gate_paths(args, root, config), config.catalog_paths(root)))
    args.project = root
    args.config = config
    args.named_gate_files = bool(args.gate_files)
    args.gate_files = _gate_paths(args, root, config)
    if args.jobs is None:
        args.jobs = config.jobs
    run_command = _runner()
    if run_command is None:
        return ExitCode.INTERNAL
    return ExitCode(run_command(args))


def _runner() -> Callable[[argparse.Namespace], int] | None:
    try:
        module = importlib.import_module("harness.run.runner")
    except ModuleNotFoundError as exc:
        if exc.name != "harness.run.runner":
            raise
        print("seamgate: `seamgate run` is not available in this build: harness.run.runner is missing",
              file=sys.stderr)
        return None
    run_command = getattr(module, "run_command", None)
    if run_command is None:
        print("seamgate: `seamgate run` is not available: harness.run.runner has no run_command", file=sys.stderr)
    return run_command


if __name__ == "__main__":
    sys.exit(main())
