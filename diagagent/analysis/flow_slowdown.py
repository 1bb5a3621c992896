"""A job-wide slowdown in the flows: the iteration time steps up and stays up (every node waits for one), and the
node whose own pipeline work slowed at that moment, ranked first. Pure numpy over the flow table.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, Field

SLOWDOWN_MIN_RATIO = 1.2  # the iteration time after the step is at least this much the time before
SLOWDOWN_MIN_SIDE = 3  # iterations on each side of the step
SLOWDOWN_CONSISTENT = 0.8  # this share of each side lies on its side of the midpoint (not a few outliers)
CAUSE_MIN_RATIO = 1.5  # a node whose own pipeline step grew this much at the slowdown is a cause
MAX_CAUSES = 5


class SlowCause(BaseModel):
    """A node whose own work per pipeline step grew when the job slowed: from its last input to its next output."""

    host: str
    ratio: float  # its median step after the slowdown / before
    before_s: float
    after_s: float
    score: float  # 1 for the node that changed most


class Slowdown(BaseModel):
    """The iteration time rose job-wide at `iteration` (index in the flows' iterations) and stayed up."""

    iteration: int
    at: float  # when that iteration started (epoch seconds)
    before_s: float  # median iteration time before
    after_s: float  # ... and from then on
    ratio: float
    iterations_before: int
    iterations_after: int
    causes: list[SlowCause] = Field(default_factory=list)  # most changed first
    evidence: str = ""


def find_step(durations: np.ndarray) -> tuple[int, float, float] | None:
    """Where the iteration time steps up and stays up: (first slow iteration, median before, median after), or None.

    The split is the best two-level fit of the log durations (least squares, by cumulative sums); it counts when
    the later level is SLOWDOWN_MIN_RATIO over the earlier and both sides hold to their level."""
    d = durations[np.isfinite(durations) & (durations > 0)]
    k = len(d)
    if k < 2 * SLOWDOWN_MIN_SIDE or len(d) != len(durations):
        return None
    x = np.log(d)
    c1, c2 = np.cumsum(x), np.cumsum(x * x)
    j = np.arange(SLOWDOWN_MIN_SIDE, k - SLOWDOWN_MIN_SIDE + 1)
    left = c2[j - 1] - c1[j - 1] ** 2 / j
    right = (c2[-1] - c2[j - 1]) - (c1[-1] - c1[j - 1]) ** 2 / (k - j)
    split = int(j[np.argmin(left + right)])
    before, after = float(np.median(d[:split])), float(np.median(d[split:]))
    if after < SLOWDOWN_MIN_RATIO * before:
        return None
    mid = np.sqrt(before * after)
    if (d[:split] < mid).mean() < SLOWDOWN_CONSISTENT or (d[split:] > mid).mean() < SLOWDOWN_CONSISTENT:
        return None
    return split, before, after


def pipeline_steps(src: np.ndarray, dst: np.ndarray, start: np.ndarray, end: np.ndarray,
                   n_hosts: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per host, (when, how long) of each of its pipeline steps: from the end of its last incoming pipeline flow to
    the start of its next outgoing one (its own compute for that micro-batch; waiting for input is not in it)."""
    out = []
    for n in range(n_hosts):
        ins = np.sort(end[dst == n])
        outs = np.sort(start[src == n])
        idx = np.searchsorted(ins, outs, side="right") - 1
        ok = idx >= 0
        out.append((outs[ok], outs[ok] - ins[idx[ok]]))
    return out


def rank_causes(steps: list[tuple[np.ndarray, np.ndarray]], hosts: list[str], at: float) -> list[SlowCause]:
    """The nodes whose own pipeline step grew most at `at`, CAUSE_MIN_RATIO or more, most changed first."""
    found = []
    for host, (when, took) in zip(hosts, steps, strict=True):
        pre, post = took[when < at], took[when >= at]
        if len(pre) < SLOWDOWN_MIN_SIDE or len(post) < SLOWDOWN_MIN_SIDE:
            continue
        b, a = float(np.median(pre)), float(np.median(post))
        if b > 0 and a >= CAUSE_MIN_RATIO * b:
            found.append((a / b, host, b, a))
    found.sort(key=lambda f: -f[0])
    top = found[0][0] if found else 1.0
    return [SlowCause(host=h, ratio=round(r, 3), before_s=round(b, 6), after_s=round(a, 6),
                      score=round((r - 1.0) / (top - 1.0), 4)) for r, h, b, a in found[:MAX_CAUSES]]


def describe(s: Slowdown, when: str) -> str:
    text = (f"job-wide slowdown: iteration time rose from {s.before_s:.2f} s to {s.after_s:.2f} s ({s.ratio:.2f}x) "
            f"at flow iteration {s.iteration} ({when}) and stayed there for {s.iterations_after} iteration(s)")
    if s.causes:
        c = s.causes[0]
        text += (f"; {c.host}'s own pipeline step grew {c.ratio:.1f}x then ({c.before_s * 1e3:.0f} ms -> "
                 f"{c.after_s * 1e3:.0f} ms), the most of any node")
    return text


__all__ = ["SlowCause", "Slowdown", "describe", "find_step", "pipeline_steps", "rank_causes"]
