"""The fork server imports the pytest plugins of installed distributions once, and never the project's.

Every forked run used to import each ``pytest11`` plugin afresh: on the GPU machine, ten of them
(hypothesis alone 0.77 s) made a run cost 1.6 s through the fork server against a bare session's
45 ms (``evidence/h200-db29275.txt``). The server's warm-up session now loads them, through pytest's
own rewriting import, so a run finds them imported and pytest has nothing to warn about. A plugin
whose module is project code (an editable install, or a module outside every site-packages folder,
as ``seamgate_plugin`` here) stays out of the server, which imports no project module.
"""

from __future__ import annotations

from harness.rows.executor import Executor, Run
from tests.reports.fixture_projects import shared_server, write_project


def test_an_installed_distributions_pytest_plugin_is_imported_by_the_server_and_the_projects_is_not() -> None:
    modules = set(shared_server().modules())
    assert "xdist.plugin" in modules  # pytest-xdist, from the test extra
    assert not {"seamgate_plugin", "seam"} & modules  # this project's own plugin, installed editable


def test_a_run_under_warnings_as_errors_loads_the_preloaded_plugins_without_a_rewrite_warning(tmp_path) -> None:
    tree = write_project(tmp_path / "p", {
        "pytest.ini": "[pytest]\nfilterwarnings =\n    error\n",
        "tests/test_one.py": "import sys\n\n\ndef test_xdist_came_with_the_run():\n    assert 'xdist.plugin' in sys.modules\n",
    })
    outcome = Executor(shared_server(), tmp_path / "w").execute(Run("r", tree, ("tests",), timeout=120))
    # A server that imported the plugins by a plain import makes this run die in pytest's configuration
    # (exit 70, "PytestAssertRewriteWarning: Module already imported so cannot be rewritten; xdist" on
    # stderr): checked by hand with ForkServer(preload=PRELOAD + ("xdist.plugin", ...)).
    logs = [*(tmp_path / "w").glob("runs/*/stdout.txt"), *(tmp_path / "w").glob("runs/*/stderr.txt")]
    text = "".join(p.read_text() for p in logs)
    assert outcome.exit_code == 0, text[-2000:]
    assert "already imported" not in text


def test_the_plugin_of_a_project_module_is_left_to_each_run_even_when_installed_in_site_packages() -> None:
    # A project installed with `pip install .` (not editable) has its plugin in site-packages; the
    # runner and the sweep name the project's modules, and the server leaves that plugin alone
    # (here xdist stands for such a project).
    from harness.rows.forkserver import ForkServer

    server = ForkServer(project_names=("xdist",)).start()
    try:
        modules = set(server.modules())
    finally:
        server.close()
    assert "pytest" in modules and "_pytest.junitxml" in modules
    assert not {"xdist", "xdist.plugin", "xdist.looponfail"} & modules
