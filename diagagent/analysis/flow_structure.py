"""Parallelism from flows: host pairs classed as DP gradient sync, PP point-to-point or other (light control
traffic, or bulk traffic of neither kind); groups inferred from traffic alone, then checked against job.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl

from diagagent.analysis.guard import MAX_RANK
from diagagent.telemetry import Job

EdgeKind = Literal["dp", "pp", "other", "light"]  # light: control traffic, too little to be training
LIGHT_SHARE = 1e-3  # a pair carrying less than this share of a typical bulk pair's bytes is control traffic
MIN_PAIR_FLOWS = 3  # a pair with fewer flows carried a rendezvous or a probe, not training
MIN_SPLIT = np.log(3.0)  # two classes of bulk pairs only when their typical flow sizes differ by 3x or more


@dataclass(frozen=True)
class Structure:
    """Every host pair with job traffic, its kind, and the groups the kinds make."""

    edges: pl.DataFrame  # a, b (host index, a < b), flows, bytes, flow_bytes (median), kind
    dp_groups: list[list[int]]
    pp_groups: list[list[int]]
    method: str


def pair_stats(frame: pl.DataFrame) -> pl.DataFrame:
    """Per undirected host pair: flow count, bytes, and the median bytes of one flow."""
    return (
        frame.lazy()
        .with_columns(a=pl.min_horizontal("src", "dst"), b=pl.max_horizontal("src", "dst"))
        .group_by("a", "b")
        .agg(flows=pl.len(), bytes=pl.col("bytes").sum(), flow_bytes=pl.col("bytes").median())
        .sort("a", "b")
        .collect()
    )


def _two_means(x: np.ndarray) -> tuple[np.ndarray, float]:
    """Split 1-D values in a low and a high class (best sorted cut); returns (is_high, gap of the means)."""
    order = np.argsort(x)
    xs = x[order]
    n = len(xs)
    if n < 2:
        return np.zeros(n, dtype=bool), 0.0
    csum, csq = np.cumsum(xs), np.cumsum(xs * xs)
    k = np.arange(1, n)
    left = csq[:-1] - csum[:-1] ** 2 / k
    right_sum, right_sq = csum[-1] - csum[:-1], csq[-1] - csq[:-1]
    right = right_sq - right_sum**2 / (n - k)
    cut = int(np.argmin(left + right)) + 1
    is_high = np.zeros(n, dtype=bool)
    is_high[order[cut:]] = True
    return is_high, float(xs[cut:].mean() - xs[:cut].mean())


def components(n_hosts: int, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected groups (two or more hosts) of the graph the pairs make, sorted, ordered by first host."""
    parent = list(range(n_hosts))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in range(n_hosts):
        groups.setdefault(find(i), []).append(i)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: g[0])


def infer_structure(frame: pl.DataFrame, n_hosts: int) -> Structure:
    """Class host pairs from traffic alone. Light pairs are control traffic (little data, or a flow or two:
    a rendezvous). Among bulk pairs, gradient sync moves few large flows and pipeline sends many smaller ones:
    two classes when flow sizes split clearly, DP the larger. One class is DP when its pairs close rings (or
    only pair hosts up), PP when they chain hosts into open lines of three or more."""
    edges = pair_stats(frame)
    if edges.is_empty():
        return Structure(edges.with_columns(kind=pl.lit("light")), [], [], "no traffic between job nodes")
    heavy = float(np.quantile(edges["bytes"].to_numpy(), 0.9))
    bulk = ((edges["bytes"] >= LIGHT_SHARE * heavy) & (edges["flows"] >= MIN_PAIR_FLOWS)).to_numpy()
    size = np.log(np.maximum(edges["flow_bytes"].to_numpy(), 1.0))
    kind = np.full(len(edges), "light", dtype=object)
    is_high, gap = _two_means(size[bulk])
    if not bulk.any():
        method = "no training traffic between job nodes (only control messages)"
    elif gap >= MIN_SPLIT:
        kind[np.flatnonzero(bulk)] = np.where(is_high, "dp", "pp")
        method = (
            f"bulk pairs split by typical flow size ({np.exp(gap):.1f}x apart): larger = DP, smaller = PP"
        )
    else:
        pairs = list(
            zip(edges["a"].to_numpy()[bulk].tolist(), edges["b"].to_numpy()[bulk].tolist(), strict=True)
        )
        lines = _open_lines(n_hosts, pairs)
        kind[bulk] = "pp" if lines else "dp"
        method = (
            "bulk pairs share one typical flow size and chain hosts into open lines: pipeline sends"
            if lines
            else "bulk pairs share one typical flow size: data-parallel gradient sync"
        )
    edges = edges.with_columns(kind=pl.Series(kind.tolist(), dtype=pl.String))
    return _with_groups(edges, n_hosts, method)


def _open_lines(n_hosts: int, pairs: list[tuple[int, int]]) -> bool:
    """Whether every connected group of the pairs is a simple open path of three or more hosts."""
    groups = components(n_hosts, pairs)
    degree = np.bincount(np.array(pairs).ravel(), minlength=n_hosts) if pairs else np.zeros(n_hosts, int)
    return bool(groups) and all(
        len(g) >= 3 and degree[g].max() <= 2 and int((degree[g] == 1).sum()) == 2 for g in groups
    )


def _with_groups(edges: pl.DataFrame, n_hosts: int, method: str) -> Structure:
    def of(kind: str) -> list[tuple[int, int]]:
        sel = edges.filter(pl.col("kind") == kind)
        return list(zip(sel["a"].to_list(), sel["b"].to_list(), strict=True))

    return Structure(edges, components(n_hosts, of("dp")), components(n_hosts, of("pp")), method)


def declared_groups(job: Job, hosts: list[str]) -> dict[str, list[list[int]]] | None:
    """The host groups job.yaml's parallelism implies: hosts are linked when any of their ranks share a DP (or
    PP) group, i.e. agree on every other coordinate under the job's rank order. Vectorized over ranks."""
    if job.parallelism is None or not job.rank_to_host:
        return None
    index = {h: i for i, h in enumerate(hosts)}
    placed = [(r, index[h]) for r, h in job.rank_to_host.items() if h in index and 0 <= r < MAX_RANK]
    if not placed:
        return None
    rank = np.array([r for r, _ in placed], dtype=np.int64)
    host = np.array([h for _, h in placed], dtype=np.int64)
    sizes = {d: getattr(job.parallelism, d) for d in ("tp", "cp", "dp", "pp")}
    coord, rest = {}, rank.copy()
    for dim in job.rank_order.split("-"):
        coord[dim], rest = rest % sizes[dim], rest // sizes[dim]
    out: dict[str, list[list[int]]] = {}
    for kind in ("dp", "pp"):
        if sizes[kind] <= 1:
            out[kind] = []
            continue
        key = np.zeros_like(rank)
        for dim in ("tp", "cp", "dp", "pp"):
            if dim != kind:
                key = key * sizes[dim] + coord[dim]
        key = key * (rest.max() + 1) + rest  # ranks beyond the world size stay apart
        order = np.argsort(key, kind="stable")
        first = np.r_[True, key[order][1:] != key[order][:-1]]
        leader = host[order][np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))]
        pairs = np.unique(np.stack([leader, host[order]], axis=1), axis=0)
        out[kind] = components(len(hosts), [(int(a), int(b)) for a, b in pairs if a != b])
    return out


def with_declared(structure: Structure, groups: dict[str, list[list[int]]]) -> Structure:
    """Reclass bulk pairs by job.yaml's groups: inside a declared DP group DP, inside a PP group PP."""
    dp_of = {h: gi for gi, g in enumerate(groups["dp"]) for h in g}
    pp_of = {h: gi for gi, g in enumerate(groups["pp"]) for h in g}
    a, b = structure.edges["a"].to_list(), structure.edges["b"].to_list()
    kinds = structure.edges["kind"].to_list()
    new = []
    for x, y, k in zip(a, b, kinds, strict=True):
        if k == "light":
            new.append(k)
        elif x in dp_of and dp_of.get(y) == dp_of[x]:
            new.append("dp")
        elif x in pp_of and pp_of.get(y) == pp_of[x]:
            new.append("pp")
        else:
            new.append("other")
    edges = structure.edges.with_columns(kind=pl.Series(new, dtype=pl.String))
    return Structure(edges, groups["dp"], groups["pp"], "job.yaml's parallelism, confirmed by the traffic")
