"""The report's pictures as PNG bytes: the flows' iteration heatmap, the stack clusters, the event timeline.

Matplotlib is imported only when a picture is drawn (Agg canvas, no pyplot state); a picture that cannot be
drawn becomes a `Picture` that says why, so the report goes on without it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from diagagent.apps.report.content import when
from diagagent.apps.report.occurrences import Sighting, sightings
from diagagent.apps.report.onset import Hang, hang_of
from diagagent.diagnosis import Diagnosis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from diagagent.analysis.events import LogEvent
    from diagagent.analysis.stacks import StackCluster
    from diagagent.diagnosis.analyses import Analyses
    from diagagent.telemetry.bundle import Part

MAX_CLUSTERS = 24  # bars in the stack picture; the smallest outliers past this are counted, not drawn
MAX_MARKS = 3000  # points in the timeline
LABEL_CHARS = 70
ROLES = ("cause", "symptom")
# (role, severe) -> legend label, face color, edge color, marker, size, z-order
STYLE = {
    ("cause", True): ("cause", "#d62728", "#7f0000", "X", 110, 5),
    ("cause", False): ("cause (warning)", "#f4a3a3", "#d62728", "X", 80, 5),
    ("symptom", True): ("symptom: error", "#ff9f1c", "#b36b00", "o", 40, 4),
    ("symptom", False): ("symptom: warning", "none", "#e0a458", "o", 30, 3),
    ("other", True): ("other errors", "#c7c7c7", "#8c8c8c", "o", 25, 2),
    ("other", False): ("other warnings", "none", "#b0b0b0", "o", 22, 2),
}
CAUSE_COLOR, CASCADE_COLOR = "#d62728", "#b36b00"
STUCK_COLOR, WAITING_COLOR, PROGRESS_COLOR = "#d62728", "#ffbf70", "#7f0000"
HANG_LEGEND = ("stuck", "slow", "waiting", "last progress", "silence")  # these legend entries come first
WHERE_CHARS = 90
CASCADE_WINDOW_S = 60.0  # symptoms on many nodes within this long of each other are the cascade
HEALTHY, OUTLIER = "#4c78a8", "#d62728"
DPI = 100


@dataclass(frozen=True)
class Picture:
    """One picture of the report, or the one-line reason it is not there."""

    key: str  # heatmap | stacks | timeline: also its PNG file name
    title: str
    caption: str = ""
    png: bytes | None = None
    omitted: str = ""


@dataclass(frozen=True)
class Mark:
    """A failure-indicating line at a time on a node, for the timeline."""

    ts: float
    host: str
    role: str  # cause | symptom | other (on a hang: a line that is not the hang)
    what: str
    severe: bool = True  # an error or worse (evidence without a level counts as one)


def pictures(diagnosis: Diagnosis, analyses: Analyses) -> list[Picture]:
    """The three pictures, each drawn or omitted with its reason; none raises."""
    return [
        _safe("heatmap", "Iteration heatmap (flows)", lambda: heatmap_picture(analyses, diagnosis)),
        _safe("stacks", "Stack clusters", lambda: stacks_picture(analyses)),
        _safe("timeline", "Event timeline across nodes", lambda: timeline_picture(diagnosis, analyses)),
    ]


class Omitted(Exception):
    """A picture's data is missing; the message says what is missing, in one line."""


def _safe(key: str, title: str, build: Callable[[], tuple[str, bytes]]) -> Picture:
    try:
        caption, png = build()
    except Omitted as why:
        return Picture(key, title, omitted=str(why))
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "matplotlib":
            raise
        return Picture(key, title, omitted="matplotlib is not installed: pip install 'diagagent[report]'")
    except Exception as exc:  # a picture must never fail the report  # noqa: BLE001
        return Picture(key, title, omitted=f"could not be drawn ({type(exc).__name__}: {str(exc)[:200]})")
    return Picture(key, title, caption=caption, png=png)


def _absent(analyses: Analyses, part: Part, what: str) -> Omitted:
    """Why an analyzer's findings are absent: the bundle has no such part, or the analyzer failed."""
    if not analyses.bundle.has(part):
        return Omitted(f"no {what} in this bundle")
    return Omitted(f"the {part} analyzer gave no result (see the notes)")


# --- heatmap ------------------------------------------------------------------------------------------------


def heatmap_picture(analyses: Analyses, diagnosis: Diagnosis | None = None) -> tuple[str, bytes]:
    """(caption, PNG) of the flows' node x iteration heatmap (`heatmap_figure`): in training iterations when the
    flows stop with the job and the diagnosis names the iteration it failed at (the last one in the flows)."""
    flows = analyses.flows if analyses.bundle.has("flows") else None
    if flows is None:
        raise _absent(analyses, "flows", "network flows")
    tl = flows.node_timeline
    if tl is None or not tl.iterations:
        raise Omitted(
            f"the flows gave no iteration timeline ({flows.note or flows.summary or 'no iterations'})"
        )
    from diagagent.analysis.flows import heatmap_figure

    first = None
    failed_at = diagnosis.iteration if diagnosis is not None else None
    if failed_at is not None and flows.silence.stopped and failed_at >= tl.iterations - 1:
        first = failed_at - (tl.iterations - 1)
    png = _png(heatmap_figure(flows, first, diagnosis.faulty_hosts if diagnosis is not None else ()))
    caption = (
        "Each node's time per iteration (top) and its compute gap against its peers (bottom), nodes "
        "ordered by peer group; * marks a suspect or a node the diagnosis names"
        + (f"; iterations numbered so that the last one the flows show is {failed_at}, where the job failed"
           if first is not None else "; iterations counted from the first the flows show")
        + (f"; the red line marks where the job went silent for {flows.silence.silent_for_s:.0f} s"
           if flows.silence.stopped and flows.silence.silent_for_s else "")
        + ". " + flows.summary
    )
    return caption.strip(), png


# --- stacks -------------------------------------------------------------------------------------------------


def stacks_picture(analyses: Analyses) -> tuple[str, bytes]:
    """(caption, PNG) of the stack clusters' sizes."""
    stacks = analyses.stacks if analyses.bundle.has("stacks") else None
    if stacks is None:
        raise _absent(analyses, "stacks", "stack dumps")
    if not stacks.clusters:
        raise Omitted(f"no stack clusters ({stacks.note or 'no usable dump'})")
    outliers = sum(c.role == "outlier" for c in stacks.clusters)
    caption = (
        f"Ranks per cluster of identical main-thread stacks: {len(stacks.clusters)} cluster(s), "
        f"{outliers} outlier(s) in red; each bar is labelled with its ranks and innermost frame."
    )
    return caption, stack_clusters_png(stacks.clusters)


def stack_clusters_png(clusters: list[StackCluster]) -> bytes:
    """A bar per cluster (ranks in it), healthy first, outliers red, labelled with the innermost frame."""
    return _png(stack_clusters_figure(clusters))


def stack_clusters_figure(clusters: list[StackCluster]) -> Figure:
    """The figure behind `stack_clusters_png`: labels on two lines, counts clipped to the axes."""
    ordered = sorted(clusters, key=lambda c: (c.role != "healthy", -len(c.ranks)))
    shown, hidden = ordered[:MAX_CLUSTERS], ordered[MAX_CLUSTERS:]
    sizes = [max(len(c.ranks), 1) for c in shown]
    labels = [_plain(_label(c)) for c in shown]
    fig = _figure(11.0, 1.4 + 0.55 * len(shown))
    ax = fig.add_subplot()
    y = list(range(len(shown)))
    ax.barh(y, sizes, color=[OUTLIER if c.role == "outlier" else HEALTHY for c in shown])
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    if max(sizes) / min(sizes) >= 20:
        ax.set_xscale("log")
    for yi, n, c in zip(y, sizes, shown, strict=True):
        ax.annotate(
            _plain(f" {n}" + (f" · {c.collective}" if c.collective else "")), (n, yi), va="center", fontsize=8
        )
    ax.set_xlabel("ranks in the cluster" + (" (log scale)" if ax.get_xscale() == "log" else ""))
    title = "stack clusters: healthy (blue) vs outliers (red)"
    ax.set_title(title + (f"; {len(hidden)} smaller cluster(s) not drawn" if hidden else ""), fontsize=10)
    ax.margins(x=0.3)
    for note in ax.texts:
        note.set_clip_on(True)  # a count past the axes' edge is cut there, never past the picture's
    return fig


def _label(c: StackCluster) -> str:
    """A cluster's bar label on two short lines: its ranks, then its innermost frame."""
    ranks = f"rank {c.ranks_text}" if len(c.ranks) == 1 else f"ranks {c.ranks_text}"
    return f"{_cut(ranks, LABEL_CHARS // 2)}\n{_cut(c.top, LABEL_CHARS // 2)}"


# --- timeline -----------------------------------------------------------------------------------------------


def timeline_picture(diagnosis: Diagnosis, analyses: Analyses) -> tuple[str, bytes]:
    """(caption, PNG) of the failure-indicating events by time and node; on a hang, the hang first (`Hang`)."""
    caption, fig = timeline_view(diagnosis, analyses)
    return caption, _png(fig)


def timeline_view(diagnosis: Diagnosis, analyses: Analyses) -> tuple[str, Figure]:
    """(caption, figure) behind `timeline_picture`, for checks without a browser."""
    logs = analyses.logs if analyses.bundle.has("logs") else None
    events = [e for e in logs.events if e.role in ROLES] if logs is not None else []
    extra, not_read = sightings(analyses.bundle, events) if events else ([], "")
    marks, untimed = timeline_marks(diagnosis, events, extra)
    hang = hang_of(diagnosis, analyses)
    if hang is not None:
        marks = apart_from_hang(marks, hang, diagnosis)
    if not marks and (hang is None or hang.last_progress is None):
        if logs is None:
            raise Omitted(f"{_absent(analyses, 'logs', 'logs')}, and no cited evidence has a time")
        if not events:
            raise Omitted("the logs show no failure-indicating (cause or symptom) events")
        raise Omitted(f"none of the {len(events)} failure-indicating event(s) printed a time")
    caption = (
        "Failure-indicating lines by time and node: causes (red crosses) and the symptoms that follow "
        "(orange dots; hollow for warnings), each event at its first line on each node that shows it. "
        "Dashed lines mark the first cause and the cascade: the moment symptoms reach the most nodes "
        "within a minute."
    )
    if hang is not None and hang.kind == "slow":
        caption = (
            f"The slowdown first: {hang.headline()}. The slow node (from the flows) heads the rows, a red bar "
            "over the slower iterations (shaded) from the step up; log lines that are not the slowdown are grey: "
            "before it, or warnings on nodes that are not slow."
        )
    elif hang is not None:
        caption = (
            f"The hang first: {hang.headline()}. Stuck nodes (from the stacks) head the rows, a red bar over the "
            "silence (shaded) after the last progress; nodes whose ranks wait on them have an orange bar. "
            "Log lines that are not the hang are grey: before the last progress, or warnings on nodes that are "
            "not stuck."
        )
    if not_read:
        caption += f" Not every node's line is drawn: {not_read}."
    if untimed:
        caption += f" {untimed} of {len(events)} event(s) printed no time and are not shown."
    if len(marks) > MAX_MARKS:
        caption += f" Only the first {MAX_MARKS} of {len(marks)} lines (the strongest) are drawn."
        marks = marks[:MAX_MARKS]
    job = analyses.bundle.job
    started = job.started_at.timestamp() if job.started_at is not None else None
    return caption, timeline_figure(marks, [n.host for n in job.nodes], started, hang)


def apart_from_hang(marks: list[Mark], hang: Hang, diagnosis: Diagnosis | None = None) -> list[Mark]:
    """On a hang (or slowdown), a log line keeps its role when it came at or after the last progress (the step
    up) on a stuck (slow) node, or is an error then (the cascade), or the diagnosis cites it as a cause; the rest
    (start-up warnings, storage retries on other nodes) become `other`, drawn grey."""
    cited = {(e.host or "", e.ts) for e in (diagnosis.evidence if diagnosis is not None else []) if e.role == "cause"}

    def kept(m: Mark) -> bool:
        if (m.host, m.ts) in cited:
            return True
        if hang.last_progress is None:
            return m.host in hang.stuck
        return m.ts >= hang.last_progress and (m.host in hang.stuck or m.severe)

    return [m if kept(m) else replace(m, role="other") for m in marks]


def timeline_marks(
    diagnosis: Diagnosis, events: list[LogEvent], extra: list[Sighting]
) -> tuple[list[Mark], int]:
    """(marks, events without any time): the diagnosis's timed evidence, the events' cited occurrences, then
    `extra` sightings of them on other nodes; one mark per line."""
    marks: dict[tuple, Mark] = {}
    for e in diagnosis.evidence:
        if e.role in ROLES and e.ts is not None and e.kind != "schema":
            key = (e.file, e.line) if e.file and e.line else (e.host, e.ts, e.text[:80])
            marks.setdefault(key, Mark(e.ts, e.host or "", e.role, e.text))
    untimed = 0
    sighted = {s.event for s in extra}
    for i, event in enumerate(events):
        timed = [(loc, loc.ts) for loc in [event.first, *event.also] if loc.ts is not None]
        untimed += not timed and i not in sighted
        severe = event.level in (None, "error", "fatal")
        for loc, ts in timed:
            marks.setdefault(
                (loc.file, loc.line), Mark(ts, loc.host or "", event.role, event.template, severe)
            )
    for s in extra:
        event = events[s.event]
        severe = event.level in (None, "error", "fatal")
        marks.setdefault((s.file, s.line), Mark(s.ts, s.host, event.role, event.template, severe))
    return list(marks.values()), untimed


def timeline_figure(marks: list[Mark], host_order: list[str], started: float | None = None,
                    hang: Hang | None = None) -> Figure:
    """Scatter of marks: x time since the first, y node (job order), causes and symptoms colored; `started`
    (the job's start, epoch seconds) only names how far into the job the first mark came. With a `hang`, its
    stuck nodes head the rows and its last progress, silence and stuck ranks are drawn and listed first."""
    rank = {h: i for i, h in enumerate(host_order)}
    first_rows = hang.hosts if hang is not None else []
    hosts = first_rows + sorted({m.host for m in marks} - set(first_rows),
                                key=lambda h: (h not in rank, rank.get(h, 0), h))
    row = {h: i for i, h in enumerate(hosts)}
    times = [m.ts for m in marks]
    if hang is not None and hang.last_progress is not None:
        times += [hang.last_progress, *([hang.silent_until] if hang.silent_until is not None else [])]
    t0 = min(times)
    span = max(times) - t0
    unit, scale = ("seconds", 1.0) if span < 120 else ("minutes", 60.0)
    fig = _figure(10.0, min(2.2 + 0.3 * len(hosts), 16.0))
    ax = fig.add_subplot()
    if hang is not None:
        _draw_hang(ax, hang, row, t0, scale, t0 + span)
    for (role, severe), (label, face, edge, marker, size, z) in STYLE.items():
        pts = [m for m in marks if m.role == role and m.severe == severe]
        if pts:
            ax.scatter(
                [(m.ts - t0) / scale for m in pts],
                [row[m.host] for m in pts],
                facecolors=face,
                edgecolors=edge,
                marker=marker,
                s=size,
                linewidths=1.2,
                label=f"{label} ({len(pts)})" if role != "other" or hang is None else
                f"{label} (not the {'hang' if hang.kind == 'hang' else 'slowdown'}) ({len(pts)})",
                zorder=z,
            )
    _mark_onsets(ax, marks, t0, scale, unit)
    step = max(1, len(hosts) // 60)
    named = {row[m.host] for m in marks if m.role == "cause"} | {row[h] for h in first_rows}
    ticks = sorted(named | {i for i in range(0, len(hosts), step) if all(abs(i - j) >= step / 2 for j in named)})
    ax.set_yticks(ticks, [_plain(_host_label(hosts[i], hang)) for i in ticks], fontsize=8 if len(hosts) <= 30 else 6)
    causes = {_plain(m.host) for m in marks if m.role == "cause"}
    for tick in ax.get_yticklabels():
        if hang is not None and tick.get_text().endswith(f" {hang.word}"):
            tick.set_color(STUCK_COLOR)
            tick.set_fontweight("bold")
        elif tick.get_text() in causes:
            tick.set_color(CAUSE_COLOR)
    ax.set_ylim(len(hosts) - 0.5, -0.5)
    ax.grid(axis="y", color="#dddddd", zorder=0)
    pad = max(0.05 * span, 30.0) / scale
    ax.set_xlim(-pad, span / scale + pad)
    into = (
        f" ({(t0 - started) / 60:.1f} min into the job)" if started is not None and t0 - started >= 3 else ""
    )
    ax.set_xlabel(f"{unit} after {when(t0)}{into}")
    title = "failure-indicating events by node and time"
    if hang is not None:
        stuck = ", ".join(hang.stuck) or "no node placed"
        after = f", then silent {hang.silent_for_s:.0f} s" if hang.silent_for_s else ""
        if hang.kind == "slow":
            after = f", the job {hang.slower}" if hang.slower else ""
        title = _plain(f"the {'hang' if hang.kind == 'hang' else 'slowdown'}: {stuck} {hang.word}{after}; "
                       "log lines by node and time")
    ax.set_title(title, fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: not labels[i].startswith(HANG_LEGEND))
    ax.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    return fig


def _host_label(host: str, hang: Hang | None) -> str:
    label = host or "(no host)"
    return f"{label} {hang.word}" if hang is not None and host in hang.stuck else label


def _draw_hang(ax: Axes, hang: Hang, row: dict[str, int], t0: float, scale: float, end: float) -> None:
    """The silence (shaded) from the last progress, a line at the last progress, and a bar per stuck (red) or
    waiting (orange) node over the silence, the stuck ones labelled with where their ranks are."""
    if hang.last_progress is None:
        return
    start = (hang.last_progress - t0) / scale
    stop = ((hang.silent_until or end) - t0) / scale
    width = max(stop - start, 0.0)
    slow = hang.kind == "slow"
    if hang.silent_for_s:
        ax.axvspan(start, stop, color=STUCK_COLOR, alpha=0.08, lw=0, zorder=0,
                   label=_plain(f"slower since: {hang.slower}") if slow else
                   f"silence: {hang.silent_for_s:.0f} s without progress")
    what = f"{hang.progress_what} " if hang.progress_what else ""
    line = "slower from" if slow else "last progress:"
    ax.axvline(start, color=PROGRESS_COLOR, lw=1.5, zorder=1,
               label=_plain(f"{line} {what}at {when(hang.last_progress)[11:19]} ({hang.source})"))
    bar = max(width, 0.004 * max(stop, 1.0))
    for i, (host, where) in enumerate(hang.stuck.items()):
        ax.barh(row[host], bar, left=start, height=0.5, color=STUCK_COLOR, zorder=4,
                label=_plain(f"{hang.word} ({'flows' if slow else 'stacks'}): {', '.join(hang.stuck)}")
                if i == 0 else None)
        left = start < 0.5 * stop  # the label goes where there is room: after an early line, before a late one
        ax.annotate(_plain(_cut(where, WHERE_CHARS)), (start, row[host] + 0.25), xytext=(4 if left else -4, -2),
                    textcoords="offset points", ha="left" if left else "right", va="top", fontsize=7,
                    color=PROGRESS_COLOR, clip_on=True)
    for i, host in enumerate(h for h in hang.waiting if h not in hang.stuck):
        ax.barh(row[host], bar, left=start, height=0.3, color=WAITING_COLOR, zorder=3,
                label="waiting on it (outlier stacks)" if i == 0 else None)


def _mark_onsets(ax: Axes, marks: list[Mark], t0: float, scale: float, unit: str) -> None:
    """Dashed lines, named in the legend, at the first cause (an error, where one is) and the cascade after it."""
    causes = [m for m in marks if m.role == "cause" and m.severe] or [m for m in marks if m.role == "cause"]
    if not causes:
        return
    first = min(causes, key=lambda m: m.ts)
    clock = when(first.ts)[11:19]
    ax.axvline(
        (first.ts - t0) / scale,
        color=CAUSE_COLOR,
        ls="--",
        lw=1,
        zorder=1,
        label=_plain(f"first cause: {first.host or '?'} at {clock}"),
    )
    burst = cascade(marks, first.ts)
    if burst is not None:
        start, nodes = burst
        ax.axvline(
            (start - t0) / scale,
            color=CASCADE_COLOR,
            ls="--",
            lw=1,
            zorder=1,
            label=f"cascade: {nodes} nodes, +{(start - first.ts) / scale:.1f} {unit[:3]}",
        )


def cascade(marks: list[Mark], after: float) -> tuple[float, int] | None:
    """(start, nodes) of the CASCADE_WINDOW_S after `after` in which symptoms appear on the most nodes (two
    or more), the earliest such window on a tie; None when symptoms after `after` stay on one node."""
    later = sorted((m for m in marks if m.role == "symptom" and m.ts >= after), key=lambda m: m.ts)
    best: tuple[float, int] | None = None
    for i, m in enumerate(later):
        nodes = len({o.host for o in later[i:] if o.ts <= m.ts + CASCADE_WINDOW_S})
        if nodes >= 2 and (best is None or nodes > best[1]):
            best = (m.ts, nodes)
    return best


# --- drawing helpers ----------------------------------------------------------------------------------------


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str) -> str:
    """Telemetry text for a matplotlib label: `$` would start mathtext, so it is escaped."""
    return text.replace("$", r"\$")
