"""The HTML report opened in a real browser: Debian's chromium, headless, driven by Playwright.

``scripts/setup.sh --with-browser`` (or ``CI=true``) installs chromium (``apt-get install chromium``), and
the test extra the ``playwright`` package;
``playwright install`` is never used (browser downloads are not reachable), Playwright drives
``/usr/bin/chromium`` with background networking off. The page must render its tables, its
filters must hide and show kill-matrix rows, nothing may go to the network, and the console must
stay free of errors. In CI (``CI`` set) a missing browser FAILS this test; only a developer
machine without chromium and without ``CI`` skips it, saying what to install.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reports.html_out import render_html
from reports.outcome import Report
from reports.results import load

CHROMIUM = Path(os.environ.get("SEAMGATE_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
RECORDED = Path(__file__).parent / "recorded"


def _browser_or_skip():
    missing = [what for what, ok in (("chromium at " + str(CHROMIUM), CHROMIUM.is_file()),
                                     ("the playwright package", _has_playwright())) if not ok]
    if missing:
        why = f"needs {' and '.join(missing)}: run `bash scripts/setup.sh --with-browser` (apt-get install chromium, as root or through sudo; pip install playwright)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set and the HTML report cannot be checked in a browser: {why}")
        pytest.skip(why)


def _has_playwright() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def browser():
    _browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _open(browser, tmp_path: Path, html: str):
    """A page with the report loaded; returns it and the list of console errors and outside requests seen."""
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on("request", lambda req: problems.append(f"request: {req.url}") if not req.url.startswith("file://") else None)
    page.goto(path.as_uri())
    return page, problems


def _visible_rows(page) -> int:
    return page.locator("#matrix tbody tr:visible").count()


def test_the_html_report_renders_its_tables_and_its_filters_work_without_a_console_error(browser, tmp_path: Path):
    kept = load(RECORDED)
    page, problems = _open(browser, tmp_path, render_html(kept.report, "GATE_ERROR", kept.sweep))
    assert page.locator("#gate-table tbody tr").count() == len(kept.report.outcomes)
    assert page.locator("#owed-table tbody tr").count() == 3  # 2 OWED, 1 STALE
    rows = page.locator("#matrix tbody tr").count()
    assert rows >= len(kept.sweep.mutants) and _visible_rows(page) == rows
    assert page.locator(".survivor pre.diff").count() == 2
    page.fill("#filter", "x_clamp")
    assert _visible_rows(page) == 2 and page.locator("#shown").inner_text() == "2"
    page.fill("#filter", "test_clamp_edges")  # a killer's name finds the rows it killed
    assert _visible_rows(page) == 1
    page.fill("#filter", "")
    page.select_option("#status", "survived")
    statuses = page.locator("#matrix tbody tr:visible td:nth-child(3)").all_inner_texts()
    assert statuses and set(statuses) == {"survived"}
    page.select_option("#status", "")
    assert _visible_rows(page) == rows
    assert problems == []
    page.close()


def test_a_result_with_nothing_to_filter_still_renders_without_a_console_error(browser, tmp_path: Path):
    page, problems = _open(browser, tmp_path, render_html(Report(), "NOTHING_JUDGED"))
    assert "no gate judged" in page.locator("#verdict").inner_text()
    assert problems == []
    page.close()


def test_the_browser_check_fails_in_ci_when_chromium_is_missing(monkeypatch):
    """The guard itself: with CI set and no browser, the test fails instead of skipping."""
    import tests.reports.test_report_html_browser as me

    monkeypatch.setattr(me, "CHROMIUM", Path("/nonexistent/chromium"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        me._browser_or_skip()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        me._browser_or_skip()
