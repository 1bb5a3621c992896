"""Flow analysis (LLMPrism): job recognition, parallelism, iterations, stragglers, slow links, silence.

`analyze_flows(bundle) -> FlowFindings`; `timeline`, `stragglers`, `links` and `silence` are the compact
queries the agent calls as tools; `plot_heatmap` draws the node x iteration picture. Pure and LLM-free.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, Field, PrivateAttr

from diagagent.analysis.flow_slowdown import Slowdown, describe, find_step, pipeline_steps, rank_causes
from diagagent.analysis.flow_structure import (
    Structure,
    declared_groups,
    infer_structure,
    with_declared,
)
from diagagent.analysis.flow_table import FlowCounts, FlowTable, read_job_flows
from diagagent.analysis.flow_timeline import Bursts, NodeTimeline, find_bursts, node_timeline
from diagagent.analysis.guard import Budget, odd_ranks
from diagagent.analysis.workers import Workers
from diagagent.telemetry import Bundle

SuspectSource = Literal["straggler", "slow_link", "silence", "slowdown"]
STRAGGLER_MIN_EXCESS = (
    0.05  # an iteration shows a straggler when its compute gap is 5% (or 3 sigma) over peers
)
STRAGGLER_FULL_SCORE = 0.3  # a straggler this bad (e.g. 1.5x in 60% of iterations) is a certain suspect
STRAGGLER_MIN_SHARE = 0.3  # ... in at least this share of the node's iterations
SLOW_LINK_MAX_RATIO = 0.75  # a pair is slow below 75% (or 4 sigma under) the median throughput of its kind
TOP = 10
KINDS = ("dp", "pp", "other", "light")
EXACT_PEERS = 8  # groups smaller than this compare a node with the median of the others, without itself
PAUSE_MIN_S = 1.0  # a first flow this much (and a typical iteration) later than usual means the job paused
SLOWDOWN_SUSPECT = 0.25  # a node that slowed at a job-wide slowdown this much relative to the most changed is a suspect
TINY_FLOW = 0.05  # a flow under 5% of its pair's median flow is a control message, not training traffic


# --- findings -----------------------------------------------------------------------------------------------


class Parallelism(BaseModel):
    """Which host pairs carry which traffic, and the groups that makes, against job.yaml."""

    dp_groups: list[list[str]] = Field(default_factory=list)
    pp_groups: list[list[str]] = Field(default_factory=list)
    pairs: dict[str, int] = Field(default_factory=dict)  # host pairs per kind: dp, pp, other (bulk), light
    bytes_share: dict[str, float] = Field(default_factory=dict)  # share of job bytes per kind
    method: str = ""  # how the pairs were classed
    inferred_dp_groups: int = 0
    inferred_pp_groups: int = 0
    declared: dict[str, int] | None = None  # job.yaml's parallelism
    agrees: bool | None = None  # traffic-inferred groups equal job.yaml's (None: job.yaml states none)
    disagreement: str = ""
    source: Literal["inferred", "declared", "none"] = "none"  # which groups the rest of the analysis used


class Pause(BaseModel):
    iteration: int  # the job paused before this iteration started (a checkpoint save, an evaluation)
    seconds: float


class IterationStats(BaseModel):
    """Iterations cut at the gradient-sync bursts: iteration k runs from starts[k] to boundaries[k+1], where
    starts[k] is boundaries[k] unless the job paused in between."""

    count: int = 0
    period_s: float | None = None  # the sync rhythm read from DP activity
    boundaries: list[float] = Field(default_factory=list)  # the ends of the syncs
    starts: list[float] = Field(default_factory=list)
    pauses: list[Pause] = Field(default_factory=list)
    p50_s: float | None = None
    p95_s: float | None = None
    mean_s: float | None = None
    min_s: float | None = None
    max_s: float | None = None
    slow: list[int] = Field(default_factory=list)  # iterations over 1.2x the median
    unfinished_since: float | None = None  # a sync started after the last boundary and never completed


class Straggler(BaseModel):
    host: str
    score: float  # ranking score: excess over peers x share of iterations where it shows
    ratio: float  # compute gap / the median of its peers', in the iterations where it shows
    shown: int
    iterations_total: int
    iterations: list[int] = Field(default_factory=list)  # where it shows (first 50)
    first_iteration: int | None = None
    peers: int = 0
    flagged: bool = False
    evidence: str = ""


class SlowLink(BaseModel):
    src: str
    dst: str
    kind: str  # dp | pp | other
    throughput_gbps: float
    peer_median_gbps: float
    ratio: float
    flows: int
    flagged: bool = False
    evidence: str = ""


class NodeSilence(BaseModel):
    host: str
    last_flow: float | None  # end of the last job flow touching the node
    last_send: float | None  # end of the last job flow it sent
    lead_s: float = 0.0  # how long before its peers' typical last flow it went quiet


class Silence(BaseModel):
    job_stop: float | None = None  # the job's last flow
    capture_end: float | None = None  # the last moment the bundle covers (any tenant's flow, or job end)
    silent_for_s: float | None = None
    stopped: bool = False  # the job stopped talking well before the capture ends (a hang or a death)
    first_quiet: list[str] = Field(
        default_factory=list
    )  # nodes quiet well before their peers, earliest first
    nodes: list[NodeSilence] = Field(default_factory=list)  # earliest last flow first
    evidence: str = ""


class Suspect(BaseModel):
    host: str
    score: float
    source: SuspectSource
    reason: str


class FlowFindings(BaseModel):
    """What the flows say about one job. `flagged` is False for a job whose flows show nothing wrong."""

    job_id: str
    has_flows: bool
    note: str = ""
    counts: FlowCounts = Field(default_factory=FlowCounts)
    recognition: str = ""
    hosts_seen: int = 0
    parallelism: Parallelism = Field(default_factory=Parallelism)
    iterations: IterationStats = Field(default_factory=IterationStats)
    stragglers: list[Straggler] = Field(default_factory=list)
    slow_links: list[SlowLink] = Field(default_factory=list)
    silence: Silence = Field(default_factory=Silence)
    slowdown: Slowdown | None = None  # the iteration time stepped up job-wide and stayed up
    suspects: list[Suspect] = Field(default_factory=list)
    flagged: bool = False
    summary: str = ""
    problems: list[str] = Field(default_factory=list, description="Read problems in flows/ (the first 10), each "
                                                                    "naming its file; skipped and counted.")
    _hosts: list[str] = PrivateAttr(default_factory=list)
    _timeline: NodeTimeline | None = PrivateAttr(default=None)
    _groups: list[int] = PrivateAttr(default_factory=list)  # per host: index of its peer group (plot order)

    @property
    def node_timeline(self) -> NodeTimeline | None:
        return self._timeline

    @property
    def hosts(self) -> list[str]:
        return self._hosts


# --- analysis -----------------------------------------------------------------------------------------------


def analyze_flows(bundle: Bundle, budget: Budget | None = None, workers: Workers | None = None) -> FlowFindings:
    """Everything the flows say about the job (many flow files are read by `workers`). A bundle without flows gets
    findings that say so."""
    job_id = bundle.job.job_id
    if not bundle.flow_files:
        return FlowFindings(
            job_id=job_id, has_flows=False, note="no flows in this bundle", summary="no flows in this bundle"
        )
    seen = len(bundle.issues)
    table = read_job_flows(bundle, budget, workers)
    problems = [str(i) for i in bundle.issues[seen:]][:10]
    if table.frame.is_empty():
        note = f"no flows between this job's nodes among {table.counts.total} records" + (
            f" ({len(bundle.issues) - seen} read problem(s) in flows/)" if problems else ""
        )
        return FlowFindings(
            job_id=job_id,
            has_flows=False,
            note=note,
            counts=table.counts,
            recognition=table.recognition,
            summary=note,
            problems=problems,
        )
    structure, parallelism = _parallelism(bundle, table)
    hosts_seen = len(np.unique(np.concatenate([table.frame["src"].unique(), table.frame["dst"].unique()])))
    bulk = _with_kind(table.frame, structure.edges).filter(pl.col("kind") != "light")
    table = replace(table, frame=table.frame.clear())  # the bulk flows are all that is needed from here on
    has_dp = bool((bulk["kind"] == "dp").any())
    bulk = bulk.with_columns(sync=(pl.col("kind") == "dp") if has_dp else pl.lit(True))
    sync = bulk.filter(pl.col("sync"))
    dp_group = np.full(len(table.hosts), -1, dtype=np.int64)
    for gi, members in enumerate(structure.dp_groups):
        dp_group[members] = gi
    bursts = find_bursts(
        sync["start"].to_numpy(),
        sync["end"].to_numpy(),
        sync["bytes"].to_numpy(),
        (sync["src"] * len(table.hosts) + sync["dst"]).to_numpy(),
        dp_group[sync["src"].to_numpy()],
    )
    bounds = bursts.end[bursts.complete]
    peers = _peer_groups(structure, len(table.hosts))
    tl = node_timeline(bulk, bounds, peers)
    iterations = _iteration_stats(bursts, tl, bulk)
    found_stragglers = _stragglers(tl, peers, table.hosts)
    found_links = _slow_links(bulk, table.hosts)
    quiet = _silence(bulk, table, peers, iterations)
    slowdown = _slowdown(bulk, iterations, table.hosts)
    suspects = _suspects(found_stragglers, found_links, quiet, slowdown)
    findings = FlowFindings(
        job_id=job_id,
        has_flows=True,
        problems=problems,
        counts=table.counts,
        recognition=table.recognition,
        hosts_seen=hosts_seen,
        parallelism=parallelism,
        iterations=iterations,
        stragglers=found_stragglers[:TOP],
        slow_links=found_links[:TOP],
        silence=quiet,
        suspects=suspects,
        slowdown=slowdown,
        flagged=bool(suspects) or slowdown is not None,
    )
    findings.summary = _summary(findings)
    findings._hosts = table.hosts
    findings._timeline = tl
    findings._groups = peers.tolist()
    return findings


def _parallelism(bundle: Bundle, table: FlowTable) -> tuple[Structure, Parallelism]:
    _, issue = odd_ranks(bundle.job)
    if issue is not None:
        bundle.issues.append(issue)
    inferred = infer_structure(table.frame, len(table.hosts))
    declared = declared_groups(bundle.job, table.hosts)
    structure, source, agrees, why = inferred, "inferred", None, ""
    if declared is not None:
        candidate = with_declared(inferred, declared)
        stray = candidate.edges.filter(pl.col("kind") == "other")["bytes"].sum()
        bulk = inferred.edges.filter(pl.col("kind") != "light")["bytes"].sum()
        # a kind with no traffic at all (a job that died at init, or before its first sync) is not checked
        observed = [kind for kind in ("dp", "pp") if getattr(inferred, f"{kind}_groups")]
        if observed:
            agrees = all(
                _partition(getattr(inferred, f"{kind}_groups")) == _partition(_seen(declared[kind], inferred))
                for kind in observed
            )
        if agrees is False:
            why = "traffic groups differ from job.yaml's: " + ", ".join(
                f"{kind.upper()} {len(getattr(inferred, f'{kind}_groups'))} inferred vs "
                f"{len(_seen(declared[kind], inferred))} declared"
                for kind in ("dp", "pp")
            )
        if stray <= 0.02 * max(bulk, 1.0):  # the declared layout explains the bulk traffic: use it
            structure, source = candidate, "declared"
        elif why:
            why += "; job.yaml's layout leaves much bulk traffic unexplained, so the inferred groups are used"
    edges = structure.edges
    total = max(float(edges["bytes"].sum()), 1.0)
    p = bundle.job.parallelism
    return structure, Parallelism(
        dp_groups=[[table.hosts[i] for i in g] for g in structure.dp_groups],
        pp_groups=[[table.hosts[i] for i in g] for g in structure.pp_groups],
        pairs={k: int((edges["kind"] == k).sum()) for k in KINDS},
        bytes_share={
            k: round(float(edges.filter(pl.col("kind") == k)["bytes"].sum()) / total, 4) for k in KINDS
        },
        method=inferred.method,
        inferred_dp_groups=len(inferred.dp_groups),
        inferred_pp_groups=len(inferred.pp_groups),
        declared=p.model_dump(include={"tp", "pp", "dp", "cp", "ep"}) if p else None,
        agrees=agrees,
        disagreement=why,
        source=source,
    )


def _seen(groups: list[list[int]], structure: Structure) -> list[list[int]]:
    """Declared groups restricted to hosts with training traffic (a host without it cannot be placed)."""
    bulk = structure.edges.filter(pl.col("kind") != "light")
    seen = set(bulk["a"].to_list()) | set(bulk["b"].to_list())
    return [kept for g in groups if len(kept := [h for h in g if h in seen]) > 1]


def _partition(groups: list[list[int]]) -> set[frozenset[int]]:
    return {frozenset(g) for g in groups}


def _with_kind(frame: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """Each flow with its host pair's kind (dp, pp, other, light). A flow far smaller than its pair's typical
    one (a control message sharing the pair with training traffic) is light too."""
    kinds = edges.select("a", "b", pl.col("kind").cast(pl.Enum(KINDS)), "flow_bytes")
    return (
        frame.with_columns(a=pl.min_horizontal("src", "dst"), b=pl.max_horizontal("src", "dst"))
        .join(kinds, on=["a", "b"], how="left")
        .with_columns(
            kind=pl.when(pl.col("bytes") < TINY_FLOW * pl.col("flow_bytes"))
            .then(pl.lit("light"))
            .otherwise(pl.col("kind"))
        )
        .drop("a", "b", "flow_bytes")
    )


def _peer_groups(structure: Structure, n_hosts: int) -> np.ndarray:
    """Per host, the id of the peers it is compared with: its DP group (same stage, same work), else every
    host (no DP groups found)."""
    group = np.zeros(n_hosts, dtype=np.int64)
    if structure.dp_groups:
        for gi, g in enumerate(structure.dp_groups, start=1):
            group[g] = gi
    return group


def _iteration_stats(bursts: Bursts, tl: NodeTimeline, bulk: pl.DataFrame) -> IterationStats:
    """Durations run from each iteration's start to its sync's end. An iteration starts where the previous
    sync ended, unless its first flow comes far later than usual: then the job paused in between (a checkpoint
    save, an evaluation) and the iteration starts that usual lead before its first flow."""
    bounds = tl.bounds
    unfinished = None
    if len(bursts.end) and len(bounds) and bursts.end[-1] > bounds[-1]:
        unfinished = float(bursts.start[np.flatnonzero(bursts.end > bounds[-1])[0]])
    if len(bounds) < 2:
        return IterationStats(
            period_s=bursts.period_s, boundaries=bounds.tolist(), unfinished_since=unfinished
        )
    k = len(bounds) - 1
    start = bulk["start"].to_numpy()
    it = np.searchsorted(bounds, start, side="left") - 1
    inside = (it >= 0) & (it < k)
    first = np.full(k, np.inf)
    np.minimum.at(first, it[inside], start[inside])
    lead = first - bounds[:-1]
    usual = float(np.median(lead[np.isfinite(lead)]))
    spacing = float(np.median(np.diff(bounds)))
    paused = np.isfinite(lead) & (lead - usual > max(PAUSE_MIN_S, spacing))
    starts = np.where(paused, first - usual, bounds[:-1])
    dur = bounds[1:] - starts
    p50 = float(np.median(dur))
    return IterationStats(
        count=k,
        period_s=bursts.period_s,
        boundaries=bounds.tolist(),
        starts=starts.tolist(),
        pauses=[
            Pause(iteration=int(i), seconds=round(float(starts[i] - bounds[i]), 3))
            for i in np.flatnonzero(paused)
        ],
        p50_s=p50,
        p95_s=float(np.quantile(dur, 0.95)),
        mean_s=float(dur.mean()),
        min_s=float(dur.min()),
        max_s=float(dur.max()),
        slow=np.flatnonzero(dur > 1.2 * p50).tolist(),
        unfinished_since=unfinished,
    )


@contextmanager
def _nan_quiet() -> Iterator[None]:
    """Silence numpy's warnings about empty or all-NaN slices: a node without data simply gets NaN."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _robust_sigma(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    return float(1.4826 * np.median(np.abs(x - np.median(x)))) if len(x) else 0.0


def compute_ratio(tl: NodeTimeline, peers: np.ndarray) -> np.ndarray:
    """Each node's compute gap over the median of its peers' (the other members of its group) in the same
    iteration (hosts x iterations). Small groups leave the node itself out of the median exactly."""
    ratio = np.full_like(tl.compute, np.nan)
    for gid in np.unique(peers):
        members = np.flatnonzero(peers == gid)
        block = np.where(tl.compute[members] > 0, tl.compute[members], np.nan)
        with _nan_quiet():
            if len(members) >= EXACT_PEERS:
                ratio[members] = block / np.nanmedian(block, axis=0)
                continue
            for i, n in enumerate(members):
                ratio[n] = block[i] / np.nanmedian(np.delete(block, i, axis=0), axis=0)
    return ratio


def _stragglers(tl: NodeTimeline, peers: np.ndarray, hosts: list[str]) -> list[Straggler]:
    if tl.iterations < 3:
        return []
    ratio = compute_ratio(tl, peers)
    with _nan_quiet():
        log_ratio = np.log(ratio)
    sigma = _robust_sigma(log_ratio[np.isfinite(log_ratio)])
    limit = max(np.log1p(STRAGGLER_MIN_EXCESS), 3.0 * sigma)
    out = []
    for n, host in enumerate(hosts):
        row = log_ratio[n]
        valid = np.isfinite(row)
        if valid.sum() < 3:
            continue
        shows = valid & (row > limit)
        share = shows.sum() / valid.sum()
        excess = float(np.exp(np.median(row[shows]))) if shows.any() else float(np.exp(np.median(row[valid])))
        score = max(excess - 1.0, 0.0) * share
        its = np.flatnonzero(shows)
        flagged = bool(share >= STRAGGLER_MIN_SHARE and shows.sum() >= 3)
        out.append(
            Straggler(
                host=host,
                score=round(score, 4),
                ratio=round(excess, 4),
                shown=int(shows.sum()),
                iterations_total=int(valid.sum()),
                iterations=its[:50].tolist(),
                first_iteration=int(its[0]) if len(its) else None,
                peers=int((peers == peers[n]).sum() - 1),
                flagged=flagged,
                evidence=f"compute gap {excess:.2f}x the median of its peers over {int(shows.sum())} of "
                f"{int(valid.sum())} iterations",
            )
        )
    out.sort(key=lambda s: (-s.flagged, -s.score))
    return out


def _slow_links(bulk: pl.DataFrame, hosts: list[str]) -> list[SlowLink]:
    """Per directed host pair, the median throughput of its flows against the median pair of the same kind."""
    flows = bulk.filter((pl.col("end") > pl.col("start")) & (pl.col("kind") != "light"))
    if flows.is_empty():
        return []
    size = flows.group_by("kind").agg(typical=pl.col("bytes").median())
    pairs = (
        flows.join(size, on="kind")
        .filter(pl.col("bytes") >= 0.1 * pl.col("typical"))
        .with_columns(rate=pl.col("bytes") / (pl.col("end") - pl.col("start")))
        .group_by("src", "dst", "kind")
        .agg(rate=pl.col("rate").median(), flows=pl.len())
    )
    pairs = pairs.with_columns(peer=pl.col("rate").median().over("kind"), count=pl.len().over("kind")).filter(
        pl.col("count") >= 3
    )
    if pairs.is_empty():
        return []
    pairs = pairs.with_columns(ratio=pl.col("rate") / pl.col("peer"))
    sigma = _robust_sigma(np.log(pairs["ratio"].to_numpy()))
    limit = min(SLOW_LINK_MAX_RATIO, float(np.exp(-4.0 * sigma)))
    out = []
    for src, dst, kind, rate, n, peer, ratio in (
        pairs.sort("ratio").select("src", "dst", "kind", "rate", "flows", "peer", "ratio").iter_rows()
    ):
        out.append(
            SlowLink(
                src=hosts[src],
                dst=hosts[dst],
                kind=kind,
                throughput_gbps=round(rate * 8 / 1e9, 3),
                peer_median_gbps=round(peer * 8 / 1e9, 3),
                ratio=round(ratio, 4),
                flows=n,
                flagged=ratio < limit,
                evidence=f"{kind.upper()} flows {hosts[src]} -> {hosts[dst]} run at {ratio:.2f}x the "
                f"median {kind.upper()} pair ({rate * 8 / 1e9:.1f} vs {peer * 8 / 1e9:.1f} "
                f"Gbit/s over {n} flows)",
            )
        )
        if len(out) >= 4 * TOP and not ratio < limit:
            break
    return out


def _silence(bulk: pl.DataFrame, table: FlowTable, peers: np.ndarray, its: IterationStats) -> Silence:
    n = len(table.hosts)
    last_flow = np.full(n, np.nan)
    last_send = np.full(n, np.nan)
    for col, target in (("src", last_flow), ("dst", last_flow), ("src", last_send)):
        per = bulk.group_by(col).agg(pl.col("end").max())
        idx, val = per[col].to_numpy(), per["end"].to_numpy()
        target[idx] = np.fmax(target[idx], val)
    if not np.isfinite(last_flow).any():
        return Silence(capture_end=table.capture_end)
    job_stop = float(np.nanmax(last_flow))
    silent = (table.capture_end - job_stop) if table.capture_end is not None else None
    beat = its.p50_s or its.period_s or 1.0
    stopped = bool(silent is not None and silent > max(5.0 * beat, 10.0))
    lead = np.zeros(n)  # how long before its peers' typical last flow the node's own last flow ended
    for gid in np.unique(peers):
        members = np.flatnonzero((peers == gid) & np.isfinite(last_flow))
        if len(members):
            lead[members] = np.median(last_flow[members]) - last_flow[members]
    quiet = [
        int(i)
        for i in np.argsort(np.nan_to_num(last_flow, nan=np.inf))
        if lead[i] > max(0.5 * beat, 1.0) and (stopped or lead[i] > 2.0 * beat)
    ]
    order = np.argsort(np.nan_to_num(last_flow, nan=np.inf))
    nodes = [
        NodeSilence(
            host=table.hosts[i],
            last_flow=_num(last_flow[i]),
            last_send=_num(last_send[i]),
            lead_s=round(float(lead[i]), 3),
        )
        for i in order
    ]
    evidence = f"job flows stop at {job_stop:.3f}" + (
        f", {silent:.0f} s before the capture ends" if silent else ""
    )
    if quiet:
        evidence += (
            f"; {', '.join(table.hosts[i] for i in quiet[:5])} went quiet first "
            f"({lead[quiet[0]]:.1f} s before their peers)"
        )
    return Silence(
        job_stop=job_stop,
        capture_end=table.capture_end,
        silent_for_s=_num(silent),
        stopped=stopped,
        first_quiet=[table.hosts[i] for i in quiet],
        nodes=nodes,
        evidence=evidence,
    )


def _slowdown(bulk: pl.DataFrame, its: IterationStats, hosts: list[str]) -> Slowdown | None:
    """A job-wide step up in iteration time, and the nodes whose own pipeline step grew with it."""
    if its.count < 2:
        return None
    durations = np.asarray(its.boundaries[1:]) - np.asarray(its.starts)
    step = find_step(durations)
    if step is None:
        return None
    split, before, after = step
    at = float(its.starts[split])
    pp = bulk.filter(pl.col("kind") == "pp")
    causes = []
    if not pp.is_empty():
        steps = pipeline_steps(pp["src"].to_numpy(), pp["dst"].to_numpy(), pp["start"].to_numpy(),
                               pp["end"].to_numpy(), len(hosts))
        causes = rank_causes(steps, hosts, at)
    found = Slowdown(iteration=split, at=round(at, 6), before_s=round(before, 4), after_s=round(after, 4),
                     ratio=round(after / before, 3), iterations_before=split, iterations_after=len(durations) - split,
                     causes=causes)
    found.evidence = describe(found, _clock(at))
    return found


def _clock(ts: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _num(x: float | None) -> float | None:
    return None if x is None or not np.isfinite(x) else round(float(x), 6)


def _suspects(found: list[Straggler], slow: list[SlowLink], quiet: Silence,
              slowdown: Slowdown | None = None) -> list[Suspect]:
    best: dict[str, Suspect] = {}

    def add(host: str, score: float, source: SuspectSource, reason: str) -> None:
        if host not in best or best[host].score < score:
            best[host] = Suspect(host=host, score=round(min(score, 1.0), 4), source=source, reason=reason)

    for s in found:
        if s.flagged:
            add(s.host, min(1.0, s.score / STRAGGLER_FULL_SCORE), "straggler", s.evidence)
    flagged_links = [link for link in slow if link.flagged]
    if flagged_links:
        weight: dict[str, float] = {}
        for link in flagged_links:
            for host in (link.src, link.dst):
                weight[host] = weight.get(host, 0.0) + (1.0 - link.ratio)
        top = max(weight.values())
        for host, w in weight.items():
            links = [f"{x.src}->{x.dst} {x.ratio:.2f}x" for x in flagged_links if host in (x.src, x.dst)]
            add(
                host,
                w / top * max(1.0 - min(x.ratio for x in flagged_links), 0.0),
                "slow_link",
                f"on {len(links)} slow pair(s): {', '.join(links[:4])}",
            )
    for c in [c for c in slowdown.causes if c.score >= SLOWDOWN_SUSPECT] if slowdown is not None else []:
        add(c.host, 0.9 * c.score, "slowdown",
            f"its own pipeline step grew {c.ratio:.1f}x ({c.before_s * 1e3:.0f} -> {c.after_s * 1e3:.0f} ms) when the "
            f"job's iteration time rose {slowdown.ratio:.2f}x")
    by_host = {x.host: x for x in quiet.nodes}
    for rank, host in enumerate(quiet.first_quiet):
        add(
            host,
            0.9 / (1 + 0.1 * rank),
            "silence",
            f"went quiet {by_host[host].lead_s:.1f} s before its peers, and the job then stopped talking",
        )
    return sorted(best.values(), key=lambda s: -s.score)


def _summary(f: FlowFindings) -> str:
    it = f.iterations
    parts = [
        (f"{f.counts.job} job flows ({f.counts.foreign} foreign, {f.counts.external} external) over "
         f"{f.hosts_seen} nodes")
    ]
    if it.count:
        parts.append(f"{it.count} iterations, median {it.p50_s:.3f} s, p95 {it.p95_s:.3f} s")
    flagged = [s.host for s in f.stragglers if s.flagged]
    if flagged:
        parts.append(f"straggler(s): {', '.join(flagged[:3])}")
    links = [f"{x.src}->{x.dst}" for x in f.slow_links if x.flagged]
    if links:
        parts.append(f"slow pair(s): {', '.join(links[:3])}")
    if f.silence.stopped:
        parts.append(f"job silent for the last {f.silence.silent_for_s:.0f} s")
    if f.silence.first_quiet:
        parts.append(f"quiet first: {', '.join(f.silence.first_quiet[:3])}")
    if f.slowdown is not None:
        sd = f.slowdown
        parts.append(f"job-wide slowdown {sd.before_s:.2f} s -> {sd.after_s:.2f} s per iteration from flow iteration "
                     f"{sd.iteration}" + (f", most changed: {', '.join(c.host for c in sd.causes[:3])}"
                                          if sd.causes else ", no one node's pipeline step changed with it"))
    if not f.flagged:
        parts.append("nothing abnormal in the flows")
    return "; ".join(parts)


# --- queries the agent calls as tools -----------------------------------------------------------------------

FlowSource = Bundle | FlowFindings
DEFAULT_NODES = 5
DEFAULT_ITERATIONS = 20
MAX_CELLS = 400  # nodes x iterations one timeline answer may hold


class NodeIteration(BaseModel):
    iteration: int
    start: float | None  # the end of the node's previous sync
    end: float | None  # the end of its own sync in this iteration
    duration_s: float | None
    compute_s: float | None  # compute gap: last input to ready-to-sync
    comm_s: float | None
    compute_vs_peers: float | None  # compute gap over its peers' median in the same iteration


class NodeRow(BaseModel):
    host: str
    iterations: list[NodeIteration]


class IterationSpan(BaseModel):
    iteration: int
    start: float
    end: float
    duration_s: float


class FlowView(BaseModel):
    """What every query answer starts with."""

    job_id: str
    has_flows: bool
    note: str = ""
    problems: list[str] = Field(default_factory=list)  # read problems in flows/, each naming its file


class TimelineView(FlowView):
    count: int = 0
    p50_s: float | None = None
    p95_s: float | None = None
    spans: list[IterationSpan] = Field(default_factory=list)
    nodes: list[NodeRow] = Field(default_factory=list)
    shown: str = ""


class StragglerView(FlowView):
    flagged: bool = False
    stragglers: list[Straggler] = Field(default_factory=list)
    peers: str = ""


class LinkView(FlowView):
    flagged: bool = False
    slow_links: list[SlowLink] = Field(default_factory=list)
    parallelism: dict[str, object] = Field(default_factory=dict)


class SilenceView(FlowView):
    silence: Silence = Field(default_factory=Silence)
    nodes_total: int = 0


def _node_spans(f: FlowFindings) -> tuple[np.ndarray, np.ndarray]:
    """Per node and iteration, (start, end): from its previous sync's end (or, after a pause, the iteration's
    start) to its own sync's end."""
    tl = f.node_timeline
    if tl is None:
        raise ValueError("no node timeline: the flows gave no iterations")
    pause = np.array(f.iterations.starts) - tl.bounds[:-1]
    return tl.node_start + pause[None, :], tl.node_end


def findings_of(source: FlowSource) -> FlowFindings:
    return source if isinstance(source, FlowFindings) else analyze_flows(source)


def _head(f: FlowFindings) -> dict[str, object]:
    return {"job_id": f.job_id, "has_flows": f.has_flows, "note": f.note, "problems": f.problems}


def timeline(
    source: FlowSource, nodes: Sequence[str] | None = None, iterations: Sequence[int] | None = None
) -> TimelineView:
    """Iteration spans and, per node, start / end / compute gap / comm time. Defaults: the suspects (or the
    nodes slowest against their peers) and the last 20 iterations; negative iterations count from the end."""
    f = findings_of(source)
    tl = f.node_timeline
    view = TimelineView(
        job_id=f.job_id,
        has_flows=f.has_flows,
        note=f.note or f.summary,
        problems=f.problems,
        count=f.iterations.count,
        p50_s=f.iterations.p50_s,
        p95_s=f.iterations.p95_s,
    )
    if tl is None or not tl.iterations:
        view.shown = "no iterations could be cut from the flows"
        return view
    k = tl.iterations
    index = {h: i for i, h in enumerate(f.hosts)}
    ratio = compute_ratio(tl, np.array(f._groups))
    unknown = [h for h in nodes or [] if h not in index]
    if nodes:
        rows = [index[h] for h in nodes if h in index]
    else:
        rows = [index[s.host] for s in f.suspects[:DEFAULT_NODES]]
        with _nan_quiet():
            typical = np.nanmedian(ratio, axis=1)
        rows += [int(i) for i in np.argsort(-np.nan_to_num(typical, nan=-np.inf)) if int(i) not in rows]
        rows = rows[:DEFAULT_NODES]
    wanted = (
        list(range(max(k - DEFAULT_ITERATIONS, 0), k))
        if iterations is None
        else sorted({i % k for i in iterations if -k <= i < k})
    )
    per_node = max(MAX_CELLS // max(len(rows), 1), 1)
    cut = wanted[-per_node:]
    view.spans = [
        IterationSpan(
            iteration=i,
            start=f.iterations.starts[i],
            end=float(tl.bounds[i + 1]),
            duration_s=round(float(tl.bounds[i + 1] - f.iterations.starts[i]), 6),
        )
        for i in cut
    ]
    start, end = _node_spans(f)
    dur = end - start
    view.nodes = [
        NodeRow(
            host=f.hosts[n],
            iterations=[
                NodeIteration(
                    iteration=i,
                    start=_num(start[n, i]),
                    end=_num(end[n, i]),
                    duration_s=_num(dur[n, i]),
                    compute_s=_num(tl.compute[n, i]),
                    comm_s=_num(tl.comm[n, i]),
                    compute_vs_peers=_num(ratio[n, i]),
                )
                for i in cut
            ],
        )
        for n in rows
    ]
    view.shown = (
        f"{len(rows)} of {len(f.hosts)} nodes, {len(cut)} of {k} iterations"
        + (f" (cut to the last {len(cut)} of the {len(wanted)} asked)" if len(cut) < len(wanted) else "")
        + (f"; not job nodes: {', '.join(unknown)}" if unknown else "")
    )
    return view


def stragglers(source: FlowSource, top: int = 5) -> StragglerView:
    """Nodes whose compute gap is consistently longer than their peers', ranked (flagged ones first)."""
    f = findings_of(source)
    basis = (
        "each node against the other nodes of its DP group (same pipeline stage)"
        if f.parallelism.dp_groups
        else "each node against all the job's nodes"
    )
    flagged = any(s.flagged for s in f.stragglers)
    return StragglerView(**_head(f), flagged=flagged, stragglers=f.stragglers[:top], peers=basis)


def links(source: FlowSource, top: int = 5) -> LinkView:
    """Host pairs whose throughput is low against the same kind of traffic elsewhere, and the parallelism."""
    f = findings_of(source)
    p = f.parallelism
    summary: dict[str, object] = {
        "dp_groups": len(p.dp_groups),
        "dp_group_size": max((len(g) for g in p.dp_groups), default=0),
        "pp_groups": len(p.pp_groups),
        "pp_group_size": max((len(g) for g in p.pp_groups), default=0),
        "pairs": p.pairs,
        "bytes_share": p.bytes_share,
        "declared": p.declared,
        "agrees": p.agrees,
        "source": p.source,
    }
    flagged = any(x.flagged for x in f.slow_links)
    return LinkView(**_head(f), flagged=flagged, slow_links=f.slow_links[:top], parallelism=summary)


def silence(source: FlowSource, top: int = 10) -> SilenceView:
    """When the job stopped talking, and the nodes that went quiet first (earliest last flow first)."""
    f = findings_of(source)
    quiet = f.silence.model_copy(update={"nodes": f.silence.nodes[:top]})
    return SilenceView(**_head(f), silence=quiet, nodes_total=len(f.silence.nodes))


# --- the picture -------------------------------------------------------------------------------------------


def plot_heatmap(source: FlowFindings | TimelineView, out: Path, first_iteration: int | None = None) -> Path:
    """A node x iteration heatmap (`heatmap_figure`) written as PNG with matplotlib's Agg backend."""
    fig = heatmap_figure(source, first_iteration)
    out = Path(out)
    fig.savefig(out, dpi=100)
    return out


HEATMAP_MIN_SPREAD = 0.15  # the time colors span at least the median +-15%, so a few % of noise stays faint
HEATMAP_LABELLED = 64  # up to this many nodes, every row is labelled
HEATMAP_MAX_PANEL_IN = 8.0  # a panel's height cap (800 px in the report): 1,024 nodes were 24 in a panel
HEATMAP_SPARSE_LABELS = 32  # past HEATMAP_LABELLED nodes, about this many rows are labelled, marked ones besides


def _sparse_ticks(hosts: list[str], marked: set[str]) -> list[int]:
    """Rows to label on a tall heatmap: every so many, and every marked one (an evenly spaced label too close to
    a marked one is left out, so the two do not overlap)."""
    step = max(1, len(hosts) // HEATMAP_SPARSE_LABELS)
    special = [i for i, h in enumerate(hosts) if h in marked]
    even = [i for i in range(0, len(hosts), step) if all(abs(i - j) >= step / 2 for j in special)]
    return sorted({*even, *special})


def heatmap_figure(source: FlowFindings | TimelineView, first_iteration: int | None = None,
                   highlight: Sequence[str] = ()):
    """Each node's iteration time (top) and compute gap against its peers (bottom), nodes ordered by peer group,
    suspects and `highlight` (say, the diagnosis's faulty nodes) marked, and the job's silence after its last
    iteration. `first_iteration`: the training iteration of the first one the flows show (the x axis is then in
    training iterations), when the caller knows it. Past HEATMAP_LABELLED nodes, every so many is labelled
    (and each marked one) and the picture stays HEATMAP_MAX_PANEL_IN tall a panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    hosts, its, duration, ratio, marked = _heatmap_data(source)
    marked = marked | set(highlight)
    if not hosts or not len(its):
        raise ValueError("no iterations to plot: the flows gave no iteration timeline")
    shift = first_iteration or 0
    its = its + shift
    labelled = len(hosts) <= HEATMAP_LABELLED
    height = min(1.6 + (0.17 if labelled else 0.04) * len(hosts), HEATMAP_MAX_PANEL_IN)
    fig = Figure(figsize=(10.0, 2 * height), layout="constrained")  # the report shows it at 1000 px: no shrinking
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 1, squeeze=False)
    extent = (its[0] - 0.5, its[-1] + 0.5, len(hosts) - 0.5, -0.5)
    with _nan_quiet():
        if np.isfinite(duration).any():
            lo, med, hi = np.nanpercentile(duration, [1, 50, 99])
            lo, hi = min(lo, med * (1 - HEATMAP_MIN_SPREAD)), max(hi, med * (1 + HEATMAP_MIN_SPREAD))
        else:
            lo, hi = 0.0, 1.0
    panels = (
        (duration, "iteration time per node (s)", "viridis", lo, hi),
        (ratio, "compute gap / median of its peers", "RdBu_r", 0.7, 1.3),
    )
    silence = source.silence if isinstance(source, FlowFindings) else None
    xlabel = "training iteration" if first_iteration is not None else "iteration, counted from the first in the flows"
    for ax, (data, title, cmap, vmin, vmax) in zip(axes[:, 0], panels, strict=True):
        image = ax.imshow(
            data, aspect="auto", interpolation="nearest", cmap=cmap, vmin=vmin, vmax=vmax, extent=extent
        )
        fig.colorbar(image, ax=ax, fraction=0.03)
        ax.set_title(title, fontsize=11)
        ax.set_xlabel(xlabel, fontsize=10)
        ax.tick_params(axis="x", labelsize=9)
        if labelled:
            ax.set_yticks(range(len(hosts)), [("* " if h in marked else "") + h for h in hosts], fontsize=9)
        else:
            ticks = _sparse_ticks(hosts, marked)
            ax.set_yticks(ticks, [("* " if hosts[i] in marked else "") + hosts[i] for i in ticks], fontsize=8)
            for tick in ax.get_yticklabels():
                if tick.get_text().startswith("* "):
                    tick.set_color("#d62728")
                    tick.set_fontweight("bold")
        if silence is not None and silence.stopped and silence.silent_for_s:
            ax.axvline(its[-1] + 0.5, color="#d62728", lw=2)
            ax.annotate(f"then silent {silence.silent_for_s:.0f} s", (1.0, 1.0), xycoords="axes fraction",
                        xytext=(-4, 4), textcoords="offset points", ha="right", va="bottom", fontsize=9,
                        color="#d62728", fontweight="bold")
    return fig


def _heatmap_data(
    source: FlowFindings | TimelineView,
) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, set[str]]:
    if isinstance(source, TimelineView):
        its = np.array([s.iteration for s in source.spans])
        hosts = [row.host for row in source.nodes]

        def grid(attr: str) -> np.ndarray:
            return np.array(
                [
                    [np.nan if getattr(c, attr) is None else getattr(c, attr) for c in row.iterations]
                    for row in source.nodes
                ],
                dtype=float,
            )

        return hosts, its, grid("duration_s"), grid("compute_vs_peers"), set()
    tl = source.node_timeline
    if tl is None or not tl.iterations:
        return [], np.array([]), np.empty((0, 0)), np.empty((0, 0)), set()
    groups = np.array(source._groups)
    order = np.lexsort((np.arange(len(source.hosts)), groups))
    ratio = compute_ratio(tl, groups)
    start, end = _node_spans(source)
    return (
        [source.hosts[i] for i in order],
        np.arange(tl.iterations),
        (end - start)[order],
        ratio[order],
        {s.host for s in source.suspects},
    )
