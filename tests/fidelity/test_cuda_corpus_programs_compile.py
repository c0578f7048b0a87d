"""The torch.cuda corpus (tests/fidelity/cuda_corpus.py) without a GPU: every program is valid Python on
both arms, the corpus has its shape, the agreement rule is strict, and the runner says how a child ended."""

from __future__ import annotations

import re

import pytest

from . import cuda_corpus, raw_cuda

NAMES = sorted(cuda_corpus.PROGRAMS)


@pytest.mark.parametrize("name", NAMES)
def test_every_program_compiles_on_both_arms(name: str) -> None:
    for arm in ("cuda", "emulated"):
        compile(cuda_corpus.source(name, arm), f"<{name} on {arm}>", "exec")


def test_the_corpus_holds_every_raw_program_and_at_least_a_hundred_in_all() -> None:
    assert len(cuda_corpus.PROGRAMS) >= 100
    assert {f"raw_{n}" for n in raw_cuda.PROGRAMS} <= set(cuda_corpus.PROGRAMS)
    assert len(cuda_corpus.PROGRAMS) - len(raw_cuda.PROGRAMS) >= 55
    assert set(cuda_corpus.CLASS) == set(cuda_corpus.PROGRAMS)


def test_names_are_snake_case_and_programs_use_no_seam_code() -> None:
    for name, src in cuda_corpus.PROGRAMS.items():
        assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", name), name
        assert "seam" not in src, name
        assert src.count('print("SIGNATURE "') == 1, name


def test_the_emulated_arm_activates_first_and_the_cuda_arm_runs_the_program_as_is() -> None:
    name = NAMES[0]
    assert cuda_corpus.source(name, "cuda") == cuda_corpus.PROGRAMS[name]
    assert cuda_corpus.source(name, "emulated").splitlines()[0] == "from seam.torch_cuda import activate; activate()"
    assert cuda_corpus.child_env("emulated")["SEAM_EMULATE_CUDA"] == "1"
    assert "SEAM_EMULATE_CUDA" not in cuda_corpus.child_env("cuda")
    with pytest.raises(ValueError):
        cuda_corpus.source(name, "cpu")


CAPTURING = "AcceleratorError: CUDA error: operation not permitted when stream is capturing"


def sig(phase="capture", error=CAPTURING, values=None, context=None, **extra) -> dict:
    return {"phase": phase, "error": error, "context": context, "values": values or {}, **extra}


def test_signatures_agree_despite_warnings_exit_codes_addresses_and_torchs_internal_location() -> None:
    a = sig(error="RuntimeError: bad pointer 0x7f00aa (Triggered internally at /pytorch/x.cpp:3.)", warnings=["w"], exit_code=0)
    b = sig(error="RuntimeError: bad  pointer 0x1234", warnings=[], exit_code=1)
    assert cuda_corpus.compare({"p": a}, {"programs": {"p": b}}) == []


@pytest.mark.parametrize(("emulated", "field"), [
    (sig(phase="capture_end"), "phase"),
    (sig(error="RuntimeError: CUDA error: operation not permitted when stream is capturing"), "error"),
    (sig(error="AcceleratorError: CUDA error: operation failed due to a previous error during capture"), "error"),
    (sig(error="AcceleratorError: CUDA error"), "error"),
    (sig(error=None), "error"),
    (sig(context=CAPTURING), "context"),
    (sig(values={"y": [2.0]}), "values"),
])
def test_any_other_difference_disagrees(emulated: dict, field: str) -> None:
    got = cuda_corpus.compare({"p": sig(values={"y": [1.0]} if field == "values" else None)}, {"p": emulated})
    assert [d["field"] for d in got] == [field]


def test_a_program_missing_on_one_side_is_a_difference() -> None:
    assert cuda_corpus.compare({"p": sig(), "q": sig()}, {"p": sig()}) == [
        {"program": "q", "field": "missing", "cuda": True, "emulated": False}]


def test_the_runner_reads_the_signature_and_says_when_a_child_died_or_hung() -> None:
    ok = cuda_corpus.run_source('print("noise"); print(\'SIGNATURE {"phase": "ok", "error": null, "values": {"a": 1}}\')', "cuda")
    assert (ok["phase"], ok["values"], ok["context"], ok["exit_code"]) == ("ok", {"a": 1}, None, 0)
    died = cuda_corpus.run_source("import sys; sys.exit(3)", "cuda")
    assert (died["phase"], died["error"]) == ("died", "exit 3")
    hung = cuda_corpus.run_source("import time; time.sleep(30)", "cuda", timeout=1)
    assert hung["phase"] == "hang"


def test_the_compare_mode_exits_1_on_a_difference(tmp_path) -> None:
    import json
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps({"provenance": {}, "programs": {"p": sig()}}))
    b.write_text(json.dumps({"provenance": {}, "programs": {"p": sig(phase="ok", error=None)}}))
    assert cuda_corpus.main(["--compare", str(a), str(a)]) == 0
    assert cuda_corpus.main(["--compare", str(a), str(b)]) == 1


def test_the_recorded_gpu_ground_truth_is_of_this_corpus_and_covers_every_program() -> None:
    import json
    from pathlib import Path
    report = json.loads((Path(__file__).resolve().parents[2] / "evidence" / "cuda-corpus-gpu.json").read_text())
    assert report["provenance"]["programs_sha256"] == cuda_corpus.programs_digest(), (
        "a program changed since a GPU measured the corpus: measure it again")
    assert set(report["programs"]) == set(cuda_corpus.PROGRAMS)
