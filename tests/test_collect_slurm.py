"""`collect slurm` against a real single-node Slurm (started here as root; skipped with the reason if it cannot be):
a multi-task job that fails, collected and then diagnosed; a running job that went quiet, collected as hung;
unknown and ambiguous ids; and the apps' `DIAGAGENT_JOB_SOURCE=slurm` (CLI diagnose by id, the Slack bot)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from slack_sdk import WebClient
from typer.testing import CliRunner

from diagagent.apps.cli import build_app as build_cli
from diagagent.apps.slack import build_app
from diagagent.config import Settings
from diagagent.telemetry import UnknownJob
from diagagent.telemetry.collect import AmbiguousJob, CollectError, SlurmCollector, SlurmSource
from diagagent.telemetry.collect.slurm import block_layout, exit_code, parse_scontrol
from tests.slack_mock import MockSlack, mention, signed_request
from tests.slurm_cluster import FAILING_JOB, SlurmCluster, slurm_cluster

SECRET = "collect-signing-secret"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    with slurm_cluster(tmp_path_factory.mktemp("slurm")) as c:
        yield c


@pytest.fixture(scope="module")
def failed_job(cluster: SlurmCluster) -> str:
    job_id = cluster.submit(FAILING_JOB)
    assert cluster.wait(job_id) == "FAILED"
    return job_id


@pytest.fixture
def slurm_env(cluster: SlurmCluster, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("SLURM_CONF", cluster.env["SLURM_CONF"])
    monkeypatch.setenv("PATH", cluster.env["PATH"])
    monkeypatch.setenv("DIAGAGENT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(tmp_path / "jobs"))
    return tmp_path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_cli(), list(args))
    return result.exit_code, result.output


def test_collect_slurm_then_diagnose_names_the_failed_tasks_node_and_error(cluster: SlurmCluster, failed_job: str,
                                                                            slurm_env: Path) -> None:
    out = slurm_env / "bundle"
    code, text = _cli("collect", "slurm", failed_job, "-o", str(out), "--json")
    assert code == 0, text
    result = json.loads(text)
    assert (result["status"], result["hosts"]) == ("failed", [cluster.host])
    job = yaml.safe_load((out / "job.yaml").read_text())
    assert (job["job_id"], job["name"], job["status"], job["exit_code"]) == (failed_job, "llama-tiny", "failed", 1)
    assert job["nodes"] == [{"host": cluster.host, "ranks": [0, 1, 2, 3]}] and job["ended_at"]
    logs = out / "logs" / cluster.host
    assert sorted(p.name for p in logs.iterdir()) == ["batch.log", "rank-0.log", "rank-1.log", "rank-2.log",
                                                      "rank-3.log"]
    assert "illegal memory access" in (logs / "rank-2.log").read_text()
    assert not any(line[:1].isdigit() for line in (logs / "rank-0.log").read_text().splitlines())  # labels gone

    code, text = _cli("diagnose", str(out), "--json", "--no-submit")
    assert code == 0, text
    d = json.loads(text)
    cause = next(e for e in d["evidence"] if e["role"] == "cause")
    assert cause["file"] == f"logs/{cluster.host}/rank-2.log" and "illegal memory access" in cause["text"]
    assert d["fault"] == "cuda_illegal_memory_access" and d["status"] == "failed"


def test_a_running_job_whose_output_stopped_is_collected_as_hung(cluster: SlurmCluster, slurm_env: Path) -> None:
    job_id = cluster.submit("#SBATCH -n 1\necho 'iteration 10/ 100 | loss 2.0'\nsleep 120")
    try:
        cluster.wait(job_id, until=("RUNNING",))
        time.sleep(1.5)
        result = SlurmCollector(quiet_for_s=1.0).collect(job_id, slurm_env / "hung")
        job = yaml.safe_load((slurm_env / "hung" / "job.yaml").read_text())
        assert result.status == job["status"] == "hung" and "ended_at" not in job
        assert any("collected as hung" in n for n in job["collected_notes"])
        assert SlurmCollector(quiet_for_s=3600).collect(job_id, slurm_env / "hung").status == "running"
    finally:
        cluster.run(["scancel", job_id], check=False)


def test_an_unknown_job_id_says_what_slurm_said(cluster: SlurmCluster, slurm_env: Path) -> None:
    with pytest.raises(CollectError, match=r"Slurm does not know job 999999: scontrol said .*Invalid job id"):
        SlurmCollector().collect("999999", slurm_env / "x")
    assert not (slurm_env / "x").exists()
    code, text = _cli("collect", "slurm", "42; rm -rf /")
    assert code == 2 and "is not a Slurm job id" in text


def test_the_slurm_job_source_collects_by_id_and_refuses_an_ambiguous_name(cluster: SlurmCluster, failed_job: str,
                                                                           slurm_env: Path) -> None:
    other = cluster.submit(FAILING_JOB)
    cluster.wait(other)
    source = SlurmSource(slurm_env / "collected")
    with pytest.raises(AmbiguousJob) as err:
        source.path_of("llama-tiny")
    assert failed_job in str(err.value) and other in str(err.value)
    with pytest.raises(UnknownJob, match="Known jobs: "):
        source.path_of("no-such-job")
    path = source.path_of(failed_job)
    assert path == slurm_env / "collected" / failed_job and (path / "job.yaml").is_file()


def test_diagnose_by_job_id_with_the_slurm_source(failed_job: str, slurm_env: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    code, text = _cli("diagnose", failed_job, "--json", "--no-submit")
    assert code == 2 and "No job" in text  # the jobs folder (the default source) does not have it
    monkeypatch.setenv("DIAGAGENT_JOB_SOURCE", "slurm")
    code, text = _cli("diagnose", failed_job, "--json", "--no-submit")
    assert code == 0, text
    assert json.loads(text)["fault"] == "cuda_illegal_memory_access"
    assert (slurm_env / "state" / "collected" / "slurm" / failed_job / "job.yaml").is_file()


def test_the_slack_bot_answers_why_did_job_die_from_slurm(failed_job: str, slurm_env: Path) -> None:
    settings = Settings(jobs_dir=slurm_env / "jobs", state_dir=slurm_env / "state-slack", job_source="slurm",
                        llm_base_url=None, slack_bot_token="xoxb-test", slack_signing_secret=SECRET)
    with MockSlack() as slack:
        app = build_app(settings, WebClient(token="xoxb-test", base_url=slack.api_url), process_before_response=True)
        mark = slack.mark()
        body = mention(f"why did job {failed_job} die?", ts="1700000000.000100")
        assert app.dispatch(signed_request(SECRET, body, "application/json")).status == 200
        texts = json.dumps([c.args for c in slack.since(mark)])
    assert f"Job {failed_job}" in texts and "llegal memory access" in texts


# --- the parts, without a cluster -------------------------------------------------------------------------------

def test_scontrol_records_parse_with_spaces_and_odd_keys() -> None:
    [rec] = parse_scontrol("JobId=7 JobName=my job NumTasks=4 CPUs/Task=1 ReqB:S:C:T=0:0:*:* StdOut=/a b/o.out")
    assert (rec["JobName"], rec["CPUs/Task"], rec["StdOut"]) == ("my job", "1", "/a b/o.out")
    assert exit_code("3:0") == 3 and exit_code("0:9") == 137 and exit_code(None) is None


def test_block_layout_spreads_tasks_like_slurm() -> None:
    assert block_layout(["a", "b"], 5) == {0: "a", 1: "a", 2: "a", 3: "b", 4: "b"}
