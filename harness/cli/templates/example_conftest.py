"""Written by `seamgate init`: your own plain ``pytest`` skips this folder; ``seamgate run`` runs it.

The example's tests need torch and seamgate's seam. Without this file a project that sets no
``testpaths`` (or runs ``--doctest-modules``) would collect them in its own ``pytest`` run, which
then fails without torch, or with ``filterwarnings = error`` on a warning torch gives at import.
seamgate exports ``SEAM_ARMS`` to every pytest it starts; your own ``pytest`` (without it) ignores
this folder, so ``seamgate init`` leaves it exactly as green as it was. Delete this folder (and the
example gate and mutation) once your own gates replace the example.
"""

import os

if not os.environ.get("SEAM_ARMS"):
    collect_ignore_glob = ["*.py"]
