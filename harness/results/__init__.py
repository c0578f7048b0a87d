"""Results kept between runs: the ``.seamgate/`` folder and its lock, reuse of kept rows, evidence, platforms."""
