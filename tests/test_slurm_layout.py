"""Which node ran which task of a multi-node Slurm job, from recorded `scontrol` / `sacct` answers (the test Slurm has
one node; tests/fixtures/slurm/multinode/README.md says where their shapes come from): the training step's record
when there is one, srun's error lines over it, and a note that says so when the layout had to be assumed."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from diagagent.telemetry.collect import CollectError, Runner, SlurmCollector
from diagagent.telemetry.collect.slurm import parse_scontrol
from diagagent.telemetry.collect.slurm_layout import (
    distribute,
    main_step,
    parse_sacct_steps,
    parse_scontrol_steps,
    srun_error_tasks,
    tasks_per_node,
)

RECORDED = Path(__file__).parent / "fixtures" / "slurm" / "multinode"
HOSTNAMES = {"gpu-[01-02]": "gpu-01\ngpu-02\n", "gpu-[03-05]": "gpu-03\ngpu-04\ngpu-05\n", "gpu-01": "gpu-01\n"}


@dataclass
class RecordedSlurm(Runner):
    """Answers Slurm's client commands from recordings: (exit code, stdout, stderr) by the command's start."""

    answers: dict[str, tuple[int, str, str]] = field(default_factory=dict)

    def run(self, argv: Sequence[str], *, check: bool = True,
            timeout_s: float | None = None) -> subprocess.CompletedProcess[bytes]:
        line = " ".join(map(str, argv))
        self.ran.append(line)
        if line.startswith("scontrol show hostnames "):
            code, out, err = 0, HOSTNAMES[line.rsplit(" ", 1)[1]], ""
        else:
            code, out, err = next((v for k, v in self.answers.items() if line.startswith(k)),
                                  (1, "", f"not recorded: {line}"))
        if check and code:
            raise CollectError(f"`{line}` exited with {code}: {err}")
        return subprocess.CompletedProcess(list(argv), code, out.encode(), err.encode())


def _job(out: Path, ntasks: int, per_node: int) -> str:
    text = (RECORDED / "show-job-failed.txt").read_text()
    return text.replace("@OUT@", str(out)).replace("@NTASKS@", str(ntasks)).replace("@PERNODE@", str(per_node))


def _srun_output(path: Path, ntasks: int, tail: str = "") -> None:
    lines = [f"{t:>2}: [rank{t}]: iteration 1200/ 500000 | lm loss: 3.2" for t in range(ntasks)]
    path.write_text("starting on gpu-01\n" + "\n".join(lines) + "\n" + tail)


def test_the_training_steps_sacct_record_places_the_tasks(tmp_path: Path) -> None:
    out = tmp_path / "slurm-4242.out"
    _srun_output(out, 16)
    runner = RecordedSlurm(answers={
        "scontrol show job -o 4242": (0, _job(out, 16, 8), ""),
        "sacct -j 4242 -n -P --format=JobID,NodeList,NTasks,Layout": (0, (RECORDED / "sacct-steps.txt").read_text(),
                                                                      "")})
    result = SlurmCollector(runner=runner).collect("4242", tmp_path / "bundle")
    job = yaml.safe_load((tmp_path / "bundle" / "job.yaml").read_text())
    assert job["nodes"] == [{"host": "gpu-01", "ranks": list(range(8))}, {"host": "gpu-02", "ranks": list(range(8, 16))}]
    assert (tmp_path / "bundle" / "logs" / "gpu-02" / "rank-15.log").read_text().startswith("[rank15]: iteration")
    assert any("from step 4242.0 as sacct recorded it: 16 task(s) on 2 node(s), distribution Block, 8 a node" in n
               for n in result.notes)
    assert not any("ASSUMED" in n for n in result.notes)


def test_without_a_step_record_the_layout_is_assumed_said_so_and_srun_errors_correct_it(tmp_path: Path) -> None:
    out = tmp_path / "slurm-4242.out"
    _srun_output(out, 6, "srun: error: gpu-02: tasks 2-5: Exited with exit code 1\n")
    runner = RecordedSlurm(answers={
        "scontrol show job -o 4242": (0, _job(out, 6, 0), ""),
        "sacct -j 4242": (1, "", (RECORDED / "sacct-disabled.txt").read_text())})
    result = SlurmCollector(runner=runner).collect("4242", tmp_path / "bundle")
    assert any("task -> node ASSUMED: srun's default block distribution of 6 task(s) over 2 node(s), as evenly as "
               "the count allows (no step record: sacct said 'Slurm accounting storage is disabled')" in n
               for n in result.notes)
    assert any("srun's error lines put task(s) 2 on another node" in n for n in result.notes)
    job = yaml.safe_load((tmp_path / "bundle" / "job.yaml").read_text())
    assert job["nodes"] == [{"host": "gpu-01", "ranks": [0, 1]}, {"host": "gpu-02", "ranks": [2, 3, 4, 5]}]
    logs = tmp_path / "bundle" / "logs"
    assert sorted(p.name for p in (logs / "gpu-02").iterdir()) == [f"rank-{t}.log" for t in range(2, 6)]
    assert (logs / "gpu-02" / "rank-2.log").read_text().startswith("[rank2]:")


def test_recorded_step_records_parse() -> None:
    steps = parse_scontrol_steps(parse_scontrol((RECORDED / "show-step-running.txt").read_text(), "StepId"))
    assert [(s.step_id, s.nodelist, s.ntasks, s.dist) for s in steps] == [
        ("4243.batch", "gpu-03", 1, ""), ("4243.0", "gpu-[03-05]", 7, "Cyclic")]
    step = main_step(steps)
    assert step is not None and step.step_id == "4243.0"
    assert distribute(["gpu-03", "gpu-04", "gpu-05"], step.ntasks, step.dist) == {
        0: "gpu-03", 1: "gpu-04", 2: "gpu-05", 3: "gpu-03", 4: "gpu-04", 5: "gpu-05", 6: "gpu-03"}
    sacct = parse_sacct_steps((RECORDED / "sacct-steps.txt").read_text())
    assert main_step(sacct) == sacct[2] and sacct[2].dist == "Block"


def test_distributions_as_srun_documents_them() -> None:
    # srun(1): four tasks on three nodes, block: tasks one and two on the first node, three and four one each
    assert distribute(["a", "b", "c"], 4, "Block") == {0: "a", 1: "a", 2: "b", 3: "c"}
    assert distribute(["a", "b", "c"], 4, "Cyclic") == {0: "a", 1: "b", 2: "c", 3: "a"}
    assert distribute(["a", "b"], 4, "BCyclic") == {0: "a", 1: "a", 2: "b", 3: "b"}
    assert distribute(["a", "b"], 5, "Block", tasks_per_node("4,1")) == {0: "a", 1: "a", 2: "a", 3: "a", 4: "b"}
    assert distribute(["a", "b"], 4, "Arbitrary") is None and distribute(["a", "b"], 4, "Plane") is None
    assert tasks_per_node("2(x3),1") == [2, 2, 2, 1] and tasks_per_node("2(x3") == []


def test_srun_error_lines_name_the_tasks_node() -> None:
    assert srun_error_tasks(b"srun: error: gpu-02: tasks 8-10,14: Exited with exit code 1\n") == (
        "gpu-02", [8, 9, 10, 14])
    assert srun_error_tasks(b"srun: error: gpu-02: task 3: Killed\n") == ("gpu-02", [3])
    assert srun_error_tasks(b"srun: error: Timed out waiting for job step to complete\n") is None
