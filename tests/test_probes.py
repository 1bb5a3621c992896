"""Live probes: the manifest's checks, the local transport, timeouts, output limits, --save into a bundle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from diagagent.apps.cli import build_app
from diagagent.config import packaged_content_dir
from diagagent.telemetry.live_probes import ProbeError, ProbeManifest, check_host, run_probe, save_run

FIX = Path(__file__).parent / "fixtures" / "probes"


def _manifest(tmp_path: Path, probes: str) -> Path:
    path = tmp_path / "probes.yaml"
    path.write_text("version: 1\ndefault_transport: local\ntransports:\n  local: {argv: []}\n"
                    "  ssh: {argv: [ssh, -o, BatchMode=yes, --, '{host}']}\nprobes:\n" + probes)
    return path


def test_shipped_manifest_declares_transports_and_probes() -> None:
    m = ProbeManifest.load(packaged_content_dir("tools") / "probes.yaml")
    assert set(m.transports) == {"local", "ssh", "srun", "kubectl"}
    assert {"nvidia-smi", "dcgm-diag", "dmesg", "ibstat", "ib-counters", "nccl-tests"} <= set(m.probes)
    assert m.probes["dmesg"].argv == ["dmesg", "-T"] and m.probes["dcgm-diag"].argv[:3] == ["dcgmi", "diag", "-r"]
    assert all(p.timeout_s > 0 and p.max_bytes > 0 for p in m.probes.values())
    assert m.transports["ssh"].render("node-017")[-1] == "node-017"
    assert "--nodelist=node-017" in m.transports["srun"].render("node-017")
    assert "dcgm-diag" not in m.select(None) and m.select(["dmesg", "dmesg"]) == ["dmesg"]


def test_host_names_are_checked() -> None:
    assert check_host("node-017.cluster") == "node-017.cluster"
    for bad in ("node;rm -rf /", "-oProxyCommand=x", "a b", "$(id)", ""):
        with pytest.raises(ProbeError):
            check_host(bad)


def test_manifest_refuses_shell_syntax(tmp_path: Path) -> None:
    for argv in ("[sh, -c, 'dmesg | tail']", "[dmesg, '-T;reboot']", "[cat, '{host}']"):
        with pytest.raises(ProbeError):
            ProbeManifest.load(_manifest(tmp_path, f"  bad: {{argv: {argv}, save_as: bad.txt}}\n"))
    with pytest.raises(ProbeError):
        ProbeManifest.load(_manifest(tmp_path, "  bad: {argv: [dmesg], save_as: ../../etc/passwd}\n"))


def test_local_run_save_timeout_and_limit(tmp_path: Path) -> None:
    cat = shutil.which("cat")
    assert cat is not None
    m = ProbeManifest.load(_manifest(tmp_path, (
        f"  dmesg: {{argv: [{cat}, {FIX / 'dmesg.txt'}], save_as: dmesg.txt, timeout_s: 10}}\n"
        "  slow: {argv: [sleep, '5'], save_as: slow.txt, timeout_s: 0.3}\n"
        "  loud: {argv: ['yes'], save_as: loud.txt, max_bytes: 1000, timeout_s: 10}\n"
        "  missing: {argv: [no-such-probe-binary-xyz], save_as: m.txt}\n")))
    run = run_probe("node-005", "dmesg", m, "local")
    assert run.ok and run.output == (FIX / "dmesg.txt").read_text() and run.argv[0] == cat
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    saved = save_run(run, bundle, m)
    assert saved == bundle / "probes" / "node-005" / "dmesg.txt" and saved.read_text() == run.output
    slow = run_probe("node-005", "slow", m, "local")
    assert slow.timed_out and not slow.ok and "timed out" in (slow.error or "")
    loud = run_probe("node-005", "loud", m, "local")
    assert loud.truncated and loud.bytes == 1000
    missing = run_probe("node-005", "missing", m, "local")
    assert missing.error and "cannot start" in missing.error
    with pytest.raises(ProbeError):
        run_probe("node-005", "dmesg", m, "telnet")


def test_cli_probe_local_save_and_parse(tmp_path: Path) -> None:
    cat = shutil.which("cat")
    path = _manifest(tmp_path, f"  dmesg: {{argv: [{cat}, {FIX / 'dmesg.txt'}], save_as: dmesg.txt}}\n")
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    runner = CliRunner()
    res = runner.invoke(build_app(), ["probe", "node-007", "--manifest", str(path), "--transport", "local",
                                      "--save", str(bundle)])
    assert res.exit_code == 0, res.output
    assert "xid" in res.output and (bundle / "probes" / "node-007" / "dmesg.txt").is_file()
    res = runner.invoke(build_app(), ["probe", "node-007", "--manifest", str(path), "-t", "local", "--json"])
    data = json.loads(res.output)
    assert data[0]["exit_code"] == 0 and "output" not in data[0]
    res = runner.invoke(build_app(), ["probe", "bad;host", "--manifest", str(path)])
    assert res.exit_code == 2
