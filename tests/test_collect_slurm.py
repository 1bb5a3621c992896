"""`collect slurm` against a real single-node Slurm (started here as root; skipped with the reason if it cannot be):
a multi-task job that fails, collected and then diagnosed; a running job that went quiet, collected as hung, with
py-spy dumps of its ranks (`--stacks`); unknown and ambiguous ids; and `DIAGAGENT_JOB_SOURCE=slurm` in the apps."""

from __future__ import annotations

import json
import shutil
import sys
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
from tests.slurm_cluster import FAILING_JOB, HANGING_TASK, SlurmCluster, slurm_cluster

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


def _wait_for_lines(path: Path, text: str, count: int, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count(text) >= count:
            return
        time.sleep(0.3)
    raise AssertionError(f"{path} did not show {count} lines with {text!r} within {timeout_s:g} s")


def _py_spy() -> str:
    found = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("py-spy is not installed (it comes with the test extra: pip install -e '.[test]')")
    return found


def test_stacks_of_a_hung_job_are_dumped_per_rank_and_diagnose_reads_them(cluster: SlurmCluster,
                                                                          slurm_env: Path) -> None:
    py_spy = _py_spy()
    job_id = cluster.submit(f"#SBATCH -n 3\n#SBATCH --overcommit\nsrun -l {sys.executable} {HANGING_TASK}\n",
                            name="llama-hang")
    try:
        cluster.wait(job_id, until=("RUNNING",))
        _wait_for_lines(cluster.root / "out" / f"slurm-{job_id}.out", "waiting", 3)
        time.sleep(1.5)  # quiet for longer than --quiet-for
        out = slurm_env / "hung"
        code, text = _cli("collect", "slurm", job_id, "-o", str(out), "--stacks", "--py-spy", py_spy,
                          "--quiet-for", "1", "--json")
        assert code == 0, text
        result = json.loads(text)
        assert result["status"] == "hung"
        stacks = out / "stacks" / cluster.host
        assert sorted(p.name for p in stacks.iterdir()) == ["rank-0.txt", "rank-1.txt", "rank-2.txt"]
        for rank in (0, 1, 2):
            dump = (stacks / f"rank-{rank}.txt").read_text()
            assert dump.startswith("Process ") and str(HANGING_TASK.name) in dump
            assert ("load_next_batch" in dump) == (rank == 1) and ("wait_for_allreduce" in dump) == (rank != 1)
        assert any("py-spy dumps of 3 rank(s) on 1 node(s)" in n for n in result["notes"])
        assert sorted(p.name for p in (out / "logs" / cluster.host).iterdir()) == ["rank-0.log", "rank-1.log",
                                                                                   "rank-2.log"]

        code, text = _cli("stacks", str(out), "--json")
        assert code == 0, text
        assert "load_next_batch" in text and "wait_for_allreduce" in text
        code, text = _cli("diagnose", str(out), "--json", "--no-submit")
        assert code == 0, text
        d = json.loads(text)
        assert d["status"] == "hung"
        assert any(e["kind"] == "stack" and e["file"].startswith(f"stacks/{cluster.host}/") for e in d["evidence"])

        # py-spy missing on the node: said in the notes, and the rest of the bundle is still collected
        result = SlurmCollector(quiet_for_s=1, py_spy="no-such-py-spy").collect(job_id, slurm_env / "no-spy",
                                                                                 stacks=True)
        assert any("py-spy (no-such-py-spy) is not installed on" in n and "3 rank(s) there not dumped" in n
                   for n in result.notes)
        assert not (slurm_env / "no-spy" / "stacks").exists()
        assert len(list((slurm_env / "no-spy" / "logs" / cluster.host).iterdir())) == 3
    finally:
        cluster.run(["scancel", job_id], check=False)


def test_stacks_of_a_finished_job_are_not_taken_and_say_why(failed_job: str, slurm_env: Path) -> None:
    result = SlurmCollector().collect(failed_job, slurm_env / "done", stacks=True)
    assert any("--stacks: the job is not running (FAILED)" in n for n in result.notes)
    assert result.status == "failed" and not (slurm_env / "done" / "stacks").exists()


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


def test_node_stacks_picks_each_workers_python_process_by_its_rank(tmp_path: Path) -> None:
    """A launcher's workers (torchrun sets RANK per worker) under one Slurm task: each is dumped as its own rank;
    a task without RANK is ranked by its Slurm task id."""
    import os
    import signal
    import subprocess

    from diagagent.telemetry.collect import node_stacks

    script = (f"RANK=5 {sys.executable} -c 'import time; time.sleep(30)' & "
              f"RANK=6 {sys.executable} -c 'import time; time.sleep(30)' & wait")
    launcher = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    plain = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            table = node_stacks.process_table()
            if sum(1 for pid, parent in table.items() if parent == launcher.pid and node_stacks.is_python(pid)) == 2:
                break  # both workers forked and exec'd into Python
            time.sleep(0.1)
        chosen = node_stacks.ranks_of([(launcher.pid, "0", "3"), (plain.pid, "0", "4")], table)
        workers = sorted(pid for pid, parent in table.items() if parent == launcher.pid)
        assert sorted(r for r, _, _ in chosen) == [4, 5, 6]
        assert sorted(pid for r, pid, _ in chosen if r in (5, 6)) == workers
        assert (4, plain.pid, "0") in chosen
    finally:
        os.killpg(launcher.pid, signal.SIGKILL)  # the launcher and its workers
        plain.kill()
        launcher.wait()
        plain.wait()
