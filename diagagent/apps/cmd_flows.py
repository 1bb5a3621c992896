"""`diagagent flows PATH|JOB_ID [--json] [--plot OUT.png]`: what the network flows say about a job.

Job recognition, parallelism, iteration timeline, stragglers, slow links and silence; `--plot` draws the
node x iteration heatmap an SRE looks at first for a slow job.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from diagagent.apps.common import console, fail, open_bundle, print_json

if TYPE_CHECKING:
    from diagagent.analysis.flows import FlowFindings


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def render(f: FlowFindings) -> None:
    out = console()
    if not f.has_flows:
        out.print(f"[yellow]job {f.job_id}: {f.note or 'no flows'}[/]")
        return
    c, p, it = f.counts, f.parallelism, f.iterations
    head = Table(title=f"flows of job {f.job_id}", show_header=False, title_justify="left")
    head.add_column(style="bold")
    head.add_column()
    groups = (
        f"DP {len(p.dp_groups)} x {max((len(g) for g in p.dp_groups), default=0)} hosts, "
        f"PP {len(p.pp_groups)} x {max((len(g) for g in p.pp_groups), default=0)} hosts"
    )
    agree = {
        None: "job.yaml states no parallelism",
        True: "agrees with job.yaml",
        False: "differs from job.yaml",
    }
    rows = [
        (
            "records",
            f"{c.total:,}: job {c.job:,}, external {c.external:,}, foreign {c.foreign:,}, "
            f"malformed {c.malformed:,}",
        ),
        ("recognized", f.recognition),
        ("parallelism", f"{groups} ({agree[p.agrees]}; used: {p.source})"),
        ("pairs", ", ".join(f"{k} {v} ({p.bytes_share.get(k, 0):.0%} of bytes)" for k, v in p.pairs.items())),
        (
            "iterations",
            f"{it.count}, median {it.p50_s:.3f} s, p95 {it.p95_s:.3f} s, max {it.max_s:.3f} s, "
            f"{len(it.slow)} over 1.2x the median"
            if it.count
            else "none cut",
        ),
        (
            "job stops",
            f"{_when(f.silence.job_stop)}"
            + (
                f", silent {f.silence.silent_for_s:.0f} s before the capture ends"
                if f.silence.stopped
                else ""
            ),
        ),
        ("verdict", f.summary),
    ]
    if p.disagreement:
        rows.insert(3, ("disagreement", p.disagreement))
    for k, v in rows:
        head.add_row(k, v)
    out.print(head)
    if f.suspects:
        t = Table(title="suspects", title_justify="left")
        for col in ("host", "score", "from", "why"):
            t.add_column(col)
        for s in f.suspects[:10]:
            t.add_row(s.host, f"{s.score:.2f}", s.source, s.reason)
        out.print(t)
    t = Table(title="stragglers (compute gap against peers)", title_justify="left")
    for col in ("host", "ratio", "shown", "first", "flagged"):
        t.add_column(col)
    for s in f.stragglers[:5]:
        t.add_row(
            s.host,
            f"{s.ratio:.2f}x",
            f"{s.shown}/{s.iterations_total}",
            str(s.first_iteration),
            "[red]yes[/]" if s.flagged else "no",
        )
    out.print(t)
    t = Table(title="slowest host pairs (throughput against the same kind)", title_justify="left")
    for col in ("pair", "kind", "Gbit/s", "peers", "ratio", "flagged"):
        t.add_column(col)
    for x in f.slow_links[:5]:
        t.add_row(
            f"{x.src} -> {x.dst}",
            x.kind,
            f"{x.throughput_gbps:.1f}",
            f"{x.peer_median_gbps:.1f}",
            f"{x.ratio:.2f}",
            "[red]yes[/]" if x.flagged else "no",
        )
    out.print(t)
    if f.silence.first_quiet:
        out.print(f"[bold]quiet first:[/] {', '.join(f.silence.first_quiet[:8])}  ({f.silence.evidence})")


def register(app: typer.Typer) -> None:
    @app.command()
    def flows(
        target: str = typer.Argument(
            ..., help="A bundle directory or .tar.gz, or a job id / name in the jobs dir."
        ),
        json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
        plot: Path | None = typer.Option(
            None, "--plot", help="Write the node x iteration heatmap to this PNG."
        ),
    ) -> None:
        """What the flows say: recognition, parallelism, iterations, stragglers, slow links, silence."""
        from diagagent.analysis.flows import analyze_flows, plot_heatmap

        with open_bundle(target) as bundle:
            findings = analyze_flows(bundle)
        if json_out:
            print_json(findings)
        else:
            render(findings)
        if plot is not None:
            try:
                written = plot_heatmap(findings, plot)
            except (ValueError, OSError) as exc:
                fail(f"cannot draw the heatmap: {exc}")
            except ModuleNotFoundError as exc:
                fail(f"cannot draw the heatmap: {exc.name} is not installed: pip install 'diagagent[report]'")
            console(stderr=True).print(f"heatmap written to {written}")


__all__ = ["register", "render"]
