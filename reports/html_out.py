"""HTML report: one self-contained page (inline CSS and script, no network) of a kept result.

Sections: the verdict line; the gate table (every gate arm, its verdict and message); the OWED
ledger (OWED and STALE arms with their reasons); the kill matrix, rows by test cases, with a text
box and a status select that filter its rows; the survivors of a sweep with their diffs. Rows of
the kill matrix are a sweep's mutants and the source states a gate run ran (named mutations, git
refs); its columns are the cases that turned red in at least one row, so a column is a killer.
Everything taken from a result is escaped; the script only reads the page's own attributes.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable, Sequence

from reports.junit_out import xml_safe
from reports.mutants import MutantOutcome, SweepResult
from reports.outcome import ArmOutcome, Report, RunOutcome, Verdict, counted
from reports.summary import sweep_score, verdict

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top;text-align:left}
.matrix td:first-child,.matrix td:nth-child(2){white-space:nowrap}
th{background:#f3f3f3}.msg{max-width:70em;white-space:pre-wrap;word-break:break-word}
.PASS,.killed,.timeout,.error-detected{color:#176f2c}.FAIL,.ERROR,.CRASH,.TIMEOUT,.survived,.no_coverage{color:#b00020;font-weight:600}
.OWED,.STALE,.owed,.equivalent{color:#8a6100}
.matrix th.test{writing-mode:vertical-rl;transform:rotate(180deg);max-height:18em;overflow:hidden;font-weight:400;font-size:12px}
.matrix td.k{background:#b00020;color:#fff;text-align:center}.matrix td.r{background:#e8f5e9;text-align:center}
.matrix td.i{background:#f5f5f5;color:#888;text-align:center}
pre.diff{background:#fafafa;border:1px solid #ddd;padding:.5em;overflow:auto}.add{color:#176f2c}.del{color:#b00020}
.controls{margin:.5em 0}.controls input{width:24em}
"""

#: Filters the kill matrix's rows by the text box (matched against each row's ``data-text``) and the select.
_SCRIPT = """
(function () {
  var box = document.getElementById('filter'), status = document.getElementById('status');
  if (!box || !status) { return; }
  var rows = Array.prototype.slice.call(document.querySelectorAll('#matrix tbody tr'));
  var shown = document.getElementById('shown');
  function apply() {
    var text = box.value.trim().toLowerCase(), want = status.value, count = 0;
    rows.forEach(function (row) {
      var ok = (!text || row.getAttribute('data-text').indexOf(text) !== -1) &&
               (!want || row.getAttribute('data-status') === want);
      row.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = String(count);
  }
  box.addEventListener('input', apply);
  status.addEventListener('change', apply);
  apply();
})();
"""


def _e(text: object) -> str:
    """Escaped for HTML, control characters (pytest's ANSI colours) written ``#x1B`` as in the other formats."""
    return html.escape(xml_safe(str(text)), quote=True)


@dataclass(frozen=True)
class MatrixRow:
    """One row of the kill matrix: a mutant or a source state, and what each case did on it."""

    id: str
    where: str
    status: str
    #: node id -> ``"k"`` (red: a killer), ``"r"`` (ran, stayed green), ``"i"`` (inferred from the baseline).
    cells: dict[str, str]


def mutant_row(m: MutantOutcome) -> MatrixRow:
    cells = {nodeid: "r" for nodeid in m.covered_by}
    cells.update({nodeid: "k" for nodeid in m.killers})
    return MatrixRow(m.id, f"{m.file}:{m.line} {m.mutator}".strip(), m.status, cells)


def run_row(run: RunOutcome) -> MatrixRow:
    cells = {c.nodeid: ("k" if c.red else "i" if c.inferred else "r") for c in run.cases}
    if run.end != "completed" or any(c.kind == "error" for c in run.cases):
        status = "error"
    else:
        status = "killed" if any(c.red for c in run.cases) else "survived"
    return MatrixRow(run.label, run.summary(), status, cells)


def matrix_rows(report: Report, sweep: SweepResult | None) -> list[MatrixRow]:
    """A sweep's mutants, then each distinct non-baseline run of the gate arms (by label)."""
    rows = [mutant_row(m) for m in sweep.mutants] if sweep else []
    seen: set[str] = set()
    for outcome in report.outcomes:
        for run in outcome.runs:
            if run.label not in seen and not run.label.startswith(("baseline", "working tree")):
                seen.add(run.label)
                rows.append(run_row(run))
    return rows


def _gate_table(outcomes: Sequence[ArmOutcome]) -> list[str]:
    if not outcomes:
        return ['<h2 id="gates">Gates</h2>', "<p>No gate arm in this result.</p>"]
    out = ['<h2 id="gates">Gates</h2>', '<table id="gate-table"><thead><tr><th>gate</th><th>arm</th><th>kind</th>'
           '<th>verdict</th><th>message</th></tr></thead><tbody>']
    for o in outcomes:
        out.append(f'<tr><td><code>{_e(o.gate)}</code></td><td>{_e(o.arm)}</td><td>{_e(o.kind)}</td>'
                   f'<td class="{o.verdict.value}">{o.verdict.value}</td><td class="msg">{_e(o.message)}</td></tr>')
    return out + ["</tbody></table>"]


def _ledger(outcomes: Sequence[ArmOutcome]) -> list[str]:
    owed = [o for o in outcomes if o.verdict in (Verdict.OWED, Verdict.STALE)]
    out = ['<h2 id="owed">OWED ledger</h2>']
    if not owed:
        return out + ["<p>Nothing owed: every arm was measured on this code.</p>"]
    out.append('<table id="owed-table"><thead><tr><th>gate</th><th>arm</th><th>verdict</th><th>reason</th></tr>'
               '</thead><tbody>')
    out += [f'<tr><td><code>{_e(o.gate)}</code></td><td>{_e(o.arm)}</td><td class="{o.verdict.value}">'
            f'{o.verdict.value}</td><td class="msg">{_e(o.message)}</td></tr>' for o in owed]
    return out + ["</tbody></table>"]


def _matrix(rows: Sequence[MatrixRow]) -> list[str]:
    out = ['<h2 id="kill-matrix">Kill matrix</h2>']
    if not rows:
        return out + ["<p>No mutant or mutation row in this result.</p>"]
    tests = sorted({t for r in rows for t, mark in r.cells.items() if mark == "k"})
    statuses = sorted({r.status for r in rows})
    out.append('<div class="controls"><label>filter <input id="filter" type="search" '
               'placeholder="mutant, file or test"></label> <label>status <select id="status">'
               '<option value="">all</option>'
               + "".join(f'<option value="{_e(s)}">{_e(s)}</option>' for s in statuses)
               + f'</select></label> <span id="shown">{len(rows)}</span> of {counted(len(rows), "row")}; '
               f'{len(tests)} killing cases (K red, · ran and green, i inferred)</div>')
    head = "".join(f'<th class="test" title="{_e(t)}">{_e(t.rpartition("::")[2][:60])}</th>' for t in tests)
    out.append(f'<table id="matrix" class="matrix"><thead><tr><th>row</th><th>where</th><th>status</th>'
               f'<th>killers</th>{head}</tr></thead><tbody>')
    for r in rows:
        killers = [t for t, mark in r.cells.items() if mark == "k"]
        text = " ".join([r.id, r.where, r.status, *killers]).lower()
        cells = "".join(_cell(r.cells.get(t, "")) for t in tests)
        out.append(f'<tr data-status="{_e(r.status)}" data-text="{_e(text)}"><td><code>{_e(r.id)}</code></td>'
                   f'<td>{_e(r.where)}</td><td class="{_e(r.status)}">{_e(r.status)}</td>'
                   f'<td>{len(killers)}</td>{cells}</tr>')
    return out + ["</tbody></table>"]


def _cell(mark: str) -> str:
    return {"k": '<td class="k">K</td>', "r": '<td class="r">·</td>', "i": '<td class="i">i</td>'}.get(mark, "<td></td>")


def _diff(text: str) -> str:
    lines = []
    for line in text.splitlines():
        cls = "add" if line.startswith("+") and not line.startswith("+++") else \
            "del" if line.startswith("-") and not line.startswith("---") else ""
        lines.append(f'<span class="{cls}">{_e(line)}</span>' if cls else _e(line))
    return '<pre class="diff">' + "\n".join(lines) + "</pre>"


def _sweep(sweep: SweepResult | None) -> list[str]:
    out = ['<h2 id="survivors">Survivors</h2>']
    if sweep is None:
        return out + ["<p>No sweep in this result (<code>seamgate sweep</code> writes one).</p>"]
    out.append(f'<p id="score">Sweep of {_e(", ".join(sweep.scope))} on {_e(sweep.arm)}: {_e(sweep_score(sweep))}, '
               f'{counted(len(sweep.mutants), "mutant")}, {sweep.wall:.1f} s.</p>')
    survivors = sweep.of_status("survived", "no_coverage")
    if not survivors:
        out.append("<p>No survivor.</p>")
    for m in survivors:
        out.append(f'<div class="survivor"><h3><code>{_e(m.id)}</code> <span class="{m.status}">{m.status}</span></h3>'
                   f'<p>{_e(m.file)}:{m.line} {_e(m.mutator)}; {counted(len(m.covered_by), "case")} ran on it</p>{_diff(m.diff)}</div>')
    equivalent = sweep.of_status("equivalent")
    if equivalent:
        out.append('<h3>Equivalent (out of the score)</h3><ul id="equivalent">')
        out += [f"<li><code>{_e(m.id)}</code> {_e(m.file)}:{m.line}: {_e(m.reason)}</li>" for m in equivalent]
        out.append("</ul>")
    return out


def render_html(report: Report, exit_name: str, sweep: SweepResult | None = None, title: str = "seamgate report") -> str:
    """The whole page as one string."""
    body: list[str] = [f"<h1>{_e(title)}</h1>", f'<p id="verdict">{_e(verdict(report, exit_name, sweep))}</p>']
    for run in report.baseline_red:
        red = ", ".join(c.nodeid or "(the session)" for c in run.cases if c.kind in ("failed", "error"))
        why = red or f"{run.end}: {run.detail or 'no detail'}"
        body.append(f'<p class="FAIL">BASELINE RED {_e(run.label)}: {_e(why)} ({_e(run.summary())}); '
                    'nothing else was judged</p>')
    if report.interrupted:
        body.append(f'<p class="OWED">interrupted: not finished: {_e(", ".join(report.unfinished) or "none")}</p>')
    body += _gate_table(report.outcomes)
    body += _ledger(report.outcomes)
    body += _matrix(matrix_rows(report, sweep))
    body += _sweep(sweep)
    return _page(title, body)


def _page(title: str, body: Iterable[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'\">"
            f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n" + "\n".join(body)
            + f"\n<script>{_SCRIPT}</script>\n</body></html>\n")
