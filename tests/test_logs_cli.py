"""`diagagent logs` and `diagagent learn-normal` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from diagagent.analysis.templates import NormalPool
from tests import test_logs_fixtures as fx


def _run(app_args: list[str]):
    from diagagent.apps.cli import build_app

    return CliRunner().invoke(build_app(), app_args)


def test_logs_json_holds_the_ranked_findings(tmp_path: Path) -> None:
    root = fx.ecc_cascade(tmp_path / "ecc")
    result = _run(["logs", str(root), "--json", "--top", "3", "--workers", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["events"]) == 3
    assert data["events"][0]["role"] == "cause"
    assert data["events"][0]["first"]["file"] == "logs/node-003/rank-5.log"
    assert data["nodes"][0]["host"] == "node-003"
    assert data["stage"] == "training" and data["first_abnormal_iteration"] == 1201


def test_logs_tables_name_the_cause_and_the_node(tmp_path: Path) -> None:
    result = _run(["logs", str(fx.ecc_cascade(tmp_path / "ecc")), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "uncorrectable ECC" in result.output and "node-003" in result.output
    assert "no history jobs" in result.output


def test_learn_normal_refuses_a_failed_job_and_learns_a_successful_one(tmp_path: Path,
                                                                       isolated_settings: Path) -> None:
    refused = _run(["learn-normal", str(fx.ecc_cascade(tmp_path / "ecc"))])
    assert refused.exit_code != 0 and "succeeded" in refused.output
    learned = _run(["learn-normal", str(fx.successful(tmp_path / "ok")), "--workers", "1"])
    assert learned.exit_code == 0, learned.output
    pool = NormalPool.load(isolated_settings)
    assert list(pool.jobs) == ["39"] and len(pool.templates) >= 4


def test_logs_of_an_unknown_job_is_a_clear_error(tmp_path: Path) -> None:
    result = _run(["logs", "no-such-job"])
    assert result.exit_code == 2
    assert "no-such-job" in result.output


def test_log_text_is_shown_as_text_never_as_markup(tmp_path: Path) -> None:
    body = "mlx5_core 0000:12:00.0: Port module event[error]: module 1, Cable error [bold]\n"
    root = fx.write(tmp_path / "m", {"logs/n-1/kern.log": body}, fx.job_yaml(["n-1"], gpus=1))
    result = _run(["logs", str(root), "--workers", "1"])
    assert result.exit_code == 0, result.output
    assert "event[error]" in result.output.replace("\n", "").replace("│", "").replace(" ", "") or \
        "[error]" in result.output
