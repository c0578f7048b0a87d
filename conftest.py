"""Root conftest: load the seam pytest plugin where seamgate is not installed (a copied tree on a GPU machine).

Installed seamgate registers ``seam.pytest_plugin`` through its ``pytest11`` entry point; loading it a
second time here would be an error, so this only fills the gap.
"""

from importlib.metadata import entry_points

if not any(ep.value == "seam.pytest_plugin" for ep in entry_points(group="pytest11")):
    pytest_plugins = ["seam.pytest_plugin"]
