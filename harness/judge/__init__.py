"""Judging: one judge per gate kind, red-first, lane identity, and the exit code of a judged run."""
