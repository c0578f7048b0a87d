"""docs/fidelity.md is what the two recorded torch.cuda corpus runs say, and every difference is documented."""

from __future__ import annotations

import pytest

from tests.fidelity import cuda_table
from tests.fidelity.cuda_corpus import PROGRAMS, programs_digest


@pytest.fixture(scope="module")
def runs() -> tuple[dict, dict]:
    return cuda_table.load()


def test_both_runs_measured_todays_corpus(runs: tuple[dict, dict]) -> None:
    cuda, emulated = runs
    assert len(PROGRAMS) >= 100
    for run in (cuda, emulated):
        assert run["provenance"]["programs_sha256"] == programs_digest(), (
            f"{run['provenance']['arm']} run measured another corpus: run `python -m tests.fidelity.cuda_corpus "
            f"--arm {run['provenance']['arm']} --out evidence/cuda-corpus-...json` again")
        assert set(run["programs"]) == set(PROGRAMS)


def test_every_program_agrees_or_is_a_documented_exception(runs: tuple[dict, dict]) -> None:
    verdicts = cuda_table.verdicts(*runs)
    assert sorted(n for n, v in verdicts.items() if v == "other") == []


def test_every_documented_exception_still_differs(runs: tuple[dict, dict]) -> None:
    verdicts = cuda_table.verdicts(*runs)
    assert sorted(n for n in cuda_table.EXCEPTIONS if verdicts.get(n) != "documented") == [], \
        "an exception that agrees now is no longer one: delete it from cuda_table.EXCEPTIONS"


def test_docs_fidelity_md_is_what_the_runs_say(runs: tuple[dict, dict]) -> None:
    assert cuda_table.DOC.read_text() == cuda_table.render(*runs, cuda_table.load_same_torch()), \
        f"docs/fidelity.md is stale: run `{cuda_table.REGENERATE}`"


def test_on_the_h200s_torch_release_only_the_emulators_own_exceptions_differ(runs: tuple[dict, dict]) -> None:
    cuda, _ = runs
    same = cuda_table.load_same_torch()
    assert same is not None, f"no {cuda_table.SAME_TORCH.name}: run `bash scripts/torch_release_check.sh 2.11.0`"
    assert same["provenance"]["torch"].split("+")[0] == cuda["provenance"]["torch"].split("+")[0]
    assert same["provenance"]["programs_sha256"] == programs_digest()
    verdicts = cuda_table.verdicts(cuda, same)
    assert sorted(n for n, v in verdicts.items() if v == "other") == []
    assert sorted(n for n in cuda_table.RELEASE_WORDS if verdicts[n] != "agree") == []
