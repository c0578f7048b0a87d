"""The planner, table-driven: which gates run, which rows each check reads, and what each row runs.

A planner defect runs a gate twice, skips one, reads the wrong row, or runs a row over too little,
so a gate could be judged on cases it never ran. Each fact here is what `seamgate run` would do.
"""

from __future__ import annotations

import pytest

from harness.errors import CommandLineError
from harness.plan.matrix import RowKey
from harness.gates.model import SourceState
from harness.plan.planner import BaselineKey, Check, Plan, make_plan, restrict_arms, select_gates, shard_gates
from tests.reports.fixture_projects import gate

TREE = SourceState()
DROP = SourceState(kind="mutation", mutation="drop")
OTHER = SourceState(kind="mutation", mutation="other")


def ids(gates) -> list[str]:
    return [g.id for g in gates]


@pytest.mark.parametrize(("wanted", "expected"), [
    ((), ["b", "a", "c"]),               # none named: every gate, in file order
    (("c", "b"), ["b", "c"]),            # named: still file order
    (("a", "a"), ["a"]),                 # a gate named twice runs once
])
def test_select_gates_keeps_the_named_gates_in_file_order(wanted, expected) -> None:
    gates = [gate("b"), gate("a"), gate("c")]
    assert ids(select_gates(gates, wanted)) == expected


def test_an_unknown_gate_id_is_refused_naming_it_and_every_known_id_sorted() -> None:
    with pytest.raises(CommandLineError) as caught:
        select_gates([gate("b"), gate("a")], ["a", "zz", "yy"])
    assert str(caught.value) == "--gate zz, yy: no such gate (known: a, b)"


def test_an_unknown_gate_id_with_no_gates_says_none_are_known() -> None:
    with pytest.raises(CommandLineError, match=r"\(known: none\)$"):
        select_gates([], ["x"])


@pytest.mark.parametrize(("arms", "expected"), [
    ((), [("both", ("cpu-emulated", "cuda")), ("cpu", ("cpu-emulated",))]),
    (("cuda",), [("both", ("cuda",))]),                       # a gate left with no arm is dropped
    (("cuda", "cpu-emulated"), [("both", ("cpu-emulated", "cuda")), ("cpu", ("cpu-emulated",))]),
    (("rocm",), []),
])
def test_restrict_arms_keeps_only_the_named_arms_in_the_gates_order(arms, expected) -> None:
    gates = [gate("both", arms=("cpu-emulated", "cuda")), gate("cpu")]
    assert [(g.id, g.arms) for g in restrict_arms(gates, arms)] == expected


@pytest.mark.parametrize(("shard", "expected"), [
    (None, ["d", "b", "a", "c", "e"]),
    ((1, 1), ["d", "b", "a", "c", "e"]),
    ((1, 2), ["a", "c", "e"]),            # ids sorted a b c d e; index 0, 2, 4; file order kept
    ((2, 2), ["d", "b"]),
    ((3, 3), ["c"]),
    ((1, 5), ["a"]),
    ((5, 5), ["e"]),
])
def test_a_shard_keeps_the_gates_whose_sorted_index_is_k_minus_1_mod_n(shard, expected) -> None:
    gates = [gate(i) for i in "dbace"]
    assert ids(shard_gates(gates, shard)) == expected


@pytest.mark.parametrize("shard", [(0, 2), (3, 2), (-1, 1)])
def test_a_shard_outside_1_to_n_is_refused(shard) -> None:
    with pytest.raises(CommandLineError) as caught:
        shard_gates([gate("a")], shard)
    assert str(caught.value) == f"--shard {shard[0]}/{shard[1]}: need 1 <= K <= N"


def test_the_shards_of_a_run_cover_every_gate_exactly_once_whatever_the_file_order() -> None:
    gates = [gate(i) for i in "gfedcba"]
    parts = [ids(shard_gates(gates, (k, 3))) for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted("abcdefg")
    assert parts == [ids(shard_gates(list(reversed(gates)), (k, 3)))[::-1] for k in (1, 2, 3)]


def test_a_check_reads_the_row_of_its_source_arm_and_sorted_environment() -> None:
    g = gate("g", mutation="drop", select=("tests/a.py",), env={"B": "2", "A": "1"})
    check = Check(g, "cuda")
    env = (("A", "1"), ("B", "2"))
    assert check.row == RowKey(DROP, "cuda", env)
    assert check.baseline == BaselineKey(("tests/a.py",), env, "cuda")
    assert check.proof_row is None


def test_an_owed_check_or_one_without_a_selection_reads_no_row() -> None:
    assert Check(gate("g", select=("tests",)), "cuda", owed="no gpu").row is None
    lane = gate("lane", select=())
    assert Check(lane, "cpu-emulated").row is None
    assert Check(lane, "cpu-emulated").baseline is None
    assert Check(lane, "cpu-emulated").proof_row is None


def test_a_proof_row_is_the_proof_mutation_on_the_checks_arm_and_environment() -> None:
    from dataclasses import replace

    g = replace(gate("g1", select=("tests",), env={"X": "1"}), proof=DROP)
    assert Check(g, "cpu-emulated").proof_row == RowKey(DROP, "cpu-emulated", (("X", "1"),))
    assert Check(g, "cpu-emulated", owed="why").proof_row is None


def test_make_plan_makes_one_check_per_gate_and_arm_with_unavailable_arms_owed() -> None:
    gates = [gate("a", arms=("cpu-emulated", "cuda")), gate("b", arms=("cuda",))]
    plan = make_plan(gates, unavailable={"cuda": "OWED: no gpu"})
    assert [(c.gate.id, c.arm, c.owed) for c in plan.checks] == [
        ("a", "cpu-emulated", None), ("a", "cuda", "OWED: no gpu"), ("b", "cuda", "OWED: no gpu")]
    assert plan.gates == ("a", "b")
    # the owed arm reads no row: only the cpu baseline is planned
    assert plan.rows == {RowKey(TREE, "cpu-emulated"): ("tests",)}
    assert plan.baselines == (RowKey(TREE, "cpu-emulated"),)


def test_gates_sharing_a_mutation_share_its_row_over_the_union_of_their_selections() -> None:
    gates = [gate("x", mutation="drop", select=("tests/a.py",)),
             gate("y", mutation="drop", select=("tests/b.py", "tests/a.py::test_one")),
             gate("z", mutation="other", select=("tests/c.py",)),
             gate("w", select=("tests/d.py",))]
    plan = make_plan(gates)
    cpu = "cpu-emulated"
    assert plan.rows == {
        RowKey(TREE, cpu): ("tests/a.py", "tests/b.py", "tests/c.py", "tests/d.py"),
        RowKey(DROP, cpu): ("tests/a.py", "tests/b.py"),
        RowKey(OTHER, cpu): ("tests/c.py",),
    }
    assert plan.baselines == (RowKey(TREE, cpu),)
    readers = plan.readers(RowKey(DROP, cpu))
    assert [c.gate.id for c in readers] == ["x", "y"]
    assert [c.gate.id for c in plan.readers(RowKey(TREE, cpu))] == ["x", "y", "z", "w"]


def test_each_environment_and_arm_gets_its_own_baseline_in_first_use_order() -> None:
    gates = [gate("e", mutation="drop", env={"SEAM_CUDAGRAPH": "0"}),
             gate("p", arms=("cuda", "cpu-emulated"))]
    plan = make_plan(gates)
    off = (("SEAM_CUDAGRAPH", "0"),)
    assert plan.baselines == (RowKey(TREE, "cpu-emulated", off), RowKey(TREE, "cuda"), RowKey(TREE, "cpu-emulated"))
    assert RowKey(DROP, "cpu-emulated", off) in plan.rows
    assert RowKey(DROP, "cpu-emulated") not in plan.rows


def test_a_proof_mutation_gets_its_row_and_its_gate_reads_it() -> None:
    from dataclasses import replace

    g = replace(gate("g1", select=("tests/a.py",)), proof=DROP)
    plan = make_plan([g, gate("other", mutation="drop", select=("tests/b.py",))])
    row = RowKey(DROP, "cpu-emulated")
    assert plan.rows[row] == ("tests/a.py", "tests/b.py")
    assert [c.gate.id for c in plan.readers(row)] == ["g1", "other"]


def test_make_plan_applies_the_gate_filter_and_the_shard_before_planning_rows() -> None:
    gates = [gate("a", mutation="drop", select=("tests/a.py",)), gate("b", mutation="other", select=("tests/b.py",)),
             gate("c", select=("tests/c.py",))]
    # --gate a --gate c, then shard 2/2 of those two: c (of all three, shard 2/2 would be b)
    plan = make_plan(gates, ids=("a", "c"), shard=(2, 2))
    assert plan.gates == ("c",)
    assert plan.rows == {RowKey(TREE, "cpu-emulated"): ("tests/c.py",)}


def test_an_empty_plan_has_no_rows() -> None:
    plan = make_plan([])
    assert plan == Plan(checks=())
    assert plan.gates == () and plan.rows == {} and plan.baselines == ()
