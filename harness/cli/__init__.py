"""The ``seamgate`` command line: argument parsing, dispatch, and each command's front (report, reds, init, output paths)."""
