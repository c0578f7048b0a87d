"""Generated mutants: mutmut 3 makes them and names them; this module turns each into a plain value.

mutmut is used for GENERATION and NAMING only (``docs/sweep.md`` says why not its runner). Its
``create_mutations`` parses a file with libcst and yields, per mutable node, the mutated node; its
naming (``combine_mutations_to_source``) numbers the mutants of each top-level function or method
in visiting order: ``<module>.x_<function>__mutmut_<n>`` or ``<module>.xǁ<Class>ǁ<method>__mutmut_<n>``.
We number them the same way and check the result against the names mutmut's own trampolined file
holds, so an id printed here is the id ``mutmut show`` knows.

Each ``Mutant`` carries the whole mutated file (the mutated function spliced into the original text,
so no whole-module render per mutant), its unified diff, line and column, and mutmut's operator
name. ``trampolined`` gives mutmut's one-file-holds-every-mutant form, in which the environment
variable ``MUTANT_UNDER_TEST`` picks the active mutant at call time (``harness/sweep/pytest_sweep.py``).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from harness.errors import EnvironmentProblem

#: What a user is told when mutmut is not importable.
INSTALL_HINT = 'install it into the environment that runs seamgate: pip install "mutmut>=3.8" (or pip install -e ".[test]")'


class MutmutMissing(EnvironmentProblem):
    """mutmut 3 is not importable: the sweep cannot generate mutants."""


@dataclass(frozen=True)
class Mutant:
    """One generated mutant of one file."""

    #: mutmut's name, e.g. ``seam.scope.xǁGraphCaptureScopeǁ_abort__mutmut_1``.
    id: str
    #: The mutated file, relative to the project root.
    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    #: mutmut's operator (``number``, ``string``, ``name``, ``swap_op``, ...).
    mutator: str
    #: The whole mutated file.
    text: str
    #: Unified diff of the mutated file against the original.
    diff: str
    #: The mangled function key (``x_f`` / ``xǁCǁm``) and the function's original source: a mutant's code.
    function: str
    function_source: str


def mutmut_version() -> str:
    """mutmut's version; ``MutmutMissing`` saying how to install it when absent or too old."""
    try:
        import mutmut
        from mutmut.mutation import file_mutation  # noqa: F401 - the 3.x layout we rely on
    except ImportError as exc:
        raise MutmutMissing(f"seamgate sweep generates mutants with mutmut 3, which is not importable here "
                            f"({exc}); {INSTALL_HINT}") from None
    return str(getattr(mutmut, "__version__", "3"))


def module_name(rel: str) -> str:
    """The module mutmut names a file's mutants after (``src/`` stripped, ``__init__`` dropped)."""
    from mutmut.utils.format_utils import get_mutant_name

    return get_mutant_name(Path(rel), "X").rsplit(".X", 1)[0]


def generate(root: Path, rel: str) -> list[Mutant]:
    """Every mutant mutmut makes of ``root/rel``, in mutmut's order, with mutmut's names."""
    source = (root / rel).read_text(encoding="utf-8")
    module, mutations = _create(root, rel, source)
    return list(_mutants(rel, source, module, mutations))


def trampolined(root: Path, rel: str) -> tuple[str, list[str]]:
    """mutmut's trampolined form of ``root/rel`` (every mutant in one file) and the mutant ids it holds."""
    source = (root / rel).read_text(encoding="utf-8")
    return _combined(rel, *_create_all(root, rel, source))


def generate_and_trampoline(root: Path, rel: str, source: str | None = None) -> tuple[list[Mutant], str]:
    """``generate`` and ``trampolined``'s code from ONE run of mutmut's ``create_mutations`` (a sweep needs
    both; libcst's pass over the file is most of either's cost: 3.3 s each on cachetools' ``_cached.py``).
    ``source``: the file's text, when the caller has read it already."""
    if source is None:
        source = (root / rel).read_text(encoding="utf-8")
    module, mutations, ignored_classes, ignored_functions = _create_all(root, rel, source)
    code, _ = _combined(rel, module, mutations, ignored_classes, ignored_functions)
    return list(_mutants(rel, source, module, mutations)), code


def _combined(rel: str, module: Any, mutations: list[Any], ignored_classes: set[str],
              ignored_functions: set[str]) -> tuple[str, list[str]]:
    from mutmut.mutation.file_mutation import combine_mutations_to_source
    from mutmut.utils.format_utils import get_mutant_name

    combined = combine_mutations_to_source(module, mutations, ignored_classes, ignored_functions)
    return _with_locale_proof_name(combined.code), [get_mutant_name(Path(rel), name) for name in combined.mutant_names]


#: Put after mutmut's import in a trampolined module. mutmut names a method's mutants with "ǁ" and its
#: trampoline reads the active one from ``MUTANT_UNDER_TEST``; a process whose locale is not UTF-8 (a child a
#: case starts with ``LC_ALL=C``) decodes that variable otherwise, and its name then matches no mutant. The
#: sweep also exports the name as hex (``MUTANT_HEX_VARIABLE``): where the two differ, the hex one is
#: made the active name, in the process-local copy mutmut falls back to when the variable is absent.
MUTANT_HEX_VARIABLE = "SEAMGATE_MUTANT_HEX"
LOCALE_PROOF_NAME = f"""
def _seamgate_locale_proof_mutant_name():
    import os
    encoded = os.environ.get("{MUTANT_HEX_VARIABLE}")
    if encoded is None:
        return
    name = bytes.fromhex(encoded).decode("utf-8")
    if os.environ.get("MUTANT_UNDER_TEST", "") != name:
        import mutmut.mutation.trampoline as trampoline
        os.environ.pop("MUTANT_UNDER_TEST", None)
        trampoline._mutant_under_test = name or None
_seamgate_locale_proof_mutant_name()
"""
_MUTMUT_IMPORT = "from mutmut.mutation.trampoline import wrap_in_trampoline as _mutmut_mutated"


def _with_locale_proof_name(code: str) -> str:
    """``code`` (a trampolined module) with ``LOCALE_PROOF_NAME`` after its line importing mutmut's trampoline."""
    at = code.find(_MUTMUT_IMPORT)
    if at < 0:
        return code
    end = code.find("\n", at)
    end = len(code) if end < 0 else end + 1
    return code[:end] + LOCALE_PROOF_NAME + code[end:]


def _create(root: Path, rel: str, source: str) -> tuple[Any, list[Any]]:
    module, mutations, _, _ = _create_all(root, rel, source)
    return module, mutations


def _create_all(root: Path, rel: str, source: str) -> tuple[Any, list[Any], set[str], set[str]]:
    """mutmut's ``create_mutations``, with its configuration read from ``root`` (its line pragmas and
    ``do_not_mutate_patterns`` apply); a project mutmut cannot configure gets the defaults."""
    import mutmut.configuration as configuration
    from mutmut.mutation.file_mutation import create_mutations

    here = os.getcwd()
    os.chdir(root)
    try:
        configuration.reset_config()
        try:
            configuration.config()
        except Exception:  # noqa: BLE001 - mutmut guesses source_paths and may give up: generation needs none
            configuration._config = _DefaultConfig()  # type: ignore[assignment]
        return create_mutations(rel, source)
    finally:
        os.chdir(here)


class _DefaultConfig:
    """The one setting generation reads, for a project mutmut cannot configure."""

    do_not_mutate_patterns: list[str] = []


def _mutants(rel: str, source: str, module: Any, mutations: list[Any]) -> Iterator[Mutant]:
    """Name the mutations as ``combine_mutations_to_source`` does and render each one."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider
    from mutmut.mutation.file_mutation import deep_replace, group_by_top_level_node
    from mutmut.mutation.trampoline_templates import mangle_function_name

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    grouped = group_by_top_level_node(mutations)
    prefix = module_name(rel)
    lines = source.splitlines(keepends=True)
    for function, class_name in _functions(module):
        mine = grouped.get(function)
        if not mine:
            continue
        key = mangle_function_name(name=function.name.value, class_name=class_name)
        bare = function.with_changes(leading_lines=[])
        original = module.code_for_node(bare)
        first = positions[function.decorators[0]].start.line if function.decorators else positions[function].start.line
        for n, mutation in enumerate(mine, start=1):
            changed = deep_replace(bare, mutation.original_node, mutation.mutated_node)
            assert isinstance(changed, cst.CSTNode)
            text = _splice(lines, first, original, module.code_for_node(changed))
            if text is None:  # the rendered function does not line up with the file: render it all
                text = deep_replace(module, mutation.original_node, mutation.mutated_node).code  # type: ignore[union-attr]
            where = positions.get(mutation.original_node)
            line, col = (where.start.line, where.start.column + 1) if where else (first, 1)
            end_line, end_col = (where.end.line, where.end.column + 1) if where else (line, col)
            yield Mutant(id=f"{prefix}.{key}__mutmut_{n}", file=rel, line=line, column=col, end_line=end_line,
                         end_column=end_col, mutator=_operator(mutation), text=text, diff=unified_diff(rel, source, text),
                         function=key, function_source=original)


def _functions(module: Any) -> Iterator[tuple[Any, str | None]]:
    """Top-level functions and the methods of top-level classes: what mutmut puts trampolines on."""
    import libcst as cst

    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            yield statement, None
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for method in statement.body.body:
                if isinstance(method, cst.FunctionDef):
                    yield method, statement.name.value


def _splice(lines: list[str], first: int, original: str, mutated: str) -> str | None:
    """The file with the function's rendered lines replaced; ``None`` when the render does not match.

    A method renders without its class's indentation, so each written line takes the indentation
    of the original line it replaces (a line inside a multi-line string renders as it is written).
    """
    old, new = original.splitlines(keepends=True), mutated.splitlines(keepends=True)
    start = first - 1
    if start < 0 or start + len(old) > len(lines):
        return None
    prefixes = []
    for k, rendered in enumerate(old):
        actual = lines[start + k]
        if not actual.rstrip("\r\n").endswith(rendered.rstrip("\r\n")):
            return None
        prefixes.append(actual[: len(actual.rstrip("\r\n")) - len(rendered.rstrip("\r\n"))])
    out = list(lines[:start])
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend(lines[start + i1:start + i2])
            continue
        for k, text in enumerate(new[j1:j2]):
            anchor = min(i1 + k, i2 - 1) if i2 > i1 else max(i1 - 1, 0)
            out.append((prefixes[anchor] if text.strip() else "") + text)
    out.extend(lines[start + len(old):])
    return "".join(out)


def _operator(mutation: Any) -> str:
    """The name of the mutmut operator that makes ``mutation`` (``operator_number`` -> ``number``)."""
    from mutmut.mutation.mutators import mutation_operators

    for node_type, operator in mutation_operators:
        if isinstance(mutation.original_node, node_type):
            for candidate in operator(mutation.original_node):
                if candidate.deep_equals(mutation.mutated_node):
                    return operator.__name__.removeprefix("operator_")
    return ""


def unified_diff(rel: str, original: str, mutated: str) -> str:
    return "".join(difflib.unified_diff(original.splitlines(keepends=True), mutated.splitlines(keepends=True),
                                        fromfile=f"a/{rel}", tofile=f"b/{rel}"))


def added_lines(diff: str) -> str:
    """The ``+`` lines of a diff, stripped and joined by `` / ``: what an equivalence entry pins."""
    return " / ".join(line[1:].strip() for line in diff.splitlines()
                      if line.startswith("+") and not line.startswith("+++"))
