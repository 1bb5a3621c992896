"""A job-wide slowdown in the flows (issue 18, item 4): the step time that rose is flagged and its node ranked first,
and a job marked slow is never diagnosed as a hang without stack evidence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from diagagent.analysis.flows import analyze_flows
from diagagent.contract import Candidate
from diagagent.diagnosis.differential import Decision
from diagagent.sim import simulate
from diagagent.telemetry import Bundle


@pytest.fixture(scope="module")
def straggler(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The issue's own case: `diagagent simulate b3 --fault gpu_straggler --nodes 16 --seed 7`."""
    out = tmp_path_factory.mktemp("slow") / "b3"
    simulate(out, "gpu_straggler", 16, 7)
    return out


def test_flows_flag_a_job_wide_slowdown_and_rank_the_slow_node_first(straggler: Path) -> None:
    f = analyze_flows(Bundle.open(straggler))
    assert f.flagged and "nothing abnormal" not in f.summary
    assert f.suspects and f.suspects[0].host == "node-009"
    sd = f.slowdown
    assert sd is not None and sd.ratio >= 1.3 and 5.5 < sd.before_s < 7.5 and 8.5 < sd.after_s < 10.5
    assert sd.causes and sd.causes[0].host == "node-009" and "node-009" in f.summary
    assert f.suspects[0].host == "node-009" and f.suspects[0].source == "slowdown"


def test_a_steady_or_noisy_job_has_no_slowdown() -> None:
    from diagagent.analysis.flow_slowdown import find_step

    rng = np.random.default_rng(3)
    steady = 6.4 * (1 + rng.uniform(-0.03, 0.03, 200))
    assert find_step(steady) is None
    spikes = steady.copy()
    spikes[[50, 120, 121]] *= 2  # a few slow iterations (a checkpoint, a hiccup) are not a slowdown
    assert find_step(spikes) is None
    stepped = np.concatenate([steady[:40], steady[40:] * 1.45])
    found = find_step(stepped)
    assert found is not None and found[0] == 40


def test_a_slow_job_without_stacks_is_not_called_a_hang() -> None:
    from diagagent.diagnosis.slow import slow_is_not_a_hang

    hang = Decision(fault="gpu_hang", category="hardware", confidence=0.7, tier="schema",
                    candidates=[Candidate(fault="gpu_hang", category="hardware", score=0.6),
                                Candidate(fault="gpu_straggler", category="hardware", score=0.3)])
    kept = slow_is_not_a_hang(hang, "slow", stack_evidence=False, unsure_confidence=0.05)
    assert kept.fault is None and kept.tier == "unsure" and kept.confidence == 0.05
    assert [c.fault for c in kept.candidates] == ["gpu_straggler"] and "py-spy" in (kept.check or "")
    assert slow_is_not_a_hang(hang, "slow", stack_evidence=True, unsure_confidence=0.05) is hang
    assert slow_is_not_a_hang(hang, "hung", stack_evidence=False, unsure_confidence=0.05) is hang
