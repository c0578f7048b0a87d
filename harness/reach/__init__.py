"""Reach: which test cases can see a change, by line and by name, and what changed since the kept run."""
