"""The eval's metrics on hand-made predictions with hand-computed answers, the baselines, the JSON shape, the CLI."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagagent.apps.cli import build_app
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence, NodeScore
from diagagent.evaluation import BASELINES, LineIndex, aggregate, eval_json, find_cases, run_cases, score_case
from diagagent.evaluation.metrics import (
    CaseScore,
    IndexedLine,
    NodeScores,
    line_template,
    same_event,
    score_actions,
    score_events,
    score_nodes,
)
from diagagent.evaluation.predictors import AgentUnavailable, Prediction, llm_predictor
from diagagent.evaluation.report import MARK_BEGIN, MARK_END, write_markdown
from diagagent.telemetry import Bundle, Job, Truth
from diagagent.telemetry.truth import TruthAction
from tests.conftest import JOB_YAML

CASES_DIR = Path(__file__).resolve().parents[1] / "evals" / "cases"
TOP_KEYS = ["cases", "category_accuracy", "fault_accuracy", "nodes", "events", "stage_accuracy",
            "iteration_accuracy", "iteration_within_1", "action_accuracy", "seconds_per_case", "no_evidence",
            "calibration", "per_case"]


def _line(host: str, ts: float | None, text: str) -> IndexedLine:
    return IndexedLine(host=host, ts=ts, template=line_template(text))


ECC = "[rank3]:RuntimeError: CUDA error: uncorrectable ECC error encountered"
# truth: a (rank log, the CUDA error) and p (dmesg Xid). b: the same error on the same host 0.5 s later, another file.
INDEX = LineIndex(lines={
    ("logs/n1/rank-3.log", 10): _line("n1", 100.2, ECC),
    ("probes/n1/dmesg.txt", 4): _line("n1", 99.0, "NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE"),
    ("logs/n1/stdout.log", 77): _line("n1", 100.7, "[rank5]:RuntimeError: CUDA error: uncorrectable ECC error encountered"),
    ("logs/n2/rank-9.log", 10): _line("n2", 100.2, ECC.replace("rank3", "rank9")),
    ("logs/n1/rank-2.log", 50): _line("n1", 102.0, ECC.replace("rank3", "rank2")),
    ("logs/n1/rank-4.log", 5): _line("n1", None, ECC.replace("rank3", "rank4")),
    ("logs/n1/rank-3.log", 11): _line("n1", 100.3, "[rank3]:[E1120 10:01:02 ProcessGroupNCCL.cpp:683] Watchdog timeout"),
})
TRUTH_LINES = [("logs/n1/rank-3.log", 10), ("probes/n1/dmesg.txt", 4)]


def test_line_template_masks_numbers_hex_ips_and_rank_prefix() -> None:
    a = line_template("[rank3]:NET/IB: Got completion from peer 10.0.1.17<39936> with status=12 hca mlx5_0 0x7f3a")
    b = line_template("NET/IB: Got completion from peer 10.0.1.4<1122> with status=5 hca mlx5_3 0xdead1")
    assert a == b == "NET/IB: Got completion from peer <ip><<*>> with status=<*> hca mlx<*>_<*> <*>"


def test_same_event_needs_template_host_and_second() -> None:
    truth = TRUTH_LINES[0]
    assert same_event(truth, truth, INDEX)
    assert same_event(("logs/n1/stdout.log", 77), truth, INDEX)  # same template, host, 0.5 s apart
    assert not same_event(("logs/n2/rank-9.log", 10), truth, INDEX)  # other host
    assert not same_event(("logs/n1/rank-2.log", 50), truth, INDEX)  # 1.8 s apart
    assert not same_event(("logs/n1/rank-4.log", 5), truth, INDEX)  # no timestamp: exact lines only
    assert not same_event(("logs/n1/rank-3.log", 11), truth, INDEX)  # other template
    assert not same_event(("logs/x/unread.log", 1), truth, INDEX)


def test_events_precision_recall_f1_hand_computed() -> None:
    cited = [("logs/n1/rank-3.log", 11), ("logs/n1/stdout.log", 77), ("logs/n2/rank-9.log", 10)]
    s = score_events(cited, TRUTH_LINES, INDEX)
    # 1 of 3 cited is an indicated event; 1 of 2 indicated events is cited; F1 = 2 * 1/3 * 1/2 / (5/6) = 0.4
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(0.5)
    assert s.f1 == pytest.approx(0.4)
    assert s.recall_at_5 == pytest.approx(0.5)
    assert s.recall_at_1 == 0.0  # the first cited line is another template
    assert score_events(cited[1:], TRUTH_LINES, INDEX).recall_at_1 == 1.0  # same event as the first truth line
    assert score_events([], TRUTH_LINES, INDEX).recall_at_1 == 0.0


def test_events_recall_at_5_counts_only_the_first_five() -> None:
    noise = [(f"logs/n9/rank-{i}.log", 1) for i in range(5)]
    s = score_events([*noise, TRUTH_LINES[1], TRUTH_LINES[1]], TRUTH_LINES, INDEX)  # duplicates count once
    assert s.precision == pytest.approx(1 / 6)
    assert s.recall == pytest.approx(0.5)
    assert s.recall_at_5 == 0.0


def test_events_partial_and_empty_truths() -> None:
    assert score_events(TRUTH_LINES, None, INDEX).model_dump() == {
        "precision": None, "recall": None, "f1": None, "recall_at_1": None, "recall_at_5": None}
    no_lines_cited = score_events([], [], INDEX)  # a silent hang, nothing cited: agreement
    assert (no_lines_cited.precision, no_lines_cited.recall, no_lines_cited.f1) == (None, None, 1.0)
    cited_anyway = score_events(TRUTH_LINES[:1], [], INDEX)
    assert (cited_anyway.precision, cited_anyway.recall, cited_anyway.f1, cited_anyway.recall_at_5) == \
        (0.0, None, 0.0, None)
    nothing_cited = score_events([], TRUTH_LINES, INDEX)
    assert (nothing_cited.precision, nothing_cited.recall, nothing_cited.f1) == (None, 0.0, 0.0)


def test_nodes_topk_and_f1_hand_computed() -> None:
    s = score_nodes(["b", "a", "c", "d", "e", "f"], ["a"])
    # a is 2nd: top1 miss, top3 and top5 hit; F1 = 2 * (1/6) * 1 / (1/6 + 1) = 2/7
    assert (s.top1, s.top3, s.top5) == (0.0, 1.0, 1.0)
    assert s.f1 == pytest.approx(2 / 7)
    two = score_nodes(["a", "x"], ["a", "b"])
    assert (two.top1, two.f1) == (1.0, 0.5)
    assert score_nodes(["a"], None) == NodeScores()
    assert score_nodes([], []) == NodeScores(f1=1.0)  # user code: no node blamed, and none was
    assert score_nodes(["a"], []) == NodeScores(f1=0.0)


def _job() -> Job:
    return Job.from_yaml(JOB_YAML)  # tp2 pp2 dp2; node-001 holds ranks 0,1; dp peer node-002, pp peer node-003


def test_actions_kinds_targets_and_over_eviction() -> None:
    truth = [TruthAction(kind="evict", nodes=["node-001"]), TruthAction(kind="restart", from_step=1000)]
    restart = ActionProposal(kind="restart", from_step=1000)

    def evict(*hosts: str) -> ActionProposal:
        return ActionProposal(kind="evict", nodes=list(hosts))

    job = _job()
    assert score_actions([evict("node-001"), restart], truth, job) == 1.0
    assert score_actions([evict("node-001", "node-002"), restart], truth, job) == 1.0  # its dp group
    assert score_actions([evict("node-001", "node-003"), restart], truth, job) == 1.0  # its pp group
    assert score_actions([evict("node-001", "node-002", "node-003"), restart], truth, job) == 0.0  # two groups
    assert score_actions([evict("node-001", "node-002"), restart], truth, None) == 0.0  # no layout: exact only
    assert score_actions([evict("node-002"), restart], truth, job) == 0.0
    assert score_actions([evict("node-001")], truth, job) == 0.0  # restart missing
    assert score_actions([evict("node-001"), ActionProposal(kind="restart", from_step=900)], truth, job) == 0.0
    extra = ActionProposal(kind="rollback", to_commit="9f2c1ab")
    assert score_actions([evict("node-001"), restart, extra], truth, job) == 0.0
    assert score_actions([], [TruthAction(kind="none")], job) == 1.0
    assert score_actions([ActionProposal(kind="none")], [TruthAction(kind="none")], job) == 1.0
    assert score_actions([restart], [TruthAction(kind="none")], job) == 0.0
    rollback = [TruthAction(kind="rollback", to_commit="9f2c1ab")]
    assert score_actions([ActionProposal(kind="rollback", to_commit="9F2C1AB77e0d")], rollback, job) == 1.0
    assert score_actions([restart], None, job) is None


def _diagnosis(**kw: object) -> Diagnosis:
    return Diagnosis(job_id="42", **kw)


def test_score_case_full_truth() -> None:
    truth = Truth(fault="gpu_ecc_uncorrectable", category="hardware", faulty_nodes=["n1"], stage="training",
                  iteration=100, indicating_lines=[{"file": f, "line": n} for f, n in TRUTH_LINES],
                  actions=[TruthAction(kind="evict", nodes=["n1"])])
    evidence = [Evidence(id="e1", kind="log", file="logs/n1/stdout.log", line=77),
                Evidence(id="e2", kind="log", role="symptom", file="logs/n2/rank-9.log", line=10),
                Evidence(id="e3", kind="stack", text="rank 3 outlier stack")]
    diag = _diagnosis(category="hardware", fault="nvlink_error", stage="training", iteration=101,
                      faulty_nodes=[NodeScore(host="n2", score=0.9), NodeScore(host="n1", score=0.8)],
                      evidence=evidence, proposals=[ActionProposal(kind="evict", nodes=["n1"])])
    s = score_case(diag, truth, INDEX, case="c1")
    assert (s.category_accuracy, s.fault_accuracy, s.stage_accuracy) == (1.0, 0.0, 1.0)
    assert (s.iteration_accuracy, s.iteration_within_1) == (0.0, 1.0)
    assert (s.nodes.top1, s.nodes.top3, s.nodes.f1) == (0.0, 1.0, pytest.approx(2 / 3))
    # only e1 is scored (cause with file and line); it is the indicated rank-3 error: P 1, R 1/2
    assert (s.events.precision, s.events.recall) == (1.0, 0.5)
    assert s.action_accuracy == 1.0  # the evict has no job layout to check, and names exactly the truth node
    assert s.predicted_nodes == ["n2", "n1"] and s.case == "c1"


def test_score_case_partial_truth_skips_what_it_does_not_state() -> None:
    s = score_case(_diagnosis(category="network", iteration=5), Truth(category="network"), INDEX)
    assert s.category_accuracy == 1.0
    assert s.fault_accuracy is None and s.stage_accuracy is None and s.action_accuracy is None
    assert s.iteration_accuracy is None and s.iteration_within_1 is None
    assert s.nodes == NodeScores() and s.events.f1 is None


def test_iteration_missing_prediction_scores_zero() -> None:
    s = score_case(_diagnosis(), Truth(iteration=12), INDEX)
    assert (s.iteration_accuracy, s.iteration_within_1, s.category_accuracy) == (0.0, 0.0, None)


def test_aggregate_means_over_scoring_cases_and_median_seconds() -> None:
    scores = [
        CaseScore(case="a", category_accuracy=1.0, nodes=NodeScores(top1=1.0, f1=0.5), seconds=1.0),
        CaseScore(case="b", category_accuracy=0.0, nodes=NodeScores(f1=1.0), seconds=10.0),
        CaseScore(case="c", seconds=2.0, action_accuracy=1.0),
    ]
    r = aggregate(scores)
    assert r.cases == 3
    assert r.category_accuracy == 0.5  # c does not state a category
    assert r.nodes.top1 == 1.0 and r.nodes.f1 == 0.75 and r.nodes.top3 is None
    assert r.action_accuracy == 1.0 and r.fault_accuracy is None
    assert r.seconds_per_case == 2.0
    assert r.llm is None
    with_llm = aggregate([CaseScore(case="a", llm_calls=3, tokens_in=1000, tokens_out=100),
                          CaseScore(case="b", llm_calls=5, tokens_in=3000, tokens_out=300)])
    assert with_llm.llm is not None and (with_llm.llm.llm_calls, with_llm.llm.tokens_in) == (4.0, 2000.0)


def test_eval_json_shape_and_nulls() -> None:
    from diagagent.evaluation.runner import EvalRun

    run = EvalRun(scores={
        "diagagent": [CaseScore(case="a", category_accuracy=1.0, seconds=0.5)],
        "grep": [CaseScore(case="a", category_accuracy=0.0, seconds=0.1)],
    })
    data = eval_json(run, "diagagent")
    assert list(data) == [*TOP_KEYS, "baselines"]
    assert list(data["nodes"]) == ["top1", "top3", "top5", "f1"]
    assert list(data["events"]) == ["precision", "recall", "f1", "recall_at_1", "recall_at_5"]
    assert data["category_accuracy"] == 1.0 and data["fault_accuracy"] is None and data["nodes"]["top1"] is None
    assert list(data["baselines"]) == ["grep"] and list(data["baselines"]["grep"]) == TOP_KEYS
    assert data["baselines"]["grep"]["category_accuracy"] == 0.0
    no_agent = eval_json(EvalRun(scores={"grep": run.scores["grep"]}), None)
    assert no_agent["cases"] == 1 and no_agent["category_accuracy"] is None and no_agent["per_case"] == []
    assert json.loads(json.dumps(data)) == data


def _tiny_case(root: Path) -> Path:
    """Two hosts; node-002 fails first (a CUDA error), node-001 then logs three watchdog timeouts."""
    case = root / "tiny"
    (case / "logs" / "node-001").mkdir(parents=True)
    (case / "logs" / "node-002").mkdir(parents=True)
    (case / "job.yaml").write_text(JOB_YAML)
    watchdog = "[rank0]:[E1120 10:11:0{} ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation timeout"
    (case / "logs" / "node-001" / "rank-0.log").write_text(
        "[2026-11-20 10:00:00,000] INFO iteration 100\n" + "\n".join(watchdog.format(i) for i in range(3)) + "\n")
    (case / "logs" / "node-002" / "rank-2.log").write_text(
        "[2026-11-20 10:00:00,000] INFO iteration 100\n"
        "[2026-11-20 10:01:00,000] RuntimeError: CUDA error: an illegal memory access was encountered\n")
    (case / "truth.json").write_text(json.dumps({
        "fault": "pytorch_internal_assert", "category": "framework", "faulty_nodes": ["node-002"],
        "indicating_lines": [{"file": "logs/node-002/rank-2.log", "line": 2}]}))
    return case


def test_baselines_on_a_cascade(tmp_path: Path) -> None:
    with Bundle.open(_tiny_case(tmp_path)) as bundle:
        grep = BASELINES["grep"](bundle).diagnosis
        by_time = BASELINES["error_time"](bundle).diagnosis
        by_count = BASELINES["error_count"](bundle).diagnosis
    # grep lists node-001's timeouts first (path order); the first error in time is node-002's; node-001 has more
    assert grep.faulty_hosts == ["node-001"] and [e.line for e in grep.evidence] == [2, 3, 4, 2]
    assert by_time.faulty_hosts == ["node-002", "node-001"]
    assert by_count.faulty_hosts == ["node-001", "node-002"]
    assert all(e.role == "cause" for e in grep.evidence) and grep.category is None and not grep.proposals


def test_runner_scores_each_predictor_and_survives_a_crash(tmp_path: Path) -> None:
    def crashes(bundle: Bundle) -> Prediction:
        raise ValueError("boom")

    assert find_cases(tmp_path) == []
    _tiny_case(tmp_path)
    cases = find_cases(tmp_path, set_name="tiny")
    assert [c.name for c in cases] == ["tiny"]
    run = run_cases(cases, {"error_time": BASELINES["error_time"], "crash": crashes})
    good, bad = run.scores["error_time"][0], run.scores["crash"][0]
    assert good.nodes.top1 == 1.0 and good.events.recall == 1.0 and good.set == "tiny"
    assert bad.error == "ValueError: boom" and bad.nodes.top1 == 0.0 and bad.seconds is not None


def test_unavailable_agent_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    from diagagent.config import Settings

    monkeypatch.setitem(sys.modules, "diagagent.agent", types.ModuleType("diagagent.agent"))
    with pytest.raises(AgentUnavailable, match="diagnose_with_llm"):
        llm_predictor(Settings.load())
    result = CliRunner().invoke(build_app(), ["eval", str(CASES_DIR), "--agent", "llm", "--baseline", "grep"])
    assert result.exit_code == 2 and "diagnose_with_llm" in result.output


def test_markdown_splices_between_markers(tmp_path: Path) -> None:
    from diagagent.evaluation.runner import EvalRun

    readme = tmp_path / "README.md"
    readme.write_text(f"# evals\nintro `{MARK_BEGIN}` in prose\n{MARK_BEGIN}\nold table\n{MARK_END}\nafter\n")
    run = EvalRun(scores={
        "diagagent": [CaseScore(case="a", set="evals/cases", category="data", events={"f1": 0.5}),
                      CaseScore(case="b", set="evals/real/test", category="data", events={"f1": 1.0})],
        "grep": [CaseScore(case="a", set="evals/cases", category="data", events={"f1": 0.25}),
                 CaseScore(case="b", set="evals/real/test", category="data", events={"f1": 0.0})]})
    write_markdown(readme, run)
    text = readme.read_text()
    assert text.startswith(f"# evals\nintro `{MARK_BEGIN}` in prose\n{MARK_BEGIN}\n| metric | evals/cases (1): diagagent |")
    assert text.endswith(f"{MARK_END}\nafter\n")
    # one table, every set and predictor side by side: cases diagagent, cases grep, real diagagent, real grep
    assert "old table" not in text and "| events.f1 | 0.50 | 0.25 | 1.00 | 0.00 |" in text
    assert "evals/real/test (1): grep" in text and "by category" not in text
    full = tmp_path / "latest.md"
    write_markdown(full, run)
    assert "#### evals/cases: events.f1 by category" in full.read_text()


def test_cli_end_to_end_on_two_hand_written_cases(tmp_path: Path) -> None:
    picked = sorted(p.parent for p in CASES_DIR.glob("*/truth.json"))[:2]
    assert len(picked) == 2
    out = tmp_path / "out.json"
    result = CliRunner().invoke(build_app(), ["eval", *map(str, picked), "--agent", "none", "--baseline", "grep",
                                              "--baseline", "error_time", "--json", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert list(data) == [*TOP_KEYS, "baselines"] and data["cases"] == 2
    assert {c["set"] for c in data["baselines"]["grep"]["per_case"]} == {str(CASES_DIR)}
    assert list(data["baselines"]) == ["grep", "error_time"]
    for report in data["baselines"].values():
        assert list(report) == TOP_KEYS and report["cases"] == 2 and len(report["per_case"]) == 2
        assert report["seconds_per_case"] is not None and report["category_accuracy"] == 0.0
    assert "nodes.top1" in result.output


def _fake_simulate(calls: list[tuple]) -> object:
    def simulate(out: Path, fault: str, nodes: int, seed: int) -> None:
        calls.append((fault, nodes, seed))
        Path(out).mkdir(parents=True)
        (Path(out) / "job.yaml").write_text(JOB_YAML)
        (Path(out) / "truth.json").write_text(json.dumps({"fault": fault, "category": "hardware"}))

    return simulate


def test_suite_is_generated_once_into_the_versioned_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import diagagent.sim
    from diagagent.evaluation.suites import ensure_suite, find_suite, load_suite

    calls: list[tuple] = []
    monkeypatch.setattr(diagagent.sim, "simulate", _fake_simulate(calls), raising=False)
    monkeypatch.setattr(diagagent.sim, "SIM_VERSION", "v9", raising=False)
    (tmp_path / "tiny.yaml").write_text("name: tiny\ncases:\n  - {fault: nic_down, nodes: 4, seed: 1}\n"
                                        "  - {fault: cuda_oom, nodes: 2, seed: 3}\n")
    suite = load_suite(find_suite("tiny", [tmp_path]))
    ready: list[Path] = []
    folders = ensure_suite(suite, tmp_path / "state", workers=1, on_case_ready=ready.append)
    assert [f.name for f in folders] == ["nic_down-n4-s1-v9", "cuda_oom-n2-s3-v9"]
    assert folders[0].parent == tmp_path / "state" / "suites" / "tiny"
    assert calls == [("nic_down", 4, 1), ("cuda_oom", 2, 3)] and ready == folders
    assert not list(folders[0].parent.glob("*.partial"))
    assert ensure_suite(suite, tmp_path / "state", workers=1) == folders and len(calls) == 2  # reused


def test_suite_errors_are_clear(tmp_path: Path) -> None:
    from diagagent.evaluation.suites import SuiteError, find_suite, load_suite

    with pytest.raises(SuiteError, match="no suite 'nope'"):
        find_suite("nope", [tmp_path])
    (tmp_path / "bad.yaml").write_text("name: bad\ncases:\n  - {fault: nic_down}\n")
    with pytest.raises(SuiteError, match="nodes"):
        load_suite(find_suite("bad", [tmp_path]))


def test_cli_suite_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import diagagent.sim

    monkeypatch.setattr(diagagent.sim, "simulate", _fake_simulate([]), raising=False)
    monkeypatch.setattr(diagagent.sim, "SIM_VERSION", "v9", raising=False)
    suite = tmp_path / "tiny.yaml"
    suite.write_text("name: tiny\ncases:\n  - {fault: nic_down, nodes: 4, seed: 1}\n")
    out = tmp_path / "out.json"
    result = CliRunner().invoke(build_app(), ["eval", "--suite", str(suite), "--workers", "1", "--agent", "none",
                                              "--baseline", "grep", "--json", str(out)])
    assert result.exit_code == 0, result.output
    grep = json.loads(out.read_text())["baselines"]["grep"]
    assert grep["cases"] == 1 and grep["per_case"][0]["set"] == "tiny"
    assert grep["per_case"][0]["fault"] == "nic_down" and grep["category_accuracy"] == 0.0


def test_suite_generates_with_the_real_simulator_in_two_processes(tmp_path: Path) -> None:
    from diagagent.evaluation.suites import ensure_suite, load_suite, sim_version

    (tmp_path / "pair.yaml").write_text("name: pair\ncases:\n  - {fault: nic_down, nodes: 8, seed: 1}\n"
                                        "  - {fault: cuda_oom, nodes: 8, seed: 2}\n")
    folders = ensure_suite(load_suite(tmp_path / "pair.yaml"), tmp_path / "state", workers=2)
    assert [f.name for f in folders] == [f"nic_down-n8-s1-{sim_version()}", f"cuda_oom-n8-s2-{sim_version()}"]
    run = run_cases([c for f in folders for c in find_cases(f, set_name="pair")], {"grep": BASELINES["grep"]})
    assert [s.fault for s in run.scores["grep"]] == ["nic_down", "cuda_oom"] and not run.skipped
    assert all(s.category_accuracy == 0.0 and s.error is None for s in run.scores["grep"])


def test_llm_agent_usage_reaches_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from diagagent.config import Settings

    def diagnose_with_llm(bundle: Bundle, settings: Settings) -> tuple[Diagnosis, dict]:
        diagnosis = Diagnosis(job_id=bundle.job.job_id, category="framework",
                              faulty_nodes=[NodeScore(host="node-002", score=1.0)])
        return diagnosis, {"llm_calls": 4, "tokens_in": 9000, "tokens_out": 700}

    fake = types.ModuleType("diagagent.agent")
    fake.diagnose_with_llm = diagnose_with_llm  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "diagagent.agent", fake)
    _tiny_case(tmp_path)
    run = run_cases(find_cases(tmp_path), {"diagagent-llm": llm_predictor(Settings.load())})
    data = eval_json(run, "diagagent-llm")
    assert data["llm"] == {"llm_calls": 4.0, "tokens_in": 9000.0, "tokens_out": 700.0, "tokens_in_total": 9000,
                           "tokens_out_total": 700, "cost_usd_total": None}
    assert data["category_accuracy"] == 1.0 and data["nodes"]["top1"] == 1.0
    assert data["per_case"][0]["tokens_out"] == 700 and data["baselines"] == {}


def _hang_bundle(tmp_path: Path) -> Bundle:
    """A hang whose only tell is the last progress line (line 2), marked as context in the truth."""
    root = tmp_path / "hang"
    (root / "logs" / "node-001").mkdir(parents=True)
    (root / "job.yaml").write_text('job_id: "h"\nstatus: hung\nnodes: [{host: node-001}]\n')
    (root / "logs" / "node-001" / "stdout.log").write_text(
        "step 10 | loss 2.31\nstep 11 | loss 2.30\nSaving model checkpoint to /ckpt/step-11\n")
    truth = {"fault": None, "indicating_lines": [{"file": "logs/node-001/stdout.log", "line": 3, "role": "context"}]}
    (root / "truth.json").write_text(json.dumps(truth))
    return Bundle.open(root)


def _cite(role: str, line: int) -> Diagnosis:
    return Diagnosis(job_id="h", evidence=[Evidence(id="e1", kind="log", role=role,
                                                    file="logs/node-001/stdout.log", line=line)])


def test_context_lines_score_as_hits_only_where_the_truth_marks_context(tmp_path: Path) -> None:
    with _hang_bundle(tmp_path) as bundle:
        truth = bundle.truth
        assert truth is not None and truth.indicating_lines[0].role == "context"
        hit = score_case(_cite("context", 3), truth, bundle)
        assert (hit.events.recall, hit.events.precision, hit.events.recall_at_1, hit.no_evidence) == \
            (1.0, 1.0, 1.0, False)
        other_context = score_case(_cite("context", 1), truth, bundle)  # shown, not scored: cites nothing
        assert other_context.events.recall == 0.0 and other_context.events.precision is None
        assert other_context.no_evidence is True
        as_cause = score_case(_cite("cause", 3), truth, bundle)  # the line itself, cited as the cause, still counts
        assert as_cause.events.recall == 1.0


def test_no_evidence_counts_cases_that_cite_nothing(tmp_path: Path) -> None:
    with _hang_bundle(tmp_path) as bundle:
        silent = score_case(Diagnosis(job_id="h"), bundle.truth, bundle, case="silent")
        cited = score_case(_cite("cause", 3), bundle.truth, bundle, case="cited")
        no_truth_lines = score_case(Diagnosis(job_id="h"), Truth(indicating_lines=[]), bundle, case="none")
    assert (silent.no_evidence, cited.no_evidence, no_truth_lines.no_evidence) == (True, False, None)
    assert aggregate([silent, cited, no_truth_lines]).no_evidence == 1


def test_calibration_bins_ece_and_confident_accuracy_hand_computed() -> None:
    from diagagent.evaluation.metrics import calibration

    scores = [CaseScore(case="a", confidence=0.9, correct=True), CaseScore(case="b", confidence=0.85, correct=False),
              CaseScore(case="c", confidence=0.1, correct=False), CaseScore(case="d", confidence=0.5, correct=None)]
    cal = calibration(scores)
    # judged: a, b, c. bin [.8, 1]: conf .875, acc .5, gap .375, weight 2/3; bin [0, .2): conf .1, acc 0, weight 1/3
    assert cal.cases == 3 and cal.ece == pytest.approx(2 / 3 * 0.375 + 1 / 3 * 0.1, abs=1e-4)
    assert (cal.high_confidence_cases, cal.high_confidence_accuracy) == (2, 0.5)
    assert [b.cases for b in cal.bins] == [1, 0, 0, 0, 2]
    assert calibration([CaseScore(case="x", confidence=None, correct=True)]).ece is None


def test_a_diagnosis_is_right_by_fault_else_category() -> None:
    from diagagent.evaluation.metrics import diagnosis_correct

    said = Diagnosis(job_id="j", category="network", fault="nic_down")
    assert diagnosis_correct(said, Truth(fault="nic_down", category="network")) is True
    assert diagnosis_correct(said, Truth(fault="ib_link_flap", category="network")) is False
    assert diagnosis_correct(said, Truth(category="network")) is True
    assert diagnosis_correct(Diagnosis(job_id="j"), Truth(category="network")) is False  # unsure is not right
    assert diagnosis_correct(said, Truth()) is None
