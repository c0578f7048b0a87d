"""Running one row: the executor, the fork server, the pytest plugins of a run, import roots, the tree guard."""
