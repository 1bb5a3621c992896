"""What a hang or a slowdown looks like on the report's timeline: the stuck node and ranks (from the stacks), the
last progress and the silence after it; or the slow node and the moment the job's iteration time stepped up (from
the flows). The picture shows them ahead of log warnings that have nothing to do with them: a hung or slow job
often prints no error at all, only start-up warnings and storage retries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from diagagent.diagnosis import Diagnosis

if TYPE_CHECKING:
    from diagagent.analysis.stacks import StackCluster, StackFindings
    from diagagent.diagnosis.analyses import Analyses


@dataclass(frozen=True)
class Hang:
    """A hung job's story for the timeline: who is stuck where, when progress stopped, how long the silence ran.
    With kind "slow", the same for a job-wide slowdown: the slow node, when the iteration time stepped up, and
    how long it stayed up (`stuck` then holds the slow nodes, `last_progress` the slowdown's start)."""

    stuck: dict[str, str] = field(default_factory=dict)  # host -> where its ranks are (the diagnosed culprit)
    waiting: dict[str, str] = field(default_factory=dict)  # host -> the other outlier stacks (waiting on it)
    last_progress: float | None = None  # epoch seconds: the job's last flow, or its last timed progress line
    progress_what: str = ""  # "iteration 4451"
    silent_until: float | None = None  # the end of what the bundle covers
    source: str = ""  # where the last progress comes from: "flows" or "logs"
    kind: Literal["hang", "slow"] = "hang"
    slower: str = ""  # a slowdown: "6.4 s -> 9.5 s an iteration"

    @property
    def word(self) -> str:
        """What the culprit node is: stuck, or slow."""
        return "stuck" if self.kind == "hang" else "slow"

    @property
    def silent_for_s(self) -> float | None:
        if self.last_progress is None or self.silent_until is None:
            return None
        return max(self.silent_until - self.last_progress, 0.0)

    @property
    def hosts(self) -> list[str]:
        return [*self.stuck, *[h for h in self.waiting if h not in self.stuck]]

    def headline(self) -> str:
        """`node-009 stuck (ranks ...), last progress iteration 4451 at 23:28:45, then 325 s of silence`."""
        from diagagent.apps.report.content import when

        parts = []
        if self.stuck:
            parts.append("; ".join(f"{h} {self.word} ({where})" for h, where in self.stuck.items()))
        if self.kind == "slow":
            if self.last_progress is not None:
                parts.append(f"the job slower from {self.progress_what} at {when(self.last_progress)[11:19]} "
                             f"({self.slower})")
            return ", ".join(parts)
        if self.last_progress is not None:
            what = f" ({self.progress_what})" if self.progress_what else ""
            parts.append(f"last progress{what} at {when(self.last_progress)[11:19]} by the {self.source}")
        if self.silent_for_s:
            parts.append(f"then {self.silent_for_s:.0f} s of silence")
        return ", ".join(parts)


def is_hang(diagnosis: Diagnosis, analyses: Analyses) -> bool:
    """The job is marked hung, or the diagnosis calls it a hang."""
    return "hung" in (analyses.bundle.job.status, diagnosis.status) or "hang" in (diagnosis.fault or "")


def is_slow(diagnosis: Diagnosis, analyses: Analyses) -> bool:
    """The job is marked slow, or the diagnosis calls it slow (a straggler)."""
    return "slow" in (analyses.bundle.job.status, diagnosis.status) or "straggl" in (diagnosis.fault or "")


def hang_of(diagnosis: Diagnosis, analyses: Analyses) -> Hang | None:
    """The hang's story from the stacks, flows and logs already analysed (or a slow job's, `slowdown_of`); None
    when the job is neither or nothing places it (no outlier stacks and no time of the last progress)."""
    if not is_hang(diagnosis, analyses):
        return slowdown_of(diagnosis, analyses) if is_slow(diagnosis, analyses) else None
    bundle = analyses.bundle
    stacks = analyses.stacks if bundle.has("stacks") else None
    stuck, waiting = _stuck_hosts(diagnosis, stacks, bundle.job.rank_to_host)
    last, source, until = None, "", None
    flows = analyses.flows if bundle.has("flows") else None
    if flows is not None and flows.silence.stopped and flows.silence.job_stop is not None:
        last, source, until = flows.silence.job_stop, "flows", flows.silence.capture_end
    logs = analyses.logs if bundle.has("logs") else None
    if last is None and logs is not None and logs.last_progress is not None and logs.last_progress.ts is not None:
        last, source = logs.last_progress.ts, "logs"
    if until is None and bundle.job.ended_at is not None:
        until = bundle.job.ended_at.timestamp()
    if until is None and logs is not None and logs.last_line is not None:
        until = logs.last_line.ts
    if last is None and not stuck:
        return None
    iteration = logs.last_good_iteration if logs is not None else None
    if iteration is None and diagnosis.iteration is not None:
        iteration = diagnosis.iteration - 1
    return Hang(stuck=stuck, waiting=waiting, last_progress=last,
                progress_what=f"iteration {iteration}" if iteration is not None else "", source=source,
                silent_until=until if last is not None and until is not None and until > last else None)


def slowdown_of(diagnosis: Diagnosis, analyses: Analyses) -> Hang | None:
    """A slow job's story from the flows' job-wide slowdown: the slow nodes (the diagnosis's faulty ones among the
    nodes whose own step changed most, or the one that changed most), when and how much the job slowed."""
    flows = analyses.flows if analyses.bundle.has("flows") else None
    slowdown = flows.slowdown if flows is not None else None
    if slowdown is None:
        return None
    causes = {c.host: c for c in slowdown.causes}
    slow = [h for h in diagnosis.faulty_hosts if h in causes] or [c.host for c in slowdown.causes[:1]]
    if not slow:
        return None
    end = flows.silence.capture_end if flows is not None else None
    return Hang(stuck={h: f"its own step {causes[h].before_s:.2f} s -> {causes[h].after_s:.2f} s, "
                          f"x{causes[h].ratio:.1f}" for h in slow},
                last_progress=slowdown.at, progress_what=f"flow iteration {slowdown.iteration}",
                silent_until=end if end is not None and end > slowdown.at else None, source="flows", kind="slow",
                slower=f"{slowdown.before_s:.1f} s -> {slowdown.after_s:.1f} s an iteration")


def _stuck_hosts(diagnosis: Diagnosis, stacks: StackFindings | None,
                 host_of: dict[int, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(stuck, waiting): hosts with outlier stacks and where their ranks are. Stuck: the diagnosis's faulty
    nodes among them (or, when it names none, the hosts of ranks in no collective); waiting: the others."""
    if stacks is None:
        return {}, {}
    outliers = [c for c in stacks.clusters if c.role == "outlier"]
    not_joined = set(stacks.fr_summary.not_joined_ranks) if stacks.fr_summary is not None else set()
    by_host: dict[str, list[StackCluster]] = {}
    for c in outliers:
        for host in c.hosts:
            by_host.setdefault(host, []).append(c)
    culprits = [h for h in diagnosis.faulty_hosts if h in by_host]
    if not culprits:
        culprits = [h for h, cs in by_host.items() if any(set(c.ranks) & not_joined for c in cs)]
    stuck = {h: _where(h, by_host[h], not_joined, host_of) for h in culprits}
    waiting = {h: _where(h, cs, not_joined, host_of) for h, cs in by_host.items() if h not in stuck}
    return stuck, waiting


def _where(host: str, clusters: list[StackCluster], not_joined: set[int], host_of: dict[int, str]) -> str:
    """Where the host's outlier ranks are: `ranks 24-28,30-31 in all_reduce (nccl:all_reduce); rank 29 in
    forward, in no collective` (a cluster's ranks on other hosts left out)."""
    from diagagent.analysis.stacks import rank_ranges

    parts = []
    for c in clusters:
        mine = [r for r in c.ranks if host_of.get(r, host) == host] or c.ranks
        frame = c.top.split(" (")[0]
        ranks = f"rank {mine[0]}" if len(mine) == 1 else f"ranks {rank_ranges(mine)}"
        how = f" ({c.collective})" if c.collective else (", in no collective" if set(mine) & not_joined else "")
        parts.append(f"{ranks} in {frame}{how}")
    return "; ".join(parts)
