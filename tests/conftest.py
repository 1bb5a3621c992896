"""Shared fixtures: a small hand-written bundle in real formats, and isolated settings per test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

JOB_YAML = textwrap.dedent("""\
    job_id: "42"
    name: llama3-8b-pretrain
    framework: megatron
    status: failed
    started_at: 2026-11-20T08:00:00Z
    ended_at: 2026-11-20T10:12:00Z
    gpus_per_node: 2
    parallelism: {tp: 2, pp: 2, dp: 2, cp: 1, ep: 1}
    nodes:
      - {host: node-001, ip: 10.0.0.1, ranks: [0, 1]}
      - {host: node-002, ip: 10.0.0.2, ranks: [2, 3]}
      - {host: node-003, ip: 10.0.0.3, ranks: [4, 5]}
      - {host: node-004, ip: 10.0.0.4, ranks: [6, 7]}
    code:
      - {commit: 9f2c1ab, at: 2026-11-18T10:00:00Z, message: "bump lr warmup"}
    checkpoints:
      - {step: 1000, at: 2026-11-20T09:10:00Z, path: /ckpt/42/iter_0001000, valid: true}
    spares: 2
    """)


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own state dir, and no LLM endpoint or config file from the developer's machine."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("DIAGAGENT_STATE_DIR", str(state))
    monkeypatch.setenv("DIAGAGENT_CONFIG", str(state / "absent.toml"))
    for var in ("DIAGAGENT_LLM_BASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DIAGAGENT_CHROMA_URL"):
        monkeypatch.delenv(var, raising=False)
    return state


@pytest.fixture
def small_bundle(tmp_path: Path) -> Path:
    """A 4-node bundle: rank logs, a node log, flows, a stack dump and probes, in the formats clusters print."""
    root = tmp_path / "job-42"
    (root / "logs" / "node-001").mkdir(parents=True)
    (root / "logs" / "node-002").mkdir(parents=True)
    (root / "job.yaml").write_text(JOB_YAML)
    (root / "logs" / "node-001" / "rank-0.log").write_text(
        "[2026-11-20 08:00:05,120] [INFO] [megatron] building GPT model ...\n"
        " iteration      100/  100000 | consumed samples:        12800 | elapsed time per iteration (ms): 4012.3 |"
        " lm loss: 2.113E+00 | grad norm: 0.981 |\n"
        "[rank0]:[E1120 10:01:02.123456 ProcessGroupNCCL.cpp:683] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=78, OpType=ALLREDUCE, NumelIn=80, NumelOut=80, Timeout(ms)=600000) ran for "
        "600096 milliseconds before timing out.\n")
    (root / "logs" / "node-002" / "stdout.log").write_text(
        "[rank2]:Traceback (most recent call last):\n"
        "[default1]:RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
        "node-002:1234:5678 [1] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'\n"
        "Nov 20 10:00:58 node-002 kernel: NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, DBE (double bit error)\n")
    (root / "flows").mkdir()
    (root / "flows" / "flows.csv").write_text(
        "start,end,src_ip,dst_ip,bytes\n"
        "1795161600.0,1795161600.5,10.0.0.1,10.0.0.2,1048576\n"
        "2026-11-20T08:00:01Z,2026-11-20T08:00:01.5Z,10.0.0.2,10.0.0.1,1048576\n")
    (root / "stacks" / "node-001").mkdir(parents=True)
    (root / "stacks" / "node-001" / "rank-0.txt").write_text(
        "Process 1234: python pretrain_gpt.py\nPython v3.11.7 (/usr/bin/python3.11)\n\n"
        "Thread 1234 (active): \"MainThread\"\n    all_reduce (torch/distributed/distributed_c10d.py:2501)\n")
    (root / "probes" / "node-002").mkdir(parents=True)
    (root / "probes" / "node-002" / "dmesg.txt").write_text(
        "[Fri Nov 20 10:00:58 2026] NVRM: Xid (PCI:0000:3b:00): 48, pid=1234, name=python, DBE (double bit error)\n")
    return root
