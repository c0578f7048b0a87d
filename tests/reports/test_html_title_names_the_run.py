"""The HTML report's title names the run it shows, never the `latest` link it was read through (issue 27, item 8)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from reports.render import render
from reports.results import load

RECORDED = Path(__file__).resolve().parent / "recorded" / "outcomes.json"


def _kept_run(project: Path, folder: str) -> Path:
    runs = project / ".seamgate" / "runs"
    (runs / folder).mkdir(parents=True)
    shutil.copy(RECORDED, runs / folder / "outcomes.json")
    (runs / "latest").symlink_to(folder)
    return runs / "latest"


def _title(html: str) -> str:
    found = re.search(r"<title>(.*?)</title>", html)
    if found is None:
        raise AssertionError("the page has no <title>")
    return found.group(1)


def test_a_report_read_through_latest_is_titled_with_the_project_and_the_runs_date(tmp_path: Path):
    project = tmp_path / "shop"
    latest = _kept_run(project, "20261203T101530Z-4242")
    html = render(load(latest), "html", "OK", project_root=project)
    assert _title(html) == "seamgate report: shop, run of 2026-12-03 10:15:30 UTC"
    assert "<h1>seamgate report: shop, run of 2026-12-03 10:15:30 UTC</h1>" in html


def test_a_report_of_a_folder_that_is_not_a_run_stamp_is_titled_with_the_folder_name(tmp_path: Path):
    project = tmp_path / "shop"
    latest = _kept_run(project, "nightly")
    assert _title(render(load(latest), "html", "OK", project_root=project)) == "seamgate report: shop, run nightly"
