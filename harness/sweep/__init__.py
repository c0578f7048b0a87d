"""The sweep: mutmut's generated mutants as kill-matrix rows, their kept outcomes, equivalents and command."""
