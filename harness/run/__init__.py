"""``seamgate run``: the session that plans, runs baselines and rows, judges, keeps and reports."""
