"""A real single-node Slurm for the tests: munged, slurmctld and slurmd (Debian's packages) started as root in a
private folder with free ports and a private munge socket; a test that needs it is skipped, with why, if it cannot run.

CI: `.ci/system_packages.sh` installs Debian's slurm-wlm and munge as root, so these tests run; without them they skip.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol")
TRAIN_TASK = Path(__file__).parent / "fixtures" / "slurm" / "train_task.sh"
HANGING_TASK = Path(__file__).parent / "fixtures" / "slurm" / "hanging_task.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "the test Slurm runs its daemons as root; not root here"
    missing = [d for d in DAEMONS if shutil.which(d, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None]
    if missing:
        return (f"{', '.join(missing)} not installed (Debian: apt-get install -y slurm-wlm munge, as "
                ".ci/system_packages.sh does)")
    if not Path("/etc/munge/munge.key").is_file():
        return "no /etc/munge/munge.key (the munge package creates it)"
    return None


class SlurmCluster:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.host = socket.gethostname().split(".")[0]
        self.env = {**os.environ, "SLURM_CONF": str(root / "slurm.conf"),
                    "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin"}
        self.procs: list[subprocess.Popen[bytes]] = []

    def write_conf(self) -> None:
        r = self.root
        for d in ("state", "spool", "log", "out"):
            (r / d).mkdir(parents=True, exist_ok=True)
        r.chmod(0o755)
        (r / "slurm.conf").write_text(f"""ClusterName=diagtest
SlurmctldHost={self.host}
AuthType=auth/munge
AuthInfo=socket={r}/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName={self.host} CPUs=4 State=UNKNOWN
PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP
""", encoding="utf-8")

    def _start(self, argv: list[str], name: str) -> None:
        log = (self.root / "log" / f"{name}.out").open("wb")
        self.procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                           start_new_session=True))
        log.close()

    def start(self) -> str | None:
        """Start the daemons; None when the node is idle, else why not (with the logs' last lines)."""
        self.write_conf()
        r = self.root
        self._start(["munged", "-F", "--force", f"--socket={r}/munge.sock", f"--pid-file={r}/munged.pid",
                     f"--log-file={r}/log/munged.log", f"--seed-file={r}/munged.seed"], "munged")
        time.sleep(0.5)
        self._start(["slurmctld", "-D", "-i"], "slurmctld")
        time.sleep(1.0)
        self._start(["slurmd", "-D", "-N", self.host], "slurmd")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            state = self.run(["sinfo", "-h", "-o", "%T"], check=False).stdout.strip()
            if state in ("idle", "mixed"):
                return None
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        tails = []
        for f in sorted((r / "log").glob("*")):
            lines = f.read_text(errors="replace").strip().splitlines()[-3:]
            tails.append(f"{f.name}: {' | '.join(lines)}")
        return "the test Slurm did not come up: " + "; ".join(tails)

    def stop(self) -> None:
        """Cancel the jobs still there (and wait for them to go), stop the daemons, then end what outlived them:
        a job step's slurmstepd and tasks, found by this cluster's SLURM_CONF in their environment."""
        if self.procs and all(p.poll() is None for p in self.procs):
            jobs = self.run(["squeue", "-h", "-o", "%i"], check=False).stdout.split()
            if jobs:
                self.run(["scancel", "--quiet", *jobs], check=False)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and self.run(["squeue", "-h"], check=False).stdout.strip():
                    time.sleep(0.3)
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._end_leftovers()

    def _end_leftovers(self) -> None:
        mark = f"SLURM_CONF={self.env['SLURM_CONF']}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if mark in environ:
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                except OSError:
                    pass

    def run(self, argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, check=check, timeout=60)

    def submit(self, script: str, name: str = "llama-tiny") -> str:
        path = self.root / f"{name}-{time.monotonic_ns()}.sh"
        path.write_text(f"#!/bin/bash\n#SBATCH -J {name}\n#SBATCH -o {self.root}/out/slurm-%j.out\n{script}\n")
        out = self.run(["sbatch", "--parsable", str(path)]).stdout.strip()
        return out.split(";")[0]

    def state(self, job_id: str) -> str:
        out = self.run(["scontrol", "show", "job", "-o", job_id]).stdout
        return next((f.split("=", 1)[1] for f in out.split() if f.startswith("JobState=")), "?")

    def wait(self, job_id: str, until: tuple[str, ...] = ("FAILED", "COMPLETED", "CANCELLED", "TIMEOUT"),
             timeout_s: float = 60.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            state = self.state(job_id)
            if state in until:
                return state
            time.sleep(0.3)
        raise AssertionError(f"job {job_id} still {self.state(job_id)} after {timeout_s:g} s")


@contextmanager
def slurm_cluster(root: Path) -> Iterator[SlurmCluster]:
    why = _why_not()
    if why:
        pytest.skip(why)
    cluster = SlurmCluster(root)
    try:
        why = cluster.start()
        if why:
            pytest.skip(why)
        yield cluster
    finally:
        cluster.stop()


FAILING_JOB = f"#SBATCH -n 4\n#SBATCH --overcommit\necho \"starting on $(hostname)\"\nsrun -l {TRAIN_TASK}\n"
