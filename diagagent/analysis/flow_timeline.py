"""Iteration timeline from flows: the period of the gradient-sync bursts, the bursts (iteration boundaries),
and per node and iteration the end of its sync, its compute gap and its communication time.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import polars as pl

MAX_BINS = 1 << 18  # resolution of the activity signal the period is read from
MIN_BIN_S = 1e-3
MAX_GROUPS = 16  # DP groups whose activity the period is read from (the busiest)
WAKE_S = 0.005  # clock jitter: an input ending this soon after the node got ready still came before it


@dataclass(frozen=True)
class Bursts:
    """Gradient-sync bursts: runs of DP traffic between the long DP silences of the compute phases."""

    start: np.ndarray
    end: np.ndarray
    pairs: np.ndarray  # distinct DP host pairs seen in each burst
    complete: np.ndarray  # bool: the burst carried (nearly) every DP pair, so the all-reduce finished
    period_s: float | None


@dataclass(frozen=True)
class NodeTimeline:
    """Iteration k spans (bounds[k], bounds[k+1]]. Matrices are hosts x iterations, NaN where a node showed
    nothing. A node's iteration k starts where its own sync of iteration k-1 ended (`sync_end` column k) and
    ends where its own sync of iteration k ended (column k+1)."""

    bounds: np.ndarray
    sync_end: np.ndarray  # hosts x (iterations + 1): the end of the node's own sync at each boundary
    compute: np.ndarray  # from the node's last input to the moment it was ready to sync (compute gap)
    comm: np.ndarray  # time at least one of the node's flows was active

    @property
    def iterations(self) -> int:
        return max(len(self.bounds) - 1, 0)

    @property
    def node_start(self) -> np.ndarray:
        return self.sync_end[:, :-1]

    @property
    def node_end(self) -> np.ndarray:
        return self.sync_end[:, 1:]

    @property
    def node_duration(self) -> np.ndarray:
        """Per node, from the end of its previous sync to the end of this one (hosts x iterations)."""
        return self.node_end - self.node_start


def sync_period(start: np.ndarray, end: np.ndarray, group: np.ndarray) -> float | None:
    """The dominant period of DP activity: the autocorrelation of each DP group's 'a sync flow is active'
    signal, summed over groups (so that the stages of a pipeline, which sync at different moments of one
    iteration, do not look like a rhythm twice as fast). None when there is no clear period."""
    if len(start) < 4:
        return None
    lo, hi = float(start.min()), float(end.max())
    span = hi - lo
    if span <= 0:
        return None
    width = max(span / MAX_BINS, MIN_BIN_S)
    nbins = int(span / width) + 2
    ac = np.zeros(nbins // 2)
    size = 1 << int(2 * nbins - 1).bit_length()  # zero-padded to a power of two: linear, and fast
    groups, counts = np.unique(group, return_counts=True)
    for g in groups[np.argsort(-counts)][:MAX_GROUPS]:
        mine = group == g
        first = ((start[mine] - lo) / width).astype(np.int64)
        last = ((end[mine] - lo) / width).astype(np.int64) + 1
        delta = (
            np.bincount(first, minlength=nbins + 1)[: nbins + 1]
            - np.bincount(last, minlength=nbins + 1)[: nbins + 1]
        )
        active = (np.cumsum(delta)[:nbins] > 0).astype(np.float64)
        active -= active.mean()
        spectrum = np.fft.rfft(active, size)
        ac += np.fft.irfft(spectrum * np.conj(spectrum), size)[: nbins // 2]
    if ac[0] <= 0:
        return None
    ac /= ac[0]
    below = np.flatnonzero(ac < 0)
    if not len(below):
        return None
    seg = ac[below[0] :]
    if len(seg) < 3 or seg.max() < 0.1:
        return None
    peak = (seg[1:-1] >= seg[:-2]) & (seg[1:-1] >= seg[2:]) & (seg[1:-1] >= 0.6 * seg.max())
    lags = np.flatnonzero(peak)
    if not len(lags):
        return None
    return float((below[0] + lags[0] + 1) * width)


def find_bursts(
    start: np.ndarray, end: np.ndarray, nbytes: np.ndarray, pair: np.ndarray, group: np.ndarray
) -> Bursts:
    """Cut DP flows into bursts at the DP silences that are the longest within half a period of each other
    (a slow peer can leave a shorter silence inside a burst; the compute phase before it is longer). A burst
    is complete when it carries half the distinct DP pairs and half the bytes of a typical burst."""
    empty = np.array([])
    if not len(start):
        return Bursts(empty, empty, empty.astype(int), empty.astype(bool), None)
    order = np.argsort(start, kind="stable")
    s, e, b, p = start[order], end[order], nbytes[order], pair[order]
    reach = np.maximum.accumulate(e)
    gaps = s[1:] - reach[:-1]  # DP silence before flow i + 1
    period = sync_period(s, e, group[order])
    cut = np.zeros(len(gaps), dtype=bool)
    if period is not None:
        cut[_longest_apart(gaps, s[1:], floor=0.05 * period, apart=0.5 * period)] = True
    burst = np.concatenate([[0], np.cumsum(cut)])
    frame = pl.DataFrame({"burst": burst, "s": s, "e": e, "b": b, "p": p})
    stats = (
        frame.group_by("burst")
        .agg(pl.col("s").min(), pl.col("e").max(), pl.col("b").sum(), pl.col("p").n_unique())
        .sort("burst")
    )
    pairs, volume = stats["p"].to_numpy(), stats["b"].to_numpy()
    complete = (pairs >= 0.5 * np.median(pairs)) & (volume >= 0.5 * np.median(volume))
    return Bursts(stats["s"].to_numpy(), stats["e"].to_numpy(), pairs, complete, period)


def _longest_apart(gaps: np.ndarray, ends: np.ndarray, floor: float, apart: float) -> np.ndarray:
    """Indices of gaps over `floor`, taken longest first, each kept unless a kept one ends within `apart`."""
    candidates = np.flatnonzero(gaps > floor)
    candidates = candidates[np.argsort(-gaps[candidates], kind="stable")]
    kept_ends: list[float] = []
    kept: list[int] = []
    for i in candidates:
        at = bisect.bisect_left(kept_ends, ends[i])
        near = (at < len(kept_ends) and kept_ends[at] - ends[i] < apart) or (
            at > 0 and ends[i] - kept_ends[at - 1] < apart
        )
        if not near:
            kept_ends.insert(at, float(ends[i]))
            kept.append(int(i))
    return np.array(sorted(kept), dtype=np.int64)


def node_timeline(frame: pl.DataFrame, bounds: np.ndarray, peers: np.ndarray) -> NodeTimeline:
    """Per host and iteration: its own sync end, compute gap and communication time. `frame` holds the bulk
    flows (start, end, src, dst) and `sync`: whether the flow is gradient sync; `peers` gives each host's peer
    group (hosts doing the same work: its DP group).

    The compute gap is the node's own work in the iteration: from the iteration's start (the job-wide end of
    the previous sync) to the moment it was ready to sync (the first start of any sync flow touching it, in
    either direction: a transfer starts only when both ends posted it), less how late its last pipeline input
    came against its peers' (a pipeline neighbour's slowness, which it inherits). Dividing by the peers' gap
    gives the node's own slowdown, undiluted by what it waited for."""
    n_hosts = len(peers)
    k = max(len(bounds) - 1, 0)
    if not k or frame.is_empty():
        nan = np.full((n_hosts, k), np.nan)
        return NodeTimeline(bounds, np.full((n_hosts, k + 1), np.nan), nan, nan.copy())
    width = k + 1  # boundary columns: column j is the sync that ends at bounds[j]
    src, dst = frame["src"].to_numpy(), frame["dst"].to_numpy()
    start, end, sync = frame["start"].to_numpy(), frame["end"].to_numpy(), frame["sync"].to_numpy()

    def cells(node: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Flat (node, boundary column) index of each time, and whether it falls in a column."""
        col = np.searchsorted(bounds, times, side="left")
        return node * width + np.minimum(col, k), col <= k

    # each node's own sync: when it ended (per boundary) and when the node was first ready for it
    col = np.minimum(np.searchsorted(bounds, end[sync], side="left"), width)  # width: after the last boundary
    ok = np.tile(col < width, 2)
    flat = (np.concatenate([src[sync], dst[sync]]) * width + np.tile(col, 2))[ok]
    sync_end = np.full(n_hosts * width, -np.inf)
    np.maximum.at(sync_end, flat, np.tile(end[sync], 2)[ok])
    ready = np.full(n_hosts * width, np.inf)
    np.minimum.at(ready, flat, np.tile(start[sync], 2)[ok])
    sync_end = np.where(np.isfinite(sync_end), sync_end, np.nan).reshape(n_hosts, width)
    ready = np.where(np.isfinite(ready), ready, np.nan).reshape(n_hosts, width)[:, 1:]

    # the node's own work: from the iteration's start to its readiness, less what it waited for a late input
    pipe = ~sync
    inherited = _inherited_delay(src[pipe], dst[pipe], start[pipe], end[pipe], bounds, peers, n_hosts)
    compute = np.clip(ready - bounds[None, :-1] - inherited, 0.0, None)

    # communication time: the length of the union of the node's flows, charged to the iteration of each piece
    comm = _union_per_cell(src, dst, start, end, bounds, n_hosts)
    comm[np.isnan(ready)] = np.nan
    return NodeTimeline(bounds, sync_end, compute, comm)


def _union_per_cell(
    src: np.ndarray, dst: np.ndarray, start: np.ndarray, end: np.ndarray, bounds: np.ndarray, n_hosts: int
) -> np.ndarray:
    """Hosts x iterations: how long at least one flow touching the host was active, each stretch charged to
    the iteration it began in. Rows are put in (host, start) order by a stable time sort (flow exports come
    nearly in time order, which such a sort merges fast) and then a stable radix sort by host."""
    k = len(bounds) - 1
    by_time = np.argsort(start, kind="stable")
    s = np.concatenate([start[by_time], start[by_time]])
    order = np.argsort(s, kind="stable")  # merges the two sorted halves
    node = np.concatenate([src[by_time], dst[by_time]]).astype(np.int16 if n_hosts < 1 << 15 else np.int32)
    order = order[np.argsort(node[order], kind="stable")]
    node, s = node[order], s[order]
    e = np.concatenate([end[by_time], end[by_time]])[order]
    del order, by_time
    flat = node.astype(np.int64) * k + (np.searchsorted(bounds, s, side="left") - 1)
    valid = (s > bounds[0]) & (s <= bounds[-1])
    lo = float(min(s.min(), bounds[0]))
    offset = node.astype(np.float64)
    offset *= float(max(e.max(), bounds[-1])) - lo + 1.0
    reach = e - lo
    reach += offset
    np.maximum.accumulate(reach, out=reach)
    reach -= offset
    reach += lo  # the latest end so far, per host
    del offset
    first = np.empty(len(node), dtype=bool)
    first[0] = True
    np.not_equal(node[1:], node[:-1], out=first[1:])
    del node
    before = np.empty_like(reach)
    before[0] = -np.inf
    before[1:] = reach[:-1]
    del reach
    before[first] = -np.inf
    np.maximum(before, s, out=before)
    np.subtract(e, before, out=e)
    np.clip(e, 0.0, None, out=e)  # the new stretch each flow adds
    return np.bincount(flat[valid], weights=e[valid], minlength=n_hosts * k).reshape(n_hosts, k)


def _inherited_delay(
    src: np.ndarray,
    dst: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    bounds: np.ndarray,
    peers: np.ndarray,
    n_hosts: int,
) -> np.ndarray:
    """Per host and iteration: how late the node's last pipeline input arrived against its peers' same input
    (0 when on time or without pipeline traffic). The last input is the last in the schedule, which is the
    peers' median order: the same transfer between the same peer groups, the same n-th flow of the pair."""
    k = len(bounds) - 1
    delay = np.zeros((n_hosts, k))
    it = np.searchsorted(bounds, start, side="left") - 1
    inside = (it >= 0) & (it < k)
    if not inside.any():
        return delay
    it = it[inside]
    flows = pl.DataFrame(
        {
            "node": dst[inside],
            "src": src[inside],
            "start": start[inside],
            "it": it,
            "offset": start[inside] - bounds[it],
            "arrival": end[inside] - bounds[it],
            "gs": peers[src[inside]],
            "gd": peers[dst[inside]],
        }
    )
    last = (
        flows.with_columns(slot=pl.col("start").rank("ordinal").over("it", "src", "node"))
        .with_columns(
            planned=pl.col("offset").median().over("it", "gs", "gd", "slot"),
            due=pl.col("arrival").median().over("it", "gs", "gd", "slot"),
        )
        .group_by("node", "it")
        .agg((pl.col("arrival") - pl.col("due")).sort_by("planned").last().alias("late"))
    )
    delay[last["node"].to_numpy(), last["it"].to_numpy()] = np.maximum(last["late"].to_numpy(), 0.0)
    return delay
