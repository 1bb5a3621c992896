"""Exactly-once execution: a real `diagagent actions approve` process killed with SIGKILL while its command runs leaves
the entry `unknown` (never `approved`), nothing can run it again, and `actions reconcile` records what was found.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from diagagent.actions import Ledger, NotPending, approve_and_execute
from diagagent.apps.cli import build_app
from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal
from tests.test_actions_proposals import make_job

ME = pwd.getpwuid(os.geteuid()).pw_name
EVICT = ActionProposal(kind="evict", nodes=["node-003"], reason="Xid 79 on node-003")
WAIT_S = 60.0  # an upper bound for the child to reach the command, never a timing assertion


@pytest.fixture
def slow_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake `scontrol` first on PATH that notes its argv in calls.txt, then sleeps; the slurm executor; job 42."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text(f"#!{sys.executable}\n"
                                      "import os, sys, time\n"
                                      "with open(os.environ['FAKE_CALLS'], 'a') as f:\n"
                                      "    f.write(' '.join(sys.argv[1:]) + '\\n')\n"
                                      "time.sleep(float(os.environ.get('FAKE_SLEEP', '0')))\n"
                                      "print('drained')\n")
    (bin_dir / "scontrol").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_CALLS", str(tmp_path / "calls.txt"))
    jobs = tmp_path / "jobs" / "42"
    jobs.mkdir(parents=True)
    (jobs / "job.yaml").write_text(yaml.safe_dump(make_job().model_dump(mode="json")))
    monkeypatch.setenv("DIAGAGENT_JOBS_DIR", str(tmp_path / "jobs"))
    monkeypatch.setenv("DIAGAGENT_EXECUTOR", "slurm")
    monkeypatch.setenv("DIAGAGENT_APPROVERS", f'["{ME}", "bob"]')
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "calls.txt"


def calls(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), ["actions", *args])
    return result.exit_code, result.output


def kill_mid_run(entry_id: int, calls_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Start `diagagent actions approve ID --yes` in its own session; SIGKILL the session once scontrol has started."""
    monkeypatch.setenv("FAKE_SLEEP", "300")
    proc = subprocess.Popen([sys.executable, "-m", "diagagent", "actions", "approve", str(entry_id), "--yes"],
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WAIT_S
        while not calls(calls_file) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
        assert calls(calls_file), "scontrol never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    monkeypatch.setenv("FAKE_SLEEP", "0")


def test_a_killed_executor_leaves_unknown_that_cannot_rerun_until_reconciled(slow_slurm: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.from_settings(Settings.load())
    entry_id = ledger.submit("42", EVICT, "carol", job=make_job()).id
    kill_mid_run(entry_id, slow_slurm, monkeypatch)

    lost = ledger.get(entry_id)
    assert lost.state == "unknown" and lost.output == ""
    trail = ledger.audit(entry_id)
    assert [a.event for a in trail][-3:] == ["approved", "execution_started", "execution_lost"]
    assert trail[-2].detail["commands"] == [["scontrol", "update", "nodename=node-003", "state=drain",
                                             f"reason=diagagent: 42 {entry_id}"]]
    assert "is gone" in trail[-1].reason
    code, out = run("show", str(entry_id))
    assert code == 0 and "unknown" in out and "reconcile" in out

    # never a blind re-run: not through the CLI, not through the API
    code, out = run("approve", str(entry_id), "--yes")
    assert code == 1 and "unknown" in out
    with pytest.raises(NotPending, match="unknown"):
        approve_and_execute(ledger, entry_id, "bob", Settings.load())
    assert len(calls(slow_slurm)) == 1

    code, out = run("reconcile", str(entry_id), "--outcome", "succeeded", "--note", "sinfo shows node-003 drained")
    assert code == 0, out
    done = ledger.get(entry_id)
    assert done.state == "executed"
    last = ledger.audit(entry_id)[-1]
    assert (last.actor, last.event, last.state_before, last.state_after) == (ME, "reconciled", "unknown", "executed")
    assert last.reason == "sinfo shows node-003 drained" and last.detail["outcome"] == "succeeded"
    code, out = run("reconcile", str(entry_id), "--outcome", "failed", "--note", "again")
    assert code == 1 and "executed" in out
    assert len(calls(slow_slurm)) == 1
    assert run("verify")[0] == 0


def test_reconciled_as_not_run_needs_a_new_approval_and_then_runs_once(slow_slurm: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.from_settings(Settings.load())
    entry_id = ledger.submit("42", EVICT, "carol", job=make_job()).id
    kill_mid_run(entry_id, slow_slurm, monkeypatch)
    assert run("reconcile", str(entry_id), "--outcome", "not-run", "--note", "node-003 still idle")[0] == 0
    assert ledger.get(entry_id).state == "pending" and ledger.get(entry_id).decided_by is None
    code, out = run("approve", str(entry_id), "--yes")
    assert code == 0, out
    assert ledger.get(entry_id).state == "executed" and len(calls(slow_slurm)) == 2


def test_reconcile_needs_an_approver_a_note_and_an_outcome(slow_slurm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger = Ledger.from_settings(Settings.load())
    entry_id = ledger.submit("42", EVICT, "carol", job=make_job()).id
    assert run("reconcile", str(entry_id), "--outcome", "succeeded", "--note", "x")[0] == 1  # pending: nothing to do
    kill_mid_run(entry_id, slow_slurm, monkeypatch)
    assert run("reconcile", str(entry_id), "--outcome", "maybe", "--note", "x")[0] == 2
    assert run("reconcile", str(entry_id), "--outcome", "failed", "--note", " ")[0] == 2
    monkeypatch.setenv("DIAGAGENT_APPROVERS", '["bob"]')
    code, out = run("reconcile", str(entry_id), "--outcome", "failed", "--note", "x")
    assert code == 1 and "not an approver" in out
    assert ledger.get(entry_id).state == "unknown"
    assert ledger.audit(entry_id)[-1].event == "reconcile_refused"
