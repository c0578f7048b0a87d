"""Planning: gates -> checks and the kill-matrix rows they read, and the ``--dry-run`` preview."""
