"""Postmortem reports: `write_report(diagnosis, bundle, out)` writes HTML or Markdown, by the suffix of `out`.

HTML is one self-contained file (inline CSS, pictures as data URIs); Markdown links PNGs in a folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from diagagent.actions import LedgerEntry
    from diagagent.diagnosis import Diagnosis
    from diagagent.diagnosis.analyses import Analyses
    from diagagent.telemetry import Bundle

HTML_SUFFIXES = (".html", ".htm")
MARKDOWN_SUFFIXES = (".md", ".markdown")


class UnsupportedReportFormat(ValueError):
    """The report's file name ends in a suffix that names no format this module writes."""


def report_format(out: Path) -> str:
    """ "html" or "markdown" from the file name's suffix; anything else raises UnsupportedReportFormat."""
    suffix = out.suffix.lower()
    if suffix in HTML_SUFFIXES:
        return "html"
    if suffix in MARKDOWN_SUFFIXES:
        return "markdown"
    shown = f"'{out.suffix}'" if out.suffix else "no suffix"
    raise UnsupportedReportFormat(
        f"cannot write a report to {out.name}: {shown} is not a report format; "
        f"end the name in {' or '.join(HTML_SUFFIXES + MARKDOWN_SUFFIXES)}"
    )


def write_report(
    diagnosis: Diagnosis,
    bundle: Bundle,
    out: Path,
    *,
    analyses: Analyses | None = None,
    entries: Sequence[LedgerEntry | None] = (),
) -> Path:
    """Write the diagnosis, its evidence in context and its pictures to `out`, and return `out`.

    `.html`/`.htm`: one self-contained file, pictures embedded as base64 PNG data URIs, nothing loaded from
    elsewhere. `.md`/`.markdown`: the PNGs are written to a folder beside it named after it (`OUT_files/` for
    `OUT.md`) and linked relatively, so move the two together. Any other suffix raises UnsupportedReportFormat
    (a ValueError) before anything is computed or written. `analyses`: the incident's `Analyses`, reused so
    no analyzer runs twice; without it the report runs the analyzers it draws from. `entries`: each proposal's
    Ledger entry as it stands now (None: not recorded), so the report shows what is pending and what was decided. A picture that cannot be
    drawn is left out with the reason in its place; it never fails the report.
    """
    out = Path(out)
    fmt = report_format(out)
    from diagagent.apps.report.content import gather

    if analyses is None:
        from diagagent.diagnosis.analyses import Analyses

        analyses = Analyses(bundle)
    data = gather(diagnosis, bundle, analyses, entries)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "html":
        from diagagent.apps.report.html import render_html

        out.write_text(render_html(data), encoding="utf-8")
    else:
        from diagagent.apps.report.markdown import write_markdown

        write_markdown(data, out)
    return out
