"""Iteration timeline from flows: the period of the gradient-sync bursts, the bursts (iteration boundaries),
and per node and iteration the end of its sync, its compute gap and its communication time.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import polars as pl

MAX_BINS = 1 << 20  # resolution of the activity signal the period is read from
MIN_BIN_S = 1e-3
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
    for g in np.unique(group):
        mine = group == g
        first = ((start[mine] - lo) / width).astype(np.int64)
        last = ((end[mine] - lo) / width).astype(np.int64) + 1
        delta = (
            np.bincount(first, minlength=nbins + 1)[: nbins + 1]
            - np.bincount(last, minlength=nbins + 1)[: nbins + 1]
        )
        active = (np.cumsum(delta)[:nbins] > 0).astype(np.float64)
        active -= active.mean()
        spectrum = np.fft.rfft(active, 2 * nbins)
        ac += np.fft.irfft(spectrum * np.conj(spectrum))[: nbins // 2]
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


def node_timeline(frame: pl.DataFrame, bounds: np.ndarray, n_hosts: int) -> NodeTimeline:
    """Per host and iteration: its own sync end, compute gap and communication time. `frame` holds the bulk
    flows (start, end, src, dst) and `sync`: whether the flow is gradient sync.

    The compute gap runs from the node's last input (the end of the last flow into it: a pipeline peer's
    activations or gradients, or else the previous sync) to the moment it was ready to sync: the first start
    of any sync flow touching it, in either direction, since a transfer starts only when both ends posted it.
    A node held up by a slow peer is ready on time, so only the node's own slowness lengthens its gap."""
    k = max(len(bounds) - 1, 0)
    if not k or frame.is_empty():
        nan = np.full((n_hosts, k), np.nan)
        return NodeTimeline(bounds, np.full((n_hosts, k + 1), np.nan), nan, nan.copy())
    cols = (n_hosts, k + 1)  # boundary columns: column j is the sync that ends at bounds[j]

    def boundary(times: pl.Series) -> np.ndarray:
        return np.searchsorted(bounds, times.to_numpy(), side="left")

    def per_boundary(table: pl.DataFrame, time_col: str, agg: pl.Expr) -> pl.DataFrame:
        table = table.with_columns(it=pl.Series(boundary(table[time_col])))
        return table.filter(pl.col("it") <= k).group_by("node", "it").agg(agg)

    sync = frame.filter(pl.col("sync"))
    touch = pl.concat(
        [sync.select(node="src", s="start", e="end"), sync.select(node="dst", s="start", e="end")]
    )
    per = per_boundary(touch, "e", [pl.col("e").max(), pl.col("s").min()])
    sync_end, ready = _dense(per, "e", cols, np.nan), _dense(per, "s", cols, np.nan)
    ready = ready[:, 1:]

    # the node's last input before it was ready: the previous sync, or a later non-sync flow into it
    last_input = sync_end[:, :-1].copy()
    inputs = frame.filter(~pl.col("sync")).select(node="dst", t="end").sort("node", "t")
    if not inputs.is_empty():
        times = inputs["t"].to_numpy()
        base = min(float(times[0]), float(bounds[0])) - 1.0  # keys: node * stride + time since base, sorted
        stride = max(float(times.max()), float(bounds[-1])) - base + 1.0
        keys = inputs["node"].to_numpy() * stride + (times - base)
        node_ix = np.repeat(np.arange(n_hosts), k)
        want = node_ix * stride + (np.nan_to_num(ready.ravel(), nan=base) - base) + WAKE_S
        at = np.searchsorted(keys, want, side="right") - 1
        hit = (at >= 0) & (inputs["node"].to_numpy()[np.maximum(at, 0)] == node_ix)
        t = np.where(hit, times[np.maximum(at, 0)], -np.inf).reshape(n_hosts, k)
        last_input = np.fmax(last_input, t)
    compute = np.clip(ready - last_input, 0.0, None)

    # communication time: the length of the union of the node's flows, charged to the iteration of each piece
    spans = pl.concat(
        [frame.select(node="src", s="start", e="end"), frame.select(node="dst", s="start", e="end")]
    ).sort("node", "s")
    pieces = spans.with_columns(reach=pl.col("e").cum_max().shift(1).over("node")).with_columns(
        piece=(pl.col("e") - pl.max_horizontal("s", pl.col("reach").fill_null(-np.inf))).clip(lower_bound=0.0)
    )
    comm = _dense(per_boundary(pieces, "s", pl.col("piece").sum()), "piece", cols, 0.0)[:, 1:]
    comm[np.isnan(ready)] = np.nan
    return NodeTimeline(bounds, sync_end, compute, comm)


def _dense(frame: pl.DataFrame, col: str, shape: tuple[int, int], fill: float) -> np.ndarray:
    out = np.full(shape, fill, dtype=np.float64)
    if not frame.is_empty():
        out[frame["node"].to_numpy(), frame["it"].to_numpy()] = frame[col].to_numpy()
    return out
