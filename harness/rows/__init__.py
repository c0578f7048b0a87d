"""Running rows: the executor, the fork server, the row pool, the pytest plugins of a run, import roots, the tree guard."""
