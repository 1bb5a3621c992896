"""Raw logs in, no job.yaml needed: hosts and ranks inferred from launcher prefixes, NCCL headers and names.

Real files, real gzip / zstd / tar / zip, the real CLI through typer's runner, and dev cases of evals/real.
"""

from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
import yaml
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from diagagent.apps.cli import build_app
from diagagent.config import Settings
from diagagent.diagnosis import diagnose
from diagagent.telemetry import Bundle, BundleError, rawlogs
from diagagent.telemetry.rawlogs import bundle_from_logs, open_inputs

DEV = Path(__file__).resolve().parent.parent / "evals" / "real" / "dev"
HOSTS = ["gpu-a01", "gpu-a02", "gpu-a03"]


def srun_log(ranks: int = 24, per_host: int = 8, iterations: int = 5) -> str:
    """An interleaved `srun -l` log as Slurm writes it: NCCL init naming each host, progress, one rank's ECC error,
    then srun's own summary."""
    lines = [f"{r:2d}: {HOSTS[r // per_host]}:{4000 + r}:{4100 + r} [{r % per_host}] NCCL INFO Bootstrap : Using "
             f"eth0:10.0.0.{r // per_host}<0>" for r in range(ranks)]
    for it in range(1, iterations + 1):
        lines += [f"{r:2d}: [2026-11-20 08:0{it}:00,000] [INFO] [megatron]  iteration {it * 10}/ 1000 | lm loss: "
                  f"2.{r:02d}E+00 |" for r in range(ranks)]
    bad = 13 if ranks > 13 else ranks - 1
    lines.append(f"{bad}: RuntimeError: CUDA error: uncorrectable ECC error encountered")
    lines += [f"{r:2d}: [rank{r}]:[E1120 08:09:00.000000 ProcessGroupNCCL.cpp:683] [Rank {r}] Watchdog caught "
              "collective operation timeout" for r in range(ranks) if r != bad]
    lines.append(f"srun: error: {HOSTS[bad // per_host]}: task {bad}: Exited with exit code 1")
    return "\n".join(lines) + "\n"


def job_of(root: Path) -> dict:
    return yaml.safe_load((root / "job.yaml").read_text())


# --- inference -----------------------------------------------------------------------------------------------


def test_srun_log_is_split_per_rank_with_hosts_from_nccl(tmp_path: Path) -> None:
    src = tmp_path / "slurm-4242.out.gz"
    src.write_bytes(gzip.compress(srun_log().encode()))
    root = bundle_from_logs([src], tmp_path / "b")
    job = job_of(root)
    assert job["job_id"] == "4242"
    assert [n["host"] for n in job["nodes"]] == HOSTS
    assert job["nodes"][1]["ranks"] == list(range(8, 16))
    assert "3 hosts, 24 ranks inferred from srun -l prefixes" in job["inferred"][0]
    rank13 = (root / "logs" / "gpu-a02" / "rank-13.out").read_text().splitlines()
    assert rank13[-1] == "13: RuntimeError: CUDA error: uncorrectable ECC error encountered"  # kept whole
    assert all(line.startswith("13: ") for line in rank13)
    # srun's own lines: on the first node, where the batch script (and srun) runs
    assert "srun: error: gpu-a02: task 13" in (root / "logs" / "gpu-a01" / "slurm-4242.out").read_text()
    with Bundle.open(root) as b:
        assert len(b.log_files) == 25
        assert any("3 hosts, 24 ranks inferred from srun -l prefixes" in str(i) for i in b.issues)


def test_srun_summary_names_the_host_of_a_rank_without_nccl_lines(tmp_path: Path) -> None:
    src = tmp_path / "job.out"
    src.write_text("0: starting\n1: starting\n1: Traceback (most recent call last):\nsrun: error: node-9: tasks "
                   "0-1: Exited with exit code 1\n")
    job = job_of(bundle_from_logs([src], tmp_path / "b"))
    assert job["nodes"] == [{"host": "node-9", "ranks": [0, 1]}]
    assert "hosts from srun's error summaries" in job["inferred"][0]


@pytest.mark.parametrize(("text", "files", "label"), [
    ("[1,0]<stdout>:hello\n[1,1]<stderr>:node-b:1:2 [1] NCCL WARN x\n[1,0]<stdout>:bye\n",
     {"logs/unknown-host/rank-0.log": 2, "logs/node-b/rank-1.log": 1}, "OpenMPI --tag-output prefixes"),
    (("worker-0: [2024-01-01 10:00:00,000] [INFO] start\nworker-1: [2024-01-01 10:00:00,000] [INFO] start\n"
     "worker-1: RuntimeError: boom\n"),
     {"logs/worker-0/x.log": 1, "logs/worker-1/x.log": 2}, "pdsh / DeepSpeed launcher prefixes"),
    ("[pod/train-worker-0/pytorch] step 1\n[pod/train-worker-1/pytorch] step 1\n[pod/train-worker-1/pytorch] OOM\n",
     {"logs/train-worker-0/x.log": 1, "logs/train-worker-1/x.log": 2}, "kubectl --prefix prefixes"),
    (("# nThread 1\ngpu4:1:2 [0] NCCL INFO a\ngpu5:3:4 [1] transport/net_ib.cu:788 NCCL WARN NET/IB : Got "
      "completion\ngpu4:1:2 [0] NCCL INFO b\n# Out of bounds values : 0 OK\ngpu5: Test NCCL failure common.cu:343\n"),
     {"logs/gpu4/x.log": 3, "logs/gpu5/x.log": 2, "logs/gpu4/x.launcher.log": 1}, "2 hosts inferred from NCCL headers"),
])
def test_launcher_prefixes(tmp_path: Path, text: str, files: dict[str, int], label: str) -> None:
    src = tmp_path / "x.log"
    src.write_text(text)
    root = bundle_from_logs([src], tmp_path / "b")
    for rel, n in files.items():
        assert len((root / rel).read_text().splitlines()) == n, rel
    assert any(label in note for note in job_of(root)["inferred"])


def test_a_ray_driver_log_is_split_by_worker_ip_and_names_the_node_whose_gpu_failed(tmp_path: Path) -> None:
    """Ray's driver log holds every worker's lines behind `(RayTrainWorker pid=N, ip=A)`; torchrun's `[rankN]:`
    behind it places the rank. The node is the one whose rank printed the ECC error, not the driver's, whose 'Trial
    task failed' only one node prints too."""
    w = "(RayTrainWorker pid={pid}, ip=10.0.0.{n}) "
    lines = ["2026-11-20 08:00:01,000\tINFO worker.py:1749 -- Connecting to existing Ray cluster",
             "(TorchTrainer pid=5100) Started distributed worker processes:",
             w.format(pid=5201, n=1) + "Setting up process group for: env:// [rank=0, world_size=2]",
             "\x1b[36m" + w.format(pid=5301, n=2).rstrip() + "\x1b[0m Setting up process group for: env:// [rank=1, "
             "world_size=2]",
             w.format(pid=5201, n=1) + "Epoch 0:  10%|#         | 100/1000 [01:40<15:00,  1.00it/s, loss=2.31]",
             w.format(pid=5301, n=2) + "[rank1]: Traceback (most recent call last):",
             w.format(pid=5301, n=2) + '[rank1]:   File "/app/train.py", line 80, in train_func',
             w.format(pid=5301, n=2) + "[rank1]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
             w.format(pid=5201, n=1) + "[rank0]:[E1120 08:12:00.000000000 ProcessGroupNCCL.cpp:1484] [PG 0 Rank 0] "
             "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE) ran for 600010 "
             "milliseconds before timing out.",
             "2026-11-20 08:12:05,000\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_abc"]
    src = tmp_path / "driver.log"
    src.write_text("\n".join(lines) + "\n")
    root = bundle_from_logs([src], tmp_path / "b")
    job = job_of(root)
    assert job["nodes"] == [{"host": "10.0.0.1", "ranks": [0]}, {"host": "10.0.0.2", "ranks": [1]}]
    assert any("Ray worker prefixes" in note for note in job["inferred"])
    assert len((root / "logs/10.0.0.2/driver.log").read_text().splitlines()) == 4
    with Bundle.open(root) as b:
        d = diagnose(b, Settings(state_dir=tmp_path / "state"))
    assert (d.fault, d.faulty_hosts) == ("gpu_ecc_uncorrectable", ["10.0.0.2"])


def test_torchrun_prefixes_give_the_ranks_of_a_plain_file(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "node-1.log").write_text("[default0]:a\n[default1]:b\nnode-1:5:6 [0] NCCL INFO x\n")
    (tmp_path / "in" / "node-2.log").write_text("[default0]:a\n[default1]:RuntimeError: boom\n")
    job = job_of(bundle_from_logs([tmp_path / "in"], tmp_path / "b"))
    assert job["nodes"] == [{"host": "node-1", "ranks": [0, 1]}, {"host": "node-2", "ranks": [2, 3]}]
    with Bundle.open(tmp_path / "b") as b:
        lines = list(b.iter_all_log_lines())
    assert next(ln for ln in lines if "boom" in ln.text).rank == 3  # [default1] on the second host


def test_host_from_folder_nccl_or_name_and_parts_copied(tmp_path: Path) -> None:
    d = tmp_path / "case"
    (d / "logs" / "node-7").mkdir(parents=True)
    (d / "logs" / "node-7" / "stdout.log").write_text("plain line\n")
    (d / "probes" / "node-7").mkdir(parents=True)
    (d / "probes" / "node-7" / "dmesg.txt").write_text("NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus\n")
    (d / "truth.json").write_text("{}")
    (d / "h.txt").write_text("gpu-x9:1:2 [0] NCCL INFO Init\n")
    (d / "trainer").write_text("no host here\n")
    root = bundle_from_logs([d], tmp_path / "b")
    assert (root / "logs" / "node-7" / "stdout.log").is_file()
    assert (root / "logs" / "gpu-x9" / "h.txt").is_file()
    assert (root / "logs" / "trainer" / "trainer.log").is_file()
    assert (root / "probes" / "node-7" / "dmesg.txt").read_text().startswith("NVRM: Xid")
    assert not (root / "truth.json").exists()


def test_compressed_and_archived_inputs(tmp_path: Path) -> None:
    text = srun_log(ranks=4, per_host=2).encode()
    (tmp_path / "a.log.zst").write_bytes(zstandard.ZstdCompressor().compress(text))
    with tarfile.open(tmp_path / "logs.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "a.log.zst", arcname="run/a.log.zst")
    with zipfile.ZipFile(tmp_path / "logs.zip", "w") as zf:
        zf.writestr("a.log", text)
        zf.writestr("../evil.log", "x\n")
    for name in ("a.log.zst", "logs.tar.gz", "logs.zip"):
        out = tmp_path / f"b-{name}"
        issues: list = []
        job = job_of(bundle_from_logs([tmp_path / name], out, issues=issues))
        assert [n["host"] for n in job["nodes"]] == HOSTS[:2], name
        assert (out / "logs" / "gpu-a02" / "rank-3.log").read_text().count("\n") == 7, name
        if name == "logs.zip":
            assert any("unsafe zip member" in i.problem and "evil" in i.problem for i in issues)


def test_a_raw_tarball_is_unpacked_once_with_the_same_result(tmp_path: Path, monkeypatch) -> None:
    """open_inputs unpacks a .tar.gz once: a bundle when it holds job.yaml, else raw logs read from that same folder;
    the bundle built is the one the unpacked logs give."""
    from diagagent.telemetry import bundle as bundle_module

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "a.log").write_text(srun_log(ranks=4, per_host=2))
    with tarfile.open(tmp_path / "logs.tar.gz", "w:gz") as tar:
        tar.add(tmp_path / "run" / "a.log", arcname="run/a.log")
    real_extract, unpacked = bundle_module._extract, []

    def counting_extract(source, *rest):
        unpacked.append(Path(source).name)
        return real_extract(source, *rest)

    monkeypatch.setattr(bundle_module, "_extract", counting_extract)
    with open_inputs([str(tmp_path / "logs.tar.gz")], tmp_path, save=tmp_path / "from-tar") as b:
        assert [n.host for n in b.job.nodes] == HOSTS[:2]
    assert unpacked == ["logs.tar.gz"]
    from_dir = bundle_from_logs([tmp_path / "run"], tmp_path / "from-dir")
    for rel in ("logs/gpu-a01/rank-0.log", "logs/gpu-a02/rank-3.log"):
        assert (tmp_path / "from-tar" / rel).read_bytes() == (from_dir / rel).read_bytes()
    assert job_of(tmp_path / "from-tar")["nodes"] == job_of(from_dir)["nodes"]
    assert not list(Path(tempfile.gettempdir()).glob("diagagent-bundle-*/run/a.log"))  # the unpacked folder is gone

    bundle_tar = tmp_path / "bundle.tar.gz"  # one that holds job.yaml opens as the bundle, from that one unpacking
    with tarfile.open(bundle_tar, "w:gz") as tar:
        tar.add(from_dir, arcname="job")
    unpacked.clear()
    with open_inputs([str(bundle_tar)], tmp_path) as b:
        assert b.root.name == "job" and [n.host for n in b.job.nodes] == HOSTS[:2]
    assert unpacked == ["bundle.tar.gz"]


# --- streaming and bad input ---------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.text("abc xyz:[]", max_size=12)), min_size=1, max_size=60))
def test_each_ranks_lines_come_out_in_order_whatever_the_interleaving(tmp_path_factory, lines) -> None:
    tmp = tmp_path_factory.mktemp("h")
    (tmp / "s.log").write_text("".join(f"{r}: {t}\n" for r, t in lines))
    root = bundle_from_logs([tmp / "s.log"], tmp / "b")
    fmt = rawlogs._detect([f"{r}: {t}".encode() for r, t in lines])
    if fmt is None:  # too few labelled lines to call it srun -l: one plain file, whole
        return
    for r in {r for r, _ in lines}:
        got = (root / "logs" / "unknown-host" / f"rank-{r}.log").read_text().splitlines()
        assert got == [f"{r}: {t}" for rr, t in lines if rr == r]


def test_many_ranks_small_buffers_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rawlogs, "FLUSH_BYTES", 512)
    monkeypatch.setattr(rawlogs, "OPEN_FILES", 8)
    monkeypatch.setattr(rawlogs, "BLOCK", 1024)
    opened = []
    real_flush = rawlogs._Outputs.flush

    def counting(self: rawlogs._Outputs) -> None:
        real_flush(self)
        opened.append(len(self.handles))

    monkeypatch.setattr(rawlogs._Outputs, "flush", counting)
    (tmp_path / "s.log").write_text("".join(f"{r}: line {i} of rank {r}\n" for i in range(20) for r in range(300)))
    root = bundle_from_logs([tmp_path / "s.log"], tmp_path / "b")
    assert max(opened) <= 8 and len(opened) > 10  # written as it went, never more than OPEN_FILES open
    assert (root / "logs" / "unknown-host" / "rank-299.log").read_text().splitlines()[19] == "299: line 19 of rank 299"


def test_bad_inputs_are_named(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="nope.log: no such file"):
        bundle_from_logs([tmp_path / "nope.log"], tmp_path / "b1")
    with pytest.raises(BundleError, match=r"\*.zzz: no file matches"):
        bundle_from_logs([str(tmp_path / "*.zzz")], tmp_path / "b2")
    (tmp_path / "core").write_bytes(b"\x7fELF\0\0\0binary")
    (tmp_path / "ok.log").write_bytes(b"fine\n\xff\xfe not utf-8\n" + b"x" * (rawlogs.MAX_LINE_BYTES + 10) + b"\nend\n")
    issues: list = []
    root = bundle_from_logs([tmp_path / "core", tmp_path / "ok.log"], tmp_path / "b3", issues=issues)
    assert any("core" in i.file and "not text" in i.problem for i in issues)
    assert any(i.file.endswith("ok.log") and i.line == 3 and "cut there" in i.problem for i in issues)
    assert (root / "logs" / "ok" / "ok.log").read_bytes().endswith(b"\nend\n")
    with pytest.raises(BundleError, match="no log lines"):
        bundle_from_logs([tmp_path / "core"], tmp_path / "b4")


# --- the command line --------------------------------------------------------------------------------------------


def run(args: list[str], stdin: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(build_app(), args, input=stdin)
    return result.exit_code, result.output


def test_diagnose_stdin_names_the_node_and_says_what_was_inferred(tmp_path: Path) -> None:
    code, out = run(["diagnose", "-", "--json", "--no-submit"], srun_log().encode())
    assert code == 0, out
    d = json.loads(out)
    assert d["fault"] == "gpu_ecc_uncorrectable" and d["faulty_nodes"][0]["host"] == "gpu-a02"
    assert any("3 hosts, 24 ranks inferred from srun -l prefixes" in n for n in d["notes"])


def test_diagnose_file_save_and_rerun(tmp_path: Path) -> None:
    (tmp_path / "slurm-4242.out").write_text(srun_log())
    code, out = run(["diagnose", str(tmp_path / "slurm-4242.out"), "--json", "--no-submit", "--save",
                     str(tmp_path / "saved")])
    assert code == 0, out
    first = json.loads(out)
    assert (tmp_path / "saved" / "job.yaml").is_file()
    code, out = run(["diagnose", str(tmp_path / "saved"), "--json", "--no-submit"])
    again = json.loads(out)
    assert (again["job_id"], again["fault"], again["notes"]) == (first["job_id"], first["fault"], first["notes"])
    code, out = run(["diagnose", str(tmp_path / "slurm-4242.out"), "--save", str(tmp_path / "saved")])
    assert code == 2 and "not empty" in out


def test_show_and_logs_take_raw_logs_and_status(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text(srun_log(ranks=4, per_host=2))
    code, out = run(["show", str(tmp_path / "a.log"), "--json", "--status", "hung"])
    assert code == 0, out
    s = json.loads(out)
    assert (s["status"], s["nodes"], s["world_size"]) == ("hung", 2, 4)
    assert "2 hosts, 4 ranks inferred from srun -l prefixes" in s["inferred"][0] and not s["read_issues"]
    code, out = run(["logs", str(tmp_path / "*.log"), "--json"])
    assert code == 0, out
    assert json.loads(out)["hosts_with_logs"] == 2
    code, out = run(["show", str(tmp_path / "missing.log")])
    assert code == 2 and "missing.log: no such file" in out


@pytest.mark.parametrize("case", ["deepspeed-1604", "horovod-584", "nccl-629", "colossalai-3076", "verl-2950"])
def test_dev_cases_raw_give_their_bundles_diagnosis(case: str, tmp_path: Path) -> None:
    """evals/real/dev (never test/): the logs/ files cat into one stream, and the logs/ directory, diagnose as the
    bundle does (category, fault, cited texts)."""
    cfg = Settings(state_dir=tmp_path / "state")

    def key(b: Bundle) -> tuple:
        d = diagnose(b, cfg)
        return d.category, d.fault, sorted({e.text.strip() for e in d.evidence if e.role == "cause"})

    folder = DEV / case
    with Bundle.open(folder) as b:
        want = key(b)
    files = sorted(p for p in (folder / "logs").rglob("*") if p.is_file())
    stream = io.BytesIO(b"".join(p.read_bytes() for p in files))
    with open_inputs(["-"], tmp_path, stdin=stream) as b:
        assert key(b) == want
    with open_inputs([str(folder / "logs")], tmp_path) as b:
        assert key(b) == want
    shutil.rmtree(tmp_path / "state", ignore_errors=True)


def test_eval_scores_a_raw_case_as_its_bundle(tmp_path: Path) -> None:
    """A case folder of raw logs with truth.json and no job.yaml is scored like the bundle it came from."""
    shutil.copytree(DEV / "horovod-584", tmp_path / "bundle" / "horovod-584")
    shutil.copytree(DEV / "horovod-584", tmp_path / "raw" / "horovod-584")
    (tmp_path / "raw" / "horovod-584" / "job.yaml").unlink()
    scores = []
    for kind in ("bundle", "raw"):
        code, out = run(["eval", str(tmp_path / kind), "--json", "-", "--baseline", "grep"])
        assert code == 0, out
        data = json.loads(out[out.index("{"):])
        case = data["per_case"][0]
        scores.append({k: v for k, v in case.items() if k not in ("set", "seconds")})
    assert scores[0] == scores[1]
    assert scores[1]["predicted_category"] == "network" and scores[1]["events"]["recall_at_1"] == 1.0


def test_srun_launching_torchrun_gives_tasks_not_ranks(tmp_path: Path) -> None:
    """`srun -l torchrun ...` (one task per node): the label is the task, the rank is in [rankN] after it."""
    (tmp_path / "out.log").write_text("0: [rank0]: starting\n1: [rank8]: starting\n"
                                      "1: [rank9]: node-b:7:8 [1] NCCL WARN Net : Connection closed by remote peer\n"
                                      "0: [rank1]: RuntimeError: boom\n")
    root = bundle_from_logs([tmp_path / "out.log"], tmp_path / "b")
    job = job_of(root)
    assert "2 srun tasks" in job["inferred"][0] and "ranks" not in job["inferred"][0]
    assert (root / "logs" / "node-b" / "task-1.log").read_text().count("\n") == 2
    with Bundle.open(root) as b:
        assert [lf.rank for lf in b.log_files] == [None, None]  # a task's file holds several ranks


def test_chat_refuses_stdin_and_says_what_to_do_instead() -> None:
    code, out = run(["chat", "-"], b"0: hello\n")
    assert code == 2 and "--save DIR" in out
