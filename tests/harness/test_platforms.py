"""Platform arms: OWED with a reason where the hardware is missing; provenance turns STALE."""

from __future__ import annotations

from harness.rows.executor import Call, Executor
from harness.results.platforms import Platform, freshness, hash_code_under_test
from reports.outcome import Verdict
from tests.reports.fixture_projects import shared_server, write_project


def test_the_probe_runs_in_a_child_and_reports_torch():
    outcome = Executor(shared_server(), __import__("pathlib").Path(__import__("tempfile").mkdtemp())).call(
        Call("probe", "harness.results.platforms:probe"))
    assert outcome.end == "completed" and outcome.result["torch"]


def test_an_arm_without_hardware_is_owed_with_what_it_needs():
    cpu_only = Platform(facts={"torch": "2.13", "cuda": False})
    assert cpu_only.unavailable("cpu-emulated") is None
    assert cpu_only.unavailable("cuda").startswith("OWED: cuda arm needs an NVIDIA GPU")
    assert cpu_only.unavailable("rocm").startswith("OWED: no backend for arm 'rocm' in this build")
    assert Platform(facts={"cuda": True, "hip": False, "device": "H200"}).unavailable("cuda") is None


def test_an_arm_with_no_backend_in_this_build_is_owed_even_on_its_hardware():
    rocm_machine = Platform(facts={"torch": "2.9+rocm", "cuda": True, "hip": "6.2", "device": "MI300X"})
    assert rocm_machine.unavailable("rocm").startswith("OWED: no backend for arm 'rocm' in this build")
    assert rocm_machine.unavailable("cuda").startswith("OWED: cuda arm needs an NVIDIA GPU")


def test_a_measured_arm_turns_stale_when_the_code_under_test_changes(tmp_path):
    root = write_project(tmp_path / "p", {"seam/core.py": "X = 1\n", "tests/test_x.py": "def test(): pass\n"})
    record = Platform(facts={"torch": "2.13"}).provenance("cpu-emulated", root)
    assert record.code_hash == hash_code_under_test(root) and freshness(record, root) is None
    (root / "tests/test_x.py").write_text("def test(): assert 1\n")  # not code under test
    assert freshness(record, root) is None
    (root / "seam/core.py").write_text("X = 2\n")
    assert freshness(record, root) is Verdict.STALE


def test_a_copied_tree_inside_another_git_repository_still_hashes_its_own_code(tmp_path):
    import subprocess

    from harness.results.platforms import code_under_test, hash_code_under_test

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # an outer repo that tracks nothing here
    tree = tmp_path / "copy"
    (tree / "seam").mkdir(parents=True)
    (tree / "seam" / "graph.py").write_text("x = 1\n")
    assert code_under_test(tree) == ["seam/graph.py"]
    empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # sha256 of nothing
    assert hash_code_under_test(tree) != empty
