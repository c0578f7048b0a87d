"""The torch.cuda corpus's emulated child runs each program with the activation line on the program's first line
(the template's empty one), so every other line keeps its number: a traceback or a CUDA graph tree's stack trace in
an error message names the same line on both arms (``tests/fidelity/cuda_corpus.py``, ``source``). Before session 31
the activation line came before the program and every emulated line number was one more than the GPU's.

(Here rather than in tests/fidelity: that folder is the selection of gates with cuda arms, whose H100 record a new
file there would make stale.)"""

from __future__ import annotations

from tests.fidelity import cuda_corpus


def test_every_program_keeps_its_line_numbers_on_the_emulated_arm() -> None:
    moved = []
    for name in cuda_corpus.PROGRAMS:
        cuda, emulated = cuda_corpus.source(name, "cuda").split("\n"), cuda_corpus.source(name, "emulated").split("\n")
        if emulated[0] != cuda_corpus.ACTIVATE or emulated[1:] != cuda[1:] or cuda[0].strip():
            moved.append(name)
    assert moved == []
