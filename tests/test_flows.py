"""Flow analysis on synthetic bundles: recognition, parallelism, iterations, stragglers, slow links, silence,
the agent's query functions, the heatmap and the `diagagent flows` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from diagagent.analysis import flows
from diagagent.analysis.flow_structure import infer_structure
from diagagent.apps.cli import build_app
from diagagent.telemetry import Bundle
from tests.test_flows_synth import SynthSpec, write_bundle


def analyze(tmp_path: Path, fmt: str = "csv", **kw: object) -> tuple[flows.FlowFindings, SynthSpec]:
    spec = SynthSpec(**kw)  # type: ignore[arg-type]
    root = write_bundle(tmp_path / "bundle", spec, fmt)
    with Bundle.open(root) as bundle:
        return flows.analyze_flows(bundle), spec


def relative_errors(f: flows.FlowFindings, spec: SynthSpec) -> np.ndarray:
    """Each true iteration matched to the estimated one ending nearest its end."""
    est_end = np.array(f.iterations.boundaries[1:])
    est_dur = est_end - np.array(f.iterations.starts)
    out = []
    for it in spec.truth["timeline"]:
        j = int(np.argmin(np.abs(est_end - it["end"])))
        if abs(est_end[j] - it["end"]) < 0.5 * (it["end"] - it["start"]):
            out.append(abs(est_dur[j] - (it["end"] - it["start"])) / (it["end"] - it["start"]))
    return np.array(out)


def test_bundle_without_flows_says_so(tmp_path: Path, small_bundle: Path) -> None:
    for p in (small_bundle / "flows").iterdir():
        p.unlink()
    with Bundle.open(small_bundle) as bundle:
        f = flows.analyze_flows(bundle)
    assert not f.has_flows and not f.flagged
    assert "no flows" in f.note
    assert flows.stragglers(f).stragglers == [] and flows.timeline(f).nodes == []


def test_two_records_are_too_few_for_iterations(small_bundle: Path) -> None:
    with Bundle.open(small_bundle) as bundle:
        f = flows.analyze_flows(bundle)
    assert f.has_flows and f.counts.job == 2
    assert f.iterations.count == 0 and not f.flagged


def test_healthy_job_flags_nothing_and_times_iterations(tmp_path: Path) -> None:
    f, spec = analyze(tmp_path)
    assert f.counts.foreign > 0 and f.counts.external > 0 and f.counts.job > 0
    assert not f.flagged and f.suspects == [] and "nothing abnormal" in f.summary
    assert f.iterations.count == len(spec.truth["timeline"]) - 1  # the first sync is the first boundary
    err = relative_errors(f, spec)
    assert len(err) >= f.iterations.count and np.median(err) < 0.003 and err.max() < 0.01


def test_a_pause_between_iterations_is_not_part_of_either(tmp_path: Path) -> None:
    f, spec = analyze(tmp_path, pause_at=12, pause_s=40.0)
    assert [p.iteration for p in f.iterations.pauses] == [11]  # the first sync is boundary 0
    assert 39.0 < f.iterations.pauses[0].seconds < 41.0
    err = relative_errors(f, spec)
    assert len(err) == f.iterations.count and err.max() < 0.01 and f.iterations.max_s < 5.0
    cells = [c for row in flows.timeline(f, iterations=[11]).nodes for c in row.iterations]
    assert cells and all(c.duration_s is not None and c.duration_s < 5.0 for c in cells)


def test_parallelism_is_inferred_and_checked_against_job_yaml(tmp_path: Path) -> None:
    f, spec = analyze(tmp_path, dp=4, pp=2)
    p = f.parallelism
    assert p.agrees is True and p.source == "declared"
    assert sorted(p.dp_groups) == spec.truth["dp_groups"] and sorted(p.pp_groups) == spec.truth["pp_groups"]
    assert p.pairs["dp"] == 8 and p.pairs["pp"] == 4 and p.pairs["light"] > 0  # control star to node-000


def test_parallelism_without_job_yaml_is_inferred(tmp_path: Path) -> None:
    f, spec = analyze(tmp_path, dp=3, pp=3, declare_parallelism=False)
    p = f.parallelism
    assert p.agrees is None and p.source == "inferred" and p.declared is None
    assert sorted(p.dp_groups) == spec.truth["dp_groups"] and sorted(p.pp_groups) == spec.truth["pp_groups"]


def test_wrong_job_yaml_layout_is_reported(tmp_path: Path) -> None:
    spec = SynthSpec(dp=4, pp=2)
    root = write_bundle(tmp_path / "b", spec)
    job = yaml.safe_load((root / "job.yaml").read_text())
    job["parallelism"] = {"tp": 8, "pp": 4, "dp": 2}  # not what ran
    (root / "job.yaml").write_text(yaml.safe_dump(job))
    with Bundle.open(root) as bundle:
        p = flows.analyze_flows(bundle).parallelism
    assert p.agrees is False and p.source == "inferred" and "differ" in p.disagreement
    assert sorted(p.dp_groups) == spec.truth["dp_groups"]


@pytest.mark.parametrize(
    "kw",
    [
        {"straggler": "node-005", "dp": 4, "pp": 2},
        {"straggler": "node-003", "dp": 8, "pp": 1, "fmt": "parquet"},
        {"straggler": "node-001", "dp": 4, "pp": 2, "drop": 0.1, "time_jitter_s": 0.002},
        {"straggler": "node-006", "dp": 8, "pp": 1, "merge_ring_steps": True},
    ],
)
def test_straggler_is_ranked_first_and_alone(tmp_path: Path, kw: dict) -> None:
    fmt = kw.pop("fmt", "csv")
    f, spec = analyze(tmp_path, fmt, **kw)
    top = f.stragglers[0]
    assert top.host == spec.straggler and top.flagged
    assert [s.host for s in f.stragglers if s.flagged] == [spec.straggler]
    assert f.suspects[0].host == spec.straggler
    assert top.shown >= 0.3 * top.iterations_total
    assert "the median of its peers over" in top.evidence


def test_straggler_from_the_middle_shows_where_it_starts(tmp_path: Path) -> None:
    f, _ = analyze(tmp_path, straggler="node-002", straggler_from=15, iterations=40, dp=4, pp=1)
    top = f.stragglers[0]
    assert top.host == "node-002" and top.flagged
    assert 13 <= (top.first_iteration or 0) <= 16
    assert f.iterations.p50_s is not None and f.iterations.max_s > 1.1 * f.iterations.min_s


def test_slow_link_names_the_congested_host(tmp_path: Path) -> None:
    f, _ = analyze(tmp_path, slow_link_host="node-002")
    flagged = [x for x in f.slow_links if x.flagged]
    assert flagged and all("node-002" in (x.src, x.dst) for x in flagged)
    assert f.suspects[0].host == "node-002" and f.suspects[0].source == "slow_link"
    assert not any(s.flagged for s in f.stragglers)


def test_hang_shows_as_silence(tmp_path: Path) -> None:
    f, spec = analyze(tmp_path, hang_host="node-003", hang_at=20, tail_s=120.0, dp=8, pp=1)
    s = f.silence
    assert s.stopped and s.silent_for_s is not None and s.silent_for_s > 100
    assert s.first_quiet[0] == "node-003"
    assert f.iterations.count == len(spec.truth["timeline"]) - 1
    assert f.iterations.unfinished_since is not None and f.iterations.unfinished_since > s.job_stop - 5
    assert not any(x.flagged for x in f.stragglers)


def test_union_find_recognizes_the_job_without_ips(tmp_path: Path) -> None:
    spec = SynthSpec(dp=4, pp=2)
    root = write_bundle(tmp_path / "b", spec)
    job = yaml.safe_load((root / "job.yaml").read_text())
    for node in job["nodes"]:
        node.pop("ip")
    (root / "job.yaml").write_text(yaml.safe_dump(job))
    with Bundle.open(root) as bundle:
        f = flows.analyze_flows(bundle)
    assert "union-find" in f.recognition
    assert f.hosts_seen == 8 and sorted(f.hosts) == sorted(spec.ip(n) for n in range(8))
    assert f.iterations.count > 20


def test_queries_are_compact(tmp_path: Path) -> None:
    f, _ = analyze(tmp_path, straggler="node-005", iterations=40)
    view = flows.timeline(f)
    assert view.nodes[0].host == "node-005" and len(view.nodes) == flows.DEFAULT_NODES
    assert [c.iteration for c in view.nodes[0].iterations] == list(
        range(f.iterations.count - 20, f.iterations.count)
    )
    cell = view.nodes[0].iterations[-1]
    assert cell.compute_vs_peers is not None and cell.compute_vs_peers > 1.2
    assert cell.start is not None and cell.end is not None and cell.end > cell.start
    picked = flows.timeline(f, nodes=["node-001", "nope"], iterations=[0, -1])
    assert [r.host for r in picked.nodes] == ["node-001"] and "not job nodes: nope" in picked.shown
    assert [s.iteration for s in picked.spans] == [0, f.iterations.count - 1]
    assert flows.stragglers(f).flagged and flows.stragglers(f).stragglers[0].host == "node-005"
    assert not flows.links(f).flagged and flows.links(f).parallelism["dp_groups"] == 2
    quiet = flows.silence(f, top=3)
    assert len(quiet.silence.nodes) == 3 and quiet.nodes_total == 8 and not quiet.silence.stopped
    assert len(flows.timeline(f, iterations=range(40)).model_dump_json()) < 60_000


def test_queries_accept_a_bundle(tmp_path: Path) -> None:
    root = write_bundle(tmp_path / "b", SynthSpec(dp=4, pp=1, iterations=8))
    with Bundle.open(root) as bundle:
        assert flows.stragglers(bundle).has_flows and flows.timeline(bundle).count == 7


def test_heatmap_is_a_png(tmp_path: Path) -> None:
    f, _ = analyze(tmp_path, straggler="node-005", iterations=12)
    for source, name in ((f, "all.png"), (flows.timeline(f), "view.png")):
        out = flows.plot_heatmap(source, tmp_path / name)
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5_000
    with pytest.raises(ValueError):
        flows.plot_heatmap(flows.FlowFindings(job_id="x", has_flows=False), tmp_path / "none.png")


def test_cli_prints_json_and_draws(tmp_path: Path) -> None:
    root = write_bundle(tmp_path / "b", SynthSpec(straggler="node-005", iterations=12))
    runner = CliRunner()
    result = runner.invoke(build_app(), ["flows", str(root), "--json", "--plot", str(tmp_path / "h.png")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["stragglers"][0]["host"] == "node-005" and data["flagged"] is True
    assert (tmp_path / "h.png").is_file()
    text = runner.invoke(build_app(), ["flows", str(root)])
    assert text.exit_code == 0 and "node-005" in text.stdout and "suspects" in text.stdout


def _pairs_frame(pairs: list[tuple[int, int]], flows_each: int, nbytes: float) -> pl.DataFrame:
    rows = [(t * 10.0, t * 10.0 + 0.1, a, b, nbytes) for a, b in pairs for t in range(flows_each)]
    return pl.DataFrame(rows, schema=["start", "end", "src", "dst", "bytes"], orient="row")


@pytest.mark.parametrize(
    ("pairs", "kind", "groups"),
    [
        ([(0, 1), (1, 2), (2, 3), (3, 0)], "dp", [[0, 1, 2, 3]]),  # a ring closes: data parallel
        ([(0, 1), (1, 2), (3, 4), (4, 5)], "pp", [[0, 1, 2], [3, 4, 5]]),  # open lines: pipelines
        ([(0, 1), (2, 3)], "dp", [[0, 1], [2, 3]]),  # pairs alone: the commoner reading, data parallel
    ],
)
def test_one_kind_of_traffic_is_read_from_its_shape(pairs: list, kind: str, groups: list) -> None:
    s = infer_structure(_pairs_frame(pairs, 20, 1e9), 6)
    assert set(s.edges["kind"].to_list()) == {kind}
    assert (s.dp_groups if kind == "dp" else s.pp_groups) == groups


def test_a_rendezvous_is_not_training_traffic() -> None:
    s = infer_structure(_pairs_frame([(i, 0) for i in range(1, 8)], 1, 4e4), 8)
    assert set(s.edges["kind"].to_list()) == {"light"} and not s.dp_groups and not s.pp_groups
    assert "no training traffic" in s.method
