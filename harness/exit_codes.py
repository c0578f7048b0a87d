"""The exit codes of the ``seamgate`` command: one enum, one meaning per member."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """What a ``seamgate`` process tells its caller (CI reads these)."""

    #: Every gate selected passed (arms that could not run are reported OWED, see ``OWED``).
    OK = 0
    #: At least one gate FAILED: its expectation was not met (wrong red set, lane differs, ...).
    GATE_FAILED = 1
    #: The command line or a config file was wrong: the message names the file, key and fix.
    USAGE_ERROR = 2
    #: A gate could not be evaluated: a mutation broke import/collection, no longer applies, its run timed out, ...
    GATE_ERROR = 3
    #: The baseline (the unmutated tree) was already red, or timed out or crashed, so no mutation could be judged.
    BASELINE_RED = 4
    #: ``--fail-on-owed`` was given and at least one arm was OWED (no hardware to run it).
    OWED = 5
    #: Another seamgate run holds this repository's lock.
    LOCKED = 6
    #: The environment refused us (read-only output location, full disk, missing tool).
    ENVIRONMENT = 7
    #: No gate was judged: no gate file, ``gates = []``, an ``--arm`` no gate lists, an empty shard,
    #: or every arm OWED/STALE, ``validate`` with no gate; like pytest's exit 5, checking nothing is never green.
    NOTHING_JUDGED = 8
    #: ``seamgate report --merge`` was given parts that are not one run's complete set of shards
    #: (one missing, given twice, of another N or another plan); each is named, nothing is written.
    MERGE_FAILED = 9
    #: A bug in seamgate itself: please report it with the traceback printed above.
    INTERNAL = 70
    #: Interrupted by SIGINT or SIGTERM; what finished was reported before exiting.
    INTERRUPTED = 130
