"""The CLI read at 80 columns and in a pipe: tables that fit without shredding words, probe failures that say why,
JSON errors under --json, --version and shell completion (issue 18, items 8 to 10)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from diagagent.apps.cli import build_app

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "job-42"
WIDTH = 80


def _run(args: list[str], **env: str):
    return CliRunner().invoke(build_app(), args, env={"COLUMNS": str(WIDTH), **env}, prog_name="diagagent")


def _words_kept(texts: list[str], output: str) -> None:
    """Every word of every text is in the output whole: wrapped between words, never cut inside one."""
    seen = set(output.split())
    for text in texts:
        for word in text.split():
            if len(word) < WIDTH - 10:
                assert word in seen, f"{word!r} of {text!r} was cut"


# --- item 8: 80 columns --------------------------------------------------------------------------------------

def test_logs_fit_80_columns_and_keep_every_word_of_the_templates() -> None:
    res = _run(["logs", str(EXAMPLE), "--workers", "1"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= WIDTH
    assert len(lines) < 130, f"{len(lines)} lines for 15 events"  # 265 before
    data = json.loads(_run(["logs", str(EXAMPLE), "--workers", "1", "--json"]).stdout)
    assert len(data["events"]) == 15
    shown = [e["template"][:200].rsplit(" ", 1)[0] for e in data["events"]]  # a long template is cut between words
    _words_kept(shown + [f'{e["first"]["file"]}:{e["first"]["line"]}' for e in data["events"]], res.stdout)


def test_kb_list_fits_80_columns_with_whole_ids_and_titles() -> None:
    res = _run(["kb", "list"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= WIDTH and "…" not in res.stdout
    schemata = json.loads(_run(["kb", "list", "--json"]).stdout)
    assert len(lines) < 2.5 * len(schemata), f"{len(lines)} lines for {len(schemata)} schemata"
    _words_kept([s["id"] for s in schemata] + [s["title"] for s in schemata], res.stdout)


def test_kb_search_fits_80_columns_without_cutting_ids() -> None:
    res = _run(["kb", "search", "CUDA error: uncorrectable ECC error encountered"])
    assert res.exit_code == 0, res.output
    assert max(len(line) for line in res.stdout.splitlines()) <= WIDTH and "…" not in res.stdout
    hits = json.loads(_run(["kb", "search", "CUDA error: uncorrectable ECC error encountered", "--json"]).stdout)
    _words_kept([h["failure_schema"]["id"] for h in hits] + [h["failure_schema"]["title"] for h in hits], res.stdout)


# --- item 9: probes say why, exit non-zero on any failure, --save checked first ---------------------------

def _manifest(tmp_path: Path, probes: str) -> Path:
    path = tmp_path / "probes.yaml"
    path.write_text("version: 1\ndefault_transport: local\ntransports:\n  local: {argv: []}\nprobes:\n" + probes)
    return path


def test_probe_failure_shows_the_reason_from_stderr(tmp_path: Path) -> None:
    sh = shutil.which("sh")
    script = tmp_path / "fake-ssh"
    script.write_text("echo 'ssh: Could not resolve hostname node-013: Name or service not known' >&2\nexit 255\n")
    path = _manifest(tmp_path, f"  dmesg: {{argv: [{sh}, {script}], save_as: dmesg.txt}}\n")
    res = _run(["probe", "node-013", "--manifest", str(path)])
    assert res.exit_code == 1
    assert "Could not resolve hostname node-013" in res.output.replace("\n", " ")


def test_probe_exits_non_zero_when_some_probes_could_not_start(tmp_path: Path) -> None:
    cat = shutil.which("cat")
    path = _manifest(tmp_path, (f"  ok: {{argv: [{cat}, {tmp_path / 'probes.yaml'}], save_as: ok.txt}}\n"
                                "  gone1: {argv: [no-such-probe-binary-a], save_as: a.txt}\n"
                                "  gone2: {argv: [no-such-probe-binary-b], save_as: b.txt}\n"))
    res = _run(["probe", "localhost", "--manifest", str(path), "-t", "local"])
    assert res.exit_code == 1, res.output
    flat = " ".join(res.output.split())
    assert "2 of 3 probes failed" in flat and "no-such-probe-binary-a" in flat


def test_probe_save_to_a_missing_folder_is_refused_before_running(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    touch = shutil.which("touch")
    path = _manifest(tmp_path, f"  t: {{argv: [{touch}, {marker}], save_as: t.txt}}\n")
    res = _run(["probe", "node-001", "--manifest", str(path), "--save", str(tmp_path / "no" / "such")])
    assert res.exit_code == 2
    flat = " ".join(res.output.split())
    assert "no such folder" in flat and "tarball" not in flat and not marker.exists()
    tarball = tmp_path / "b.tar.gz"
    tarball.write_bytes(b"")
    res = _run(["probe", "node-001", "--manifest", str(path), "--save", str(tarball)])
    assert res.exit_code == 2 and "tarball" in res.output and not marker.exists()


# --- item 10: JSON errors, --version, completion ---------------------------------------------------------------

def test_errors_under_json_are_a_json_object_with_a_non_zero_exit(tmp_path: Path) -> None:
    for args in (["logs", "no-such-job", "--json"], ["show", "no-such-job", "--json"],
                 ["kb", "show", "no-such-schema", "--json"], ["logs", "--json"],
                 ["logs", str(EXAMPLE), "--json", "--top", "zero"]):
        res = _run(args)
        assert res.exit_code == 2, (args, res.output)
        data = json.loads(res.stdout)
        assert data["error"] and data["exit_code"] == 2, args
    assert "no-such-job" in json.loads(_run(["logs", "no-such-job", "--json"]).stdout)["error"]
    plain = _run(["logs", "no-such-job"])  # without --json: text, as before
    assert plain.exit_code == 2 and plain.output.startswith("error:")


def test_version_and_shell_completion() -> None:
    res = _run(["--version"])
    assert res.exit_code == 0 and re.fullmatch(r"diagagent \d+\.\d+\.\d+\S*\n", res.stdout)
    res = _run(["--show-completion", "bash"])
    assert res.exit_code == 0 and "_DIAGAGENT_COMPLETE" in res.stdout, (res.output, repr(res.exception))
    assert "--install-completion" in _run(["--help"]).stdout
