"""The report as Markdown, its pictures as PNG files in a folder beside it (`OUT_files/`), linked relatively.

Telemetry text is escaped for Markdown and for the HTML a renderer passes on; cited lines go in code fences.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from diagagent.apps.report.content import (
    FOOTNOTE,
    MAX_TEXT_CHARS,
    SCHEMA_HEADER,
    LedgerState,
    ReportData,
    Snippet,
    about,
    ledger_banner,
    clip,
    cluster_frames,
    located,
    schema_rows,
    short_list,
    summary_fields,
    target,
    when,
    where,
)
from diagagent.diagnosis import Diagnosis
from diagagent.contract import Evidence

_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")
_LEADING = re.compile(r"^([+\-=>]|\d+[.)])")


def figures_dir(out: Path) -> Path:
    """Where the PNGs of the report `out` go: `<stem>_files/` beside it."""
    return out.with_name(f"{out.stem}_files")


def write_markdown(data: ReportData, out: Path) -> None:
    """Write the PNGs (removing ones an earlier report left that this one omits), then the Markdown."""
    folder = figures_dir(out)
    links: dict[str, str] = {}
    for p in data.pictures:
        png = folder / f"{p.key}.png"
        if p.png is None:
            png.unlink(missing_ok=True)
            continue
        folder.mkdir(parents=True, exist_ok=True)
        png.write_bytes(p.png)
        links[p.key] = f"{quote(folder.name)}/{p.key}.png"
    out.write_text(render_markdown(data, links), encoding="utf-8")


def render_markdown(data: ReportData, links: dict[str, str]) -> str:
    """The whole report; `links` maps a picture's key to its relative path."""
    d, job = data.diagnosis, data.job
    cause = f"**{text(d.root_cause)}**" if d.root_cause else "_no root cause found_"
    labels, values = zip(*summary_fields(d), strict=True)
    parts = [
        f"# {text(data.title)}",
        text(about(job)),
        "## Root cause",
        f"> {cause}",
        table(list(labels), [list(values)]),
        *_faulty_nodes(d),
        *_evidence(d, data.snippets),
        *_pictures(data, links),
        *_clusters(data),
        *_schemata(d),
        *_proposals(d, data.ledger, when(data.generated_at)),
        *_notes(d.notes + data.not_checked),
        "---",
        f"_Written by diagagent on {when(data.generated_at)}. {FOOTNOTE}_",
    ]
    return "\n\n".join(parts) + "\n"


# --- escaping -----------------------------------------------------------------------------------------------


def text(s: str) -> str:
    """One line of untrusted text as literal Markdown: HTML and Markdown syntax escaped, newlines folded."""
    s = " ".join(s.split()).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _LEADING.sub(r"\\\1", _SPECIAL.sub(r"\\\1", s))


def code(s: str) -> str:
    """Untrusted text as an inline code span, whatever backticks it holds."""
    s = " ".join(s.split())
    ticks = "`" * (max((len(m) for m in re.findall(r"`+", s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def fenced(body: str) -> str:
    """A code block that no line of `body` can close early."""
    fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", body)), default=0) + 1)
    return f"{fence}text\n{body}\n{fence}"


def table(header: list[str], rows: list[list[str]]) -> str:
    """A pipe table; cells are already escaped Markdown."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _ev_links(ids: list[str]) -> str:
    return ", ".join(text(i) for i in ids)


# --- sections -----------------------------------------------------------------------------------------------


def _faulty_nodes(d: Diagnosis) -> list[str]:
    if not d.faulty_nodes:
        return ["## Faulty nodes", "_No node was singled out._"]
    rows = [
        [f"**{text(n.host)}**", f"{n.score:.2f}", text(n.reason), _ev_links(n.evidence)]
        for n in d.faulty_nodes
    ]
    return ["## Faulty nodes", table(["host", "score", "why", "evidence"], rows)]


def _evidence(d: Diagnosis, snippets: dict[str, Snippet]) -> list[str]:
    if not d.evidence:
        return ["## Evidence", "_The diagnosis cites no evidence._"]
    return ["## Evidence", *(_evidence_item(e, snippets.get(e.id)) for e in d.evidence)]


def _evidence_item(e: Evidence, snippet: Snippet | None) -> str:
    bits = [f"**{text(e.id)}**", f"**{text(e.role)}**" if e.role == "cause" else text(e.role), text(e.kind)]
    bits += [code(where(e))] if where(e) else []
    head = " · ".join(bits + [text(x) for x in located(e)]) + (f"  \n{text(e.why)}" if e.why else "")
    if snippet is None:
        return f"{head}\n\n{fenced(clip(e.text, MAX_TEXT_CHARS))}"
    return f"{head}\n\n{fenced(chr(10).join(gutter + t for gutter, t, _ in snippet.numbered()))}"


def _pictures(data: ReportData, links: dict[str, str]) -> list[str]:
    out = ["## Pictures"]
    for p in data.pictures:
        if p.key in links:
            out.append(f"![{text(p.title)}]({links[p.key]})\n\n_{text(p.title)}._ {text(p.caption)}")
        else:
            out.append(f"_{text(p.title)}: not shown: {text(p.omitted or 'not drawn')}._")
    return out


def _clusters(data: ReportData) -> list[str]:
    if not data.clusters:
        return []
    out = ["## Stack clusters"]
    for c in sorted(data.clusters, key=lambda c: (c.role != "outlier", len(c.ranks))):
        role = f"**{c.role}**" if c.role == "outlier" else c.role
        where_ = f"{len(c.ranks)} rank(s) ({text(c.ranks_text)}) on {text(short_list(c.hosts))}"
        collective = f", in {code(c.collective)}" if c.collective else ""
        out.append(f"{role}: {where_}{collective}\n\n{fenced(cluster_frames(c))}")
    if data.eviction:
        out.append(f"**Eviction set:** {text(data.eviction)}")
    return out


def _schemata(d: Diagnosis) -> list[str]:
    if not d.schemata:
        return ["## Matched schemata", "_No past failure schema matched._"]
    return [
        "## Matched schemata",
        table(SCHEMA_HEADER, [[text(cell) for cell in row] for row in schema_rows(d)]),
    ]


def _ledger_cell(state: LedgerState | None) -> str:
    return "_not recorded_" if state is None else f"**{text(state.label)}**"


def _proposals(d: Diagnosis, states: list[LedgerState | None], at: str) -> list[str]:
    if not d.proposals:
        return ["## Proposed actions", "_No action proposed._"]
    rows = []
    for i, p in enumerate(d.proposals, 1):
        warnings = "".join(f"<br>⚠ {text(w)}" for w in p.warnings)
        rows.append(
            [
                str(i),
                f"**{text(p.kind)}**",
                text(target(p)),
                text(p.reason) + warnings,
                _ev_links(p.evidence),
                _ledger_cell(states[i - 1] if i - 1 < len(states) else None),
            ]
        )
    return [
        "## Proposed actions",
        f"> **{text(ledger_banner(states, at))}**",
        table(["#", "action", "target", "reason and warnings", "evidence", "in the ledger"], rows),
    ]


def _notes(notes: list[str]) -> list[str]:
    if not notes:
        return []
    return ["## Not checked, and how to check it", "\n".join(f"- {text(n)}" for n in dict.fromkeys(notes))]
