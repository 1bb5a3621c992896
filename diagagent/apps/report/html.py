"""The report as one self-contained HTML page: inline CSS, pictures as base64 data URIs, nothing remote.

Every string from telemetry is HTML-escaped, and a Content-Security-Policy forbids scripts and remote loads.
"""

from __future__ import annotations

import base64
from html import escape

from diagagent.apps.report.content import (
    FOOTNOTE,
    MAX_TEXT_CHARS,
    SCHEMA_HEADER,
    LedgerState,
    ReportData,
    Snippet,
    about,
    clip,
    cluster_frames,
    ledger_banner,
    located,
    schema_rows,
    short_list,
    summary_fields,
    target,
    when,
    where,
)
from diagagent.apps.report.figures import Picture
from diagagent.contract import Evidence
from diagagent.diagnosis import Diagnosis

WIDE_FACT = 40  # a headline fact longer than this gets a line of its own (the confidence's why)
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
CSS = """
:root { --cause: #c62828; --symptom: #b36b00; --ink: #1d1d1f; --mute: #5f6368; --line: #d9dce1; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); max-width: 1100px; margin: 0 auto; padding: 24px; }
h1 { font-size: 1.6em; margin: 0 0 4px; } h2 { font-size: 1.2em; margin: 28px 0 8px;
     border-bottom: 2px solid var(--line); padding-bottom: 4px; }
.meta { color: var(--mute); margin: 0 0 16px; }
.cause-box { border-left: 6px solid var(--cause); background: #fdf3f3; padding: 12px 16px; font-size: 1.1em; }
dl.facts { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 12px 0; }
dl.facts div { min-width: 90px; }
dl.facts dt { color: var(--mute); font-size: .8em; text-transform: uppercase; }
dl.facts dd { margin: 0; font-weight: 600; }
dl.facts div.wide { flex-basis: 100%; }
dl.facts div.wide dd { font-weight: 400; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: .92em; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f4f5f7; } td.num { text-align: right; white-space: nowrap; } td.host { white-space: nowrap; }
td pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; font-size: .8em; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
            font-size: .86em; }
.ev { border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 10px 0;
      break-inside: avoid; }
.ev .head { display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: baseline; }
.ev .why { color: var(--mute); font-size: .9em; margin: 2px 0 6px; }
.tag { font-size: .75em; font-weight: 700; text-transform: uppercase; padding: 1px 6px; border-radius: 3px;
       border: 1px solid currentColor; }
.tag.cause { color: var(--cause); } .tag.symptom { color: var(--symptom); }
.tag.context { color: var(--mute); }
pre.ctx { background: #f7f7f9; border: 1px solid var(--line); padding: 6px 0; margin: 0; overflow-x: auto;
          white-space: pre-wrap; overflow-wrap: anywhere; }
pre.ctx span.l { display: block; padding: 0 8px; }
pre.ctx span.n { color: var(--mute); user-select: none; }
pre.ctx span.hit { background: #fff3b0; border-left: 4px solid var(--cause); font-weight: 600;
                   padding-left: 4px; }
figure { margin: 12px 0; break-inside: avoid; } figure img { max-width: 100%; height: auto;
         border: 1px solid var(--line); } figcaption { color: var(--mute); font-size: .9em; }
.omitted { color: var(--mute); font-style: italic; }
.pending { border: 1px solid #e0b400; background: #fffbe6; padding: 8px 12px; border-radius: 6px; }
.ledger { border: 1px solid #c8ccd0; background: #f6f8fa; padding: 8px 12px; border-radius: 6px; }
.warn { color: #8a5a00; }
footer { margin-top: 32px; color: var(--mute); font-size: .8em; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2 { break-after: avoid; } pre.ctx { overflow: visible; }
}
"""


def render_html(data: ReportData) -> str:
    """The whole page."""
    d = data.diagnosis
    body = [
        _header(data),
        _faulty_nodes(d),
        _evidence(d, data.snippets),
        _pictures(data.pictures),
        _clusters(data),
        _schemata(d),
        _proposals(d, data.ledger, when(data.generated_at)),
        _notes(d.notes + data.not_checked),
        f"<footer>Written by diagagent on {escape(when(data.generated_at))}. {escape(FOOTNOTE)}</footer>",
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(data.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body>\n</html>\n"
    )


def _header(data: ReportData) -> str:
    d, job = data.diagnosis, data.job
    facts = "".join(f'<div class="{"wide" if len(v) > WIDE_FACT else "fact"}"><dt>{escape(k)}</dt><dd>{escape(v)}</dd>'
                    "</div>" for k, v in summary_fields(d))
    cause = escape(d.root_cause) if d.root_cause else '<span class="omitted">no root cause found</span>'
    return (
        f'<h1>{escape(data.title)}</h1>\n<p class="meta">{escape(about(job))}</p>\n'
        f'<h2>Root cause</h2>\n<div class="cause-box">{cause}</div>\n<dl class="facts">{facts}</dl>'
    )


def _ev_links(ids: list[str]) -> str:
    return ", ".join(f'<a href="#ev-{escape(i)}">{escape(i)}</a>' for i in ids)


def _table(header: list[str], rows: list[list[str]], classes: dict[int, str] | None = None) -> str:
    """A table of already-escaped cells; `classes` gives a column (by index) a CSS class."""
    classes = classes or {}
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{classes[i]}">{c}</td>' if i in classes else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _faulty_nodes(d: Diagnosis) -> str:
    if not d.faulty_nodes:
        return '<h2>Faulty nodes</h2>\n<p class="omitted">No node was singled out.</p>'
    rows = [
        [f"<b>{escape(n.host)}</b>", f"{n.score:.2f}", escape(n.reason), _ev_links(n.evidence)]
        for n in d.faulty_nodes
    ]
    return "<h2>Faulty nodes</h2>\n" + _table(
        ["host", "score", "why", "evidence"], rows, {0: "host", 1: "num"}
    )


def _evidence(d: Diagnosis, snippets: dict[str, Snippet]) -> str:
    if not d.evidence:
        return '<h2>Evidence</h2>\n<p class="omitted">The diagnosis cites no evidence.</p>'
    return "<h2>Evidence</h2>\n" + "\n".join(_evidence_item(e, snippets.get(e.id)) for e in d.evidence)


def _evidence_item(e: Evidence, snippet: Snippet | None) -> str:
    bits = [
        f"<b>{escape(e.id)}</b>",
        f'<span class="tag {escape(e.role)}">{escape(e.role)}</span>',
        escape(e.kind),
    ]
    bits += [f"<code>{escape(where(e))}</code>"] if where(e) else []
    head = "".join(f"<span>{b}</span>" for b in bits + [escape(x) for x in located(e)])
    why = f'<div class="why">{escape(e.why)}</div>' if e.why else ""
    if snippet is not None:
        body = _context(snippet)
    else:
        body = f'<pre class="ctx"><span class="l">{escape(clip(e.text, MAX_TEXT_CHARS))}</span></pre>'
    return f'<div class="ev" id="ev-{escape(e.id)}"><div class="head">{head}</div>{why}{body}</div>'


def _context(s: Snippet) -> str:
    lines = [
        f'<span class="l{" hit" if hit else ""}"><span class="n">{gutter}</span>{escape(text)}</span>'
        for gutter, text, hit in s.numbered()
    ]
    return f'<pre class="ctx">{"".join(lines)}</pre>'


def _pictures(pictures: list[Picture]) -> str:
    out = ["<h2>Pictures</h2>"]
    for p in pictures:
        if p.png is None:
            out.append(f'<p class="omitted"><b>{escape(p.title)}</b>: not shown: {escape(p.omitted)}.</p>')
            continue
        uri = "data:image/png;base64," + base64.b64encode(p.png).decode("ascii")
        out.append(
            f'<figure id="fig-{p.key}"><img alt="{escape(p.title)}" src="{uri}">'
            f"<figcaption><b>{escape(p.title)}.</b> {escape(p.caption)}</figcaption></figure>"
        )
    return "\n".join(out)


def _clusters(data: ReportData) -> str:
    if not data.clusters:
        return ""
    rows = [
        [
            f'<span class="tag {"cause" if c.role == "outlier" else "context"}">{escape(c.role)}</span>',
            str(len(c.ranks)),
            escape(c.ranks_text),
            escape(short_list(c.hosts)),
            escape(c.collective or ""),
            f"<pre>{escape(cluster_frames(c))}</pre>",
        ]
        for c in sorted(data.clusters, key=lambda c: (c.role != "outlier", len(c.ranks)))
    ]
    header = ["role", "ranks", "which", "hosts", "collective", "innermost frames"]
    eviction = f"<p><b>Eviction set:</b> {escape(data.eviction)}</p>" if data.eviction else ""
    return "<h2>Stack clusters</h2>\n" + _table(header, rows, {1: "num"}) + eviction


def _schemata(d: Diagnosis) -> str:
    if not d.schemata:
        return '<h2>Matched schemata</h2>\n<p class="omitted">No past failure schema matched.</p>'
    rows = [[escape(cell) for cell in row] for row in schema_rows(d)]
    return "<h2>Matched schemata</h2>\n" + _table(SCHEMA_HEADER, rows, {4: "num", 5: "num", 6: "num"})


def _ledger_cell(state: LedgerState | None) -> str:
    if state is None:
        return '<span class="omitted">not recorded</span>'
    return f'<b class="state-{escape(state.state)}">{escape(state.label)}</b>'


def _proposals(d: Diagnosis, states: list[LedgerState | None], at: str) -> str:
    if not d.proposals:
        return '<h2>Proposed actions</h2>\n<p class="omitted">No action proposed.</p>'
    rows = [
        [
            str(i),
            f"<b>{escape(p.kind)}</b>",
            escape(target(p)),
            escape(p.reason) + "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in p.warnings),
            _ev_links(p.evidence),
            _ledger_cell(states[i - 1] if i - 1 < len(states) else None),
        ]
        for i, p in enumerate(d.proposals, 1)
    ]
    header = ["#", "action", "target", "reason and warnings", "evidence", "in the ledger"]
    banner = ledger_banner(states, at)
    waiting = any(s is None or s.state == "pending" for s in states) or len(states) < len(d.proposals)
    return f'<h2>Proposed actions</h2>\n<p class="{"pending" if waiting else "ledger"}">{escape(banner)}</p>\n' + _table(
        header, rows, {0: "num"}
    )


def _notes(notes: list[str]) -> str:
    if not notes:
        return ""
    items = "".join(f"<li>{escape(n)}</li>" for n in dict.fromkeys(notes))
    return f"<h2>Not checked, and how to check it</h2>\n<ul>{items}</ul>"
