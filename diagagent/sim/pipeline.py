"""A causal model of one training iteration: pipeline stages pass micro-batches forward then backward (GPipe
order), each node computes at its own speed, and a node is ready for the gradient all-reduce when its backward
is done. The flows and the slowdown of a straggler or a congested link both come from it.

Times are fractions of the nominal iteration length; arrays are iterations x pipeline chains.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FWD_END, BWD_END, DP_LEN, OPT_LEN = 0.38, 0.86, 0.11, 0.03


@dataclass
class Send:
    """One micro-batch's pipeline transfer from one stage (the last of its group: what a sampling collector
    exports), as an iteration fraction."""

    stage: int  # the sending stage
    forward: bool
    start: np.ndarray  # iterations x chains


@dataclass
class PipelineTimes:
    sends: list[Send]
    ready: np.ndarray  # iterations x nodes: when each node's backward is done (ready to sync)


def microbatches(global_batch: int, dp: int, micro_batch: int) -> int:
    return max(1, global_batch // max(1, dp * micro_batch))


def simulate_pipeline(
    factor: np.ndarray, pp: int, micro: int, groups: int, xfer: float = 0.001
) -> PipelineTimes:
    """`factor`: iterations x nodes compute slowdown (1 = nominal), nodes ordered stage-major. `groups` micro-batch
    groups per stage and direction become flow records."""
    k, nodes = factor.shape
    nps = nodes // pp
    fu = (FWD_END - (pp - 1) * xfer) / (micro + pp - 1)  # so that a healthy pipeline ends its phases on time
    bu = (BWD_END - FWD_END - (pp - 1) * xfer) / (micro + pp - 1)
    per_group = max(1, micro // groups)
    lasts = sorted({min(micro, (j + 1) * per_group) - 1 for j in range(groups)})
    sends: list[Send] = []
    zero = np.zeros((k, nps))
    fwd_done: list[np.ndarray] = []  # per stage: the time its last forward finished
    prev_row: list[np.ndarray] = [zero] * micro
    for s in range(pp):
        g = factor[:, s * nps : (s + 1) * nps]
        row: list[np.ndarray] = []
        for c in range(micro):
            before = np.maximum(prev_row[c] + (xfer if s else 0.0), row[c - 1] if c else zero)
            row.append(before + fu * g)
        if s < pp - 1:
            sends += [Send(s, True, row[c]) for c in lasts]
        fwd_done.append(row[-1])
        prev_row = row
    ready = np.zeros((k, nodes))
    next_row: list[np.ndarray] | None = None
    for s in range(pp - 1, -1, -1):
        g = factor[:, s * nps : (s + 1) * nps]
        row = []
        for c in range(micro):
            before = np.maximum(
                fwd_done[s] if next_row is None else next_row[c] + xfer, row[c - 1] if c else zero
            )
            before = np.maximum(before, fwd_done[s])
            row.append(before + bu * g)
        if s > 0:
            sends += [Send(s, False, row[c]) for c in lasts]
        ready[:, s * nps : (s + 1) * nps] = row[-1]
        next_row = row
    return PipelineTimes(sends, ready)


def slowdown(pp: int, micro: int, stage: int, compute: float = 1.0, link: float = 1.0) -> float:
    """How much longer an iteration takes when one node of `stage` computes `compute` times slower, or its link
    carries the all-reduce `link` times slower (the iteration ends when the slowest ring has synced)."""
    factor = np.ones((1, pp))
    factor[0, stage] = compute
    ready = simulate_pipeline(factor, pp, micro, 1).ready[0]
    healthy = simulate_pipeline(np.ones((1, pp)), pp, micro, 1).ready[0]
    ring_end = np.maximum(ready, healthy) + DP_LEN
    ring_end[stage] = ready[stage] + DP_LEN * link
    return float(max(ring_end.max(), BWD_END + DP_LEN) + OPT_LEN)
