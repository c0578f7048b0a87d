"""The sweep: mutmut's generated mutants as kill-matrix rows, their cache, equivalents and command."""
