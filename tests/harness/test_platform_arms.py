"""Which arms run here, and what a measured arm's provenance names (``harness/results/platforms.py``),
unit by unit (issue 28: an arm reported as run where it cannot run, or a provenance that does not turn
STALE when the code under test changes, is a false PASS)."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from harness.results import platforms
from harness.results.platforms import Platform, code_under_test, git_commit, hash_code_under_test, probe
from tests.reports.fixture_projects import write_project


def fake_torch(*, cuda: bool, hip: str | None = None) -> types.ModuleType:
    torch = types.ModuleType("torch")
    torch.__version__ = "2.13.0"
    torch.version = types.SimpleNamespace(hip=hip)
    # Only device 0 answers: the probe must ask about the first GPU by its index.
    torch.cuda = types.SimpleNamespace(is_available=lambda: cuda, get_device_capability=lambda index: {0: (9, 0)}[index],
                                       get_device_name=lambda index: {0: "NVIDIA H200"}[index])
    return torch


def test_the_probe_reports_torch_and_a_gpu_with_its_capability_and_driver(monkeypatch):
    monkeypatch.setattr(platforms, "_driver_version", lambda: "570.1")
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda=False))
    assert probe() == {"torch": "2.13.0", "cuda": False, "hip": False}
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda=True))
    assert probe() == {"torch": "2.13.0", "cuda": True, "hip": False, "device": "NVIDIA H200", "capability": "9.0",
                       "driver": "570.1"}
    monkeypatch.setitem(sys.modules, "torch", fake_torch(cuda=True, hip="6.2"))
    assert probe()["hip"] is True


def fake_smi(tmp_path: Path, monkeypatch, script: str) -> None:
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text("#!/bin/sh\n" + script)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(smi.parent))


def test_the_driver_version_is_nvidia_smis_first_line(tmp_path: Path, monkeypatch):
    fake_smi(tmp_path, monkeypatch, '[ "$1 $2" = "--query-gpu=driver_version --format=csv,noheader" ] || exit 9\n'
                                    "echo 570.1\necho 535.2\n")
    assert platforms._driver_version() == "570.1"


def test_a_failing_or_silent_nvidia_smi_names_no_driver(tmp_path: Path, monkeypatch):
    fake_smi(tmp_path, monkeypatch, "echo 570.1\nexit 3\n")
    assert platforms._driver_version() == ""
    (tmp_path / "bin" / "nvidia-smi").write_text("#!/bin/sh\necho '  '\n")
    assert platforms._driver_version() == ""
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert platforms._driver_version() == ""


def test_a_hung_nvidia_smi_is_given_up_within_ten_seconds_and_names_no_driver(monkeypatch):
    # A real hang would cost the case the whole wait; the fake answers as a hang bounded by the given
    # timeout would, and as a hang with none would: never (reported here instead of waiting).
    asked = []

    def hung(argv, **options):
        asked.append(options.get("timeout"))
        if options.get("timeout") is None:
            raise AssertionError("nvidia-smi hung and the probe would wait for it forever")
        raise subprocess.TimeoutExpired(argv, options["timeout"])

    monkeypatch.setattr(platforms.subprocess, "run", hung)
    assert platforms._driver_version() == ""
    assert len(asked) == 1 and 0 < asked[0] <= 10


def test_a_cuda_arm_needs_an_nvidia_build_and_a_rocm_arm_a_backend():
    assert Platform(facts={"cuda": True, "hip": True}).unavailable("cuda").startswith("OWED: cuda arm needs")
    assert Platform(facts={}).unavailable("cuda").startswith("OWED: cuda arm needs")
    broken = Platform(probe_error="torch would not import")
    assert broken.unavailable("cuda") == "OWED: cuda arm: the platform probe failed (torch would not import)"
    assert broken.unavailable("cpu-emulated") is None
    assert broken.unavailable_arms(("cpu-emulated", "cuda")) == {"cuda": broken.unavailable("cuda")}
    assert Platform(facts={"cuda": True}).unavailable_arms(("cpu-emulated", "cuda")) == {}


def test_a_rocm_arm_needs_an_amd_build_when_a_backend_exists(monkeypatch):
    monkeypatch.setattr(platforms, "NO_BACKEND", {})
    assert Platform(facts={"cuda": True, "hip": "6.2"}).unavailable("rocm") is None
    assert Platform(facts={"cuda": True, "hip": False}).unavailable("rocm").startswith("OWED: rocm arm needs an AMD GPU")
    assert Platform(facts={"cuda": False, "hip": "6.2"}).unavailable("rocm").startswith("OWED: rocm arm needs an AMD GPU")


def test_a_gpu_arms_provenance_names_the_device_and_a_cpu_arms_names_the_cpu(tmp_path: Path):
    facts = {"torch": "2.13.0", "device": "NVIDIA H200", "capability": "9.0", "driver": "570.1"}
    gpu = Platform(facts=facts).provenance("cuda", tmp_path, code_hash="h", commit="c")
    assert (gpu.arm, gpu.device, gpu.capability, gpu.driver, gpu.torch, gpu.commit, gpu.code_hash) == \
        ("cuda", "NVIDIA H200", "9.0", "570.1", "2.13.0", "c", "h")
    rocm = Platform(facts=facts).provenance("rocm", tmp_path, code_hash="h", commit="c")
    assert (rocm.device, rocm.capability, rocm.driver) == ("NVIDIA H200", "9.0", "570.1")
    cpu = Platform(facts=facts).provenance("cpu-emulated", tmp_path, code_hash="h", commit="c")
    assert (cpu.device, cpu.capability, cpu.driver, cpu.torch) == ("cpu", "", "", "2.13.0")
    bare = Platform().provenance("cuda", tmp_path, code_hash="h", commit="c")
    assert (bare.device, bare.capability, bare.driver, bare.torch) == ("", "", "", "")


def test_a_measured_arms_provenance_lists_the_files_its_code_hash_read_in_full(tmp_path: Path):
    # Without the list, the record reads as an older seamgate's and is checked against every code file
    # byte for byte (harness/results/evidence.py): a hash of other files than the reader's.
    files = ("seam/core.py", "tests/test_core.py")
    for arm in ("cuda", "cpu-emulated"):
        record = Platform().provenance(arm, tmp_path, code_hash="h", commit="c", hashed_files=files)
        assert record.hashed_files == files
    assert Platform().provenance("cuda", tmp_path, code_hash="h", commit="c").hashed_files is None


def test_a_provenance_reads_the_commit_and_the_code_hash_when_not_given(tmp_path: Path, monkeypatch):
    root = write_project(tmp_path / "p", {"seam/core.py": "X = 1\n"})
    monkeypatch.setenv("SEAMGATE_COMMIT", "abc123")
    record = Platform().provenance("cpu-emulated", root)
    assert record.commit == "abc123" and record.code_hash == hash_code_under_test(root)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def test_the_commit_is_seamgate_commit_when_set_else_git_head_else_empty(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("SEAMGATE_COMMIT", raising=False)
    root = write_project(tmp_path / "p", {"seam/core.py": "X = 1\n"})
    assert git_commit(root) == ""  # not a git checkout
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    assert git_commit(root) == git(root, "rev-parse", "HEAD")
    monkeypatch.setenv("SEAMGATE_COMMIT", "from-the-copy")
    assert git_commit(root) == "from-the-copy"
    monkeypatch.setattr(platforms.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(OSError("no git")))
    assert git_commit(root) == "from-the-copy"
    monkeypatch.delenv("SEAMGATE_COMMIT")
    assert git_commit(root) == ""


def test_the_code_under_test_is_every_python_file_under_seam_and_drivers_but_caches_and_hidden_folders(tmp_path: Path):
    root = write_project(tmp_path / "p", {
        "seam/a.py": "", "seam/sub/b.py": "", "drivers/d.py": "", "seam/__pycache__/a.py": "",
        "seam/.hidden/h.py": "", "seam/notes.txt": "", "tests/test_x.py": "", "other/o.py": ""})
    assert code_under_test(root) == ["drivers/d.py", "seam/a.py", "seam/sub/b.py"]


def test_without_seam_or_drivers_the_code_under_test_is_every_tracked_python_file_outside_tests(tmp_path: Path):
    root = write_project(tmp_path / "p", {"lib/a.py": "", "lib/b.txt": "", "tests/test_x.py": "", ".venv/x.py": "",
                                          "untracked.py": ""})
    assert code_under_test(root) == ["lib/a.py", "untracked.py"]  # not a git checkout: the walk, hidden folders skipped
    git(root, "init", "-q")
    git(root, "add", "lib", "tests")
    assert code_under_test(root) == ["lib/a.py"]  # git's tracked files
    (root / "lib/a.py").unlink()  # tracked, removed from the tree
    (root / "tests/test_x.py").unlink()
    assert code_under_test(root) == ["untracked.py"]  # no tracked file left on disk: the walk


def test_a_hash_over_no_code_is_an_error_and_a_changed_file_changes_the_hash(tmp_path: Path):
    root = write_project(tmp_path / "p", {"tests/test_x.py": ""})
    with pytest.raises(platforms.EmptyHashError, match=r"no code under test found \(no \.py file under seam, drivers "
                                                       r"nor outside tests/\): a hash over zero files names nothing"):
        hash_code_under_test(root)
    (root / "seam").mkdir()
    (root / "seam/a.py").write_text("X = 1\n")
    first = hash_code_under_test(root)
    (root / "seam/a.py").write_text("X = 2\n")
    assert hash_code_under_test(root) != first


def test_a_provenance_without_seamgate_commit_names_the_projects_head(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("SEAMGATE_COMMIT", raising=False)
    root = write_project(tmp_path / "p", {"seam/core.py": "X = 1\n"})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    assert Platform().provenance("cpu-emulated", root).commit == git(root, "rev-parse", "HEAD")


def test_without_git_on_the_path_the_code_under_test_is_found_by_walking(tmp_path: Path, monkeypatch):
    root = write_project(tmp_path / "p", {"lib/a.py": "", "tests/test_x.py": ""})
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert code_under_test(root) == ["lib/a.py"]
