"""Proposals per fault against docs/conventions.md's table, and every policy guardrail, on hand-built objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diagagent.actions import check, propose
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence, NodeScore
from diagagent.schemata.model import read_schemata_dir
from diagagent.telemetry.job import Job


def make_job(nodes: int = 8, spares: int | None = 2, checkpoints: list[tuple[int, bool]] | None = None,
             commits: list[str] | None = None, **extra: Any) -> Job:
    """A job of `nodes` hosts node-001.. with 2 GPUs each, tp=2, dp=nodes."""
    checkpoints = [(1000, True), (2000, True), (3000, False)] if checkpoints is None else checkpoints
    commits = ["1111aaa", "2222bbb"] if commits is None else commits
    return Job.model_validate({
        "job_id": "42", "status": "failed", "gpus_per_node": 2, "spares": spares,
        "parallelism": {"tp": 2, "pp": 1, "dp": nodes},
        "nodes": [{"host": f"node-{i:03d}", "ranks": [2 * (i - 1), 2 * (i - 1) + 1]} for i in range(1, nodes + 1)],
        "code": [{"commit": c, "message": f"change {c}"} for c in commits],
        "checkpoints": [{"step": s, "path": f"/ckpt/42/iter_{s:07d}", "valid": v} for s, v in checkpoints],
        **extra})


def make_diagnosis(fault: str | None, category: str | None = None, faulty: tuple[str, ...] = ("node-003",),
                   iteration: int | None = 2500, text: str = "CUDA error: uncorrectable ECC error encountered",
                   **extra: Any) -> Diagnosis:
    return Diagnosis.model_validate({
        "job_id": "42", "fault": fault, "category": category, "iteration": iteration, "confidence": 0.9,
        "faulty_nodes": [NodeScore(host=h, score=0.9, evidence=["e1"]) for h in faulty],
        "evidence": [
            Evidence(id="e1", kind="log", role="cause", host=faulty[0] if faulty else None, text=text),
            Evidence(id="e2", kind="probe", role="cause", host=faulty[0] if faulty else None, text="Xid 48"),
            Evidence(id="e3", kind="log", role="symptom", host="node-001", text="Watchdog caught collective timeout"),
        ], **extra})


# docs/conventions.md, "Categories and actions", written out by hand so that a drift in the code shows
EVICT_AND_RESTART = ["gpu_ecc_uncorrectable", "gpu_fell_off_bus", "nvlink_error", "gpu_hang", "gpu_straggler",
                     "node_crash", "ib_link_flap", "nic_down", "slow_link"]
RESTART_ONLY = ["host_oom_killed", "storage_checkpoint_write_failure", "nccl_internal_error", "pytorch_internal_assert"]
NO_ACTION = ["cuda_oom", "user_shape_mismatch_at_init", "user_import_error", "dataloader_corrupt_sample"]


def kinds(proposals: list[ActionProposal]) -> list[str]:
    return [p.kind for p in proposals]


@pytest.mark.parametrize("fault", EVICT_AND_RESTART)
def test_hardware_and_network_faults_evict_the_faulty_node_and_restart_from_newest_valid(fault: str) -> None:
    proposals = propose(make_diagnosis(fault), make_job())
    assert kinds(proposals) == ["evict", "restart"]
    assert proposals[0].nodes == ["node-003"]
    assert proposals[1].from_step == 2000 and proposals[1].checkpoint_path == "/ckpt/42/iter_0002000"


@pytest.mark.parametrize("fault", RESTART_ONLY)
def test_infrastructure_and_framework_faults_only_restart(fault: str) -> None:
    proposals = propose(make_diagnosis(fault), make_job())
    assert kinds(proposals) == ["restart"]
    assert proposals[0].from_step == 2000  # step 3000 is newer but marked invalid


@pytest.mark.parametrize("fault", NO_ACTION)
def test_user_code_and_data_faults_propose_nothing_to_run(fault: str) -> None:
    proposals = propose(make_diagnosis(fault), make_job())
    assert kinds(proposals) == ["none"]
    assert proposals[0].reason.startswith(f"{fault}: nothing to run")


@pytest.mark.parametrize("fault", ["user_shape_mismatch_at_init", "user_import_error"])
def test_new_code_suspected_rolls_back_to_the_commit_before_the_newest(fault: str) -> None:
    proposals = propose(make_diagnosis(fault, faulty=()), make_job(commits=["0aaa111", "1bbb222", "2ccc333"]),
                        new_code_suspected=True)
    assert kinds(proposals) == ["rollback"]
    assert proposals[0].to_commit == "1bbb222"
    assert check(proposals[0], make_job(commits=["0aaa111", "1bbb222", "2ccc333"])).ok


def test_cuda_oom_is_rolled_back_only_when_new_code_is_suspected() -> None:
    job = make_job(commits=["0aaa111", "1bbb222"])
    assert kinds(propose(make_diagnosis("cuda_oom"), job)) == ["none"]
    rollback = propose(make_diagnosis("cuda_oom"), job, new_code_suspected=True)
    assert kinds(rollback) == ["rollback"] and rollback[0].to_commit == "0aaa111"


def test_a_checkpoint_that_cannot_be_loaded_is_not_rolled_back_even_after_new_code() -> None:
    """docs/conventions.md: none; the run is pointed at (or the checkpoint converted to) a layout it can load."""
    job = make_job(commits=["0aaa111", "1bbb222"])
    assert kinds(propose(make_diagnosis("checkpoint_load_failure", "user_code"), job, new_code_suspected=True)) == ["none"]


def test_rollback_without_an_earlier_commit_says_so() -> None:
    proposals = propose(make_diagnosis("user_import_error"), make_job(commits=["1111aaa"]), new_code_suspected=True)
    assert kinds(proposals) == ["none"]
    assert any("no commit before the newest" in w for w in proposals[0].warnings)


def test_nan_restarts_from_newest_valid_checkpoint_before_the_first_nan_iteration() -> None:
    job = make_job(checkpoints=[(1000, True), (2000, True), (3000, True)])
    assert propose(make_diagnosis("nan_loss_divergence", iteration=2500), job)[0].from_step == 2000
    # a checkpoint at the first NaN iteration already holds its update
    assert propose(make_diagnosis("nan_loss_divergence", iteration=2000), job)[0].from_step == 1000
    unknown = propose(make_diagnosis("nan_loss_divergence", iteration=None), job)
    assert unknown[0].from_step == 3000 and any("first NaN iteration is unknown" in w for w in unknown[0].warnings)


def test_nan_before_every_valid_checkpoint_proposes_no_restart() -> None:
    proposals = propose(make_diagnosis("nan_loss_divergence", iteration=900), make_job())
    assert kinds(proposals) == ["none"]
    assert any("no valid checkpoint before the first NaN iteration (900)" in w for w in proposals[0].warnings)


def test_no_valid_checkpoint_means_no_restart_and_a_warning_on_the_eviction() -> None:
    proposals = propose(make_diagnosis("gpu_fell_off_bus"), make_job(checkpoints=[(1000, False)]))
    assert kinds(proposals) == ["evict"]
    assert any("no valid checkpoint" in w for w in proposals[0].warnings)


def test_hang_evicts_the_over_eviction_set_including_the_faulty_node() -> None:
    group = ["node-003", "node-004", "node-005"]
    evict = propose(make_diagnosis("gpu_hang"), make_job(), eviction_hosts=["node-004", "node-005", "node-003"])[0]
    assert evict.kind == "evict" and evict.nodes == group
    assert "parallel group" in evict.reason
    # for a fault that is not a hang or straggler, the over-eviction set is not used
    ecc = propose(make_diagnosis("gpu_ecc_uncorrectable"), make_job(), eviction_hosts=group)[0]
    assert ecc.nodes == ["node-003"]


def test_unknown_fault_of_a_hung_job_uses_the_over_eviction_set() -> None:
    diagnosis = make_diagnosis(None, category="hardware", faulty=(), status="hung")
    evict = propose(diagnosis, make_job(), eviction_hosts=["node-006", "node-007"])[0]
    assert evict.nodes == ["node-006", "node-007"]


def test_proposals_cite_existing_evidence_and_evictions_cite_the_nodes_own() -> None:
    diagnosis = make_diagnosis("nic_down")
    proposals = propose(diagnosis, make_job())
    ids = {e.id for e in diagnosis.evidence}
    assert all(p.evidence and set(p.evidence) <= ids for p in proposals)
    assert proposals[0].evidence == ["e1", "e2"]  # not e3, the cascade on node-001


def test_eviction_over_the_spares_is_said_plainly() -> None:
    faulty = tuple(f"node-{i:03d}" for i in range(1, 10))
    proposals = propose(make_diagnosis("gpu_hang", faulty=faulty), make_job(nodes=16, spares=4))
    assert "evicts 9 nodes, only 4 spares: the job restarts smaller or waits" in proposals[0].warnings


def test_unknown_faulty_node_restarts_with_a_warning() -> None:
    proposals = propose(make_diagnosis("nvlink_error", faulty=()), make_job())
    assert kinds(proposals) == ["restart"]
    assert any("no faulty node is known" in w for w in proposals[0].warnings)


def test_no_fault_and_no_category_proposes_nothing() -> None:
    assert propose(make_diagnosis(None, faulty=()), make_job()) == []


def test_a_faulty_host_outside_the_job_is_flagged_as_blocked() -> None:
    evict = propose(make_diagnosis("gpu_ecc_uncorrectable", faulty=("gpu-box-9",)), make_job())[0]
    assert any(w.startswith("blocked by policy: evicts 'gpu-box-9'") for w in evict.warnings)


# --- guardrails -----------------------------------------------------------------------------------


def test_guardrail_eviction_over_spares_warns_but_does_not_block() -> None:
    result = check(ActionProposal(kind="evict", nodes=["node-001", "node-002", "node-003"]), make_job(spares=1))
    assert result.ok
    assert result.warnings == ["evicts 3 nodes, only 1 spare: the job restarts smaller or waits"]


def test_guardrail_eviction_with_spares_unknown_says_so() -> None:
    result = check(ActionProposal(kind="evict", nodes=["node-001"]), make_job(spares=None))
    assert result.ok
    assert result.warnings == [("evicts 1 node; job.yaml does not say how many spare nodes there are: the job may "
                                "restart smaller or wait")]


def test_guardrail_eviction_within_spares_is_silent() -> None:
    result = check(ActionProposal(kind="evict", nodes=["node-001"]), make_job(spares=1))
    assert result.ok and result.warnings == []


def test_guardrail_evicting_every_node_warns() -> None:
    result = check(ActionProposal(kind="evict", nodes=[f"node-{i:03d}" for i in range(1, 3)]), make_job(nodes=2))
    assert "evicts every node of job 42" in result.warnings


@pytest.mark.parametrize("nodes,expected", [
    (["node-001", "node-1; rm -rf /"], "evicts 'node-1; rm -rf /': not a node of job 42"),
    ([], "the eviction names no nodes"),
])
def test_guardrail_eviction_of_hosts_outside_the_job_is_blocked(nodes: list[str], expected: str) -> None:
    result = check(ActionProposal(kind="evict", nodes=nodes), make_job())
    assert not result.ok and result.violations == [expected]


@pytest.mark.parametrize("step,path,expected", [
    (3000, None, "restarts from step 3000: that checkpoint is marked invalid"),
    (4000, None, "restarts from step 4000: job 42 has no checkpoint at that step"),
    (None, None, "the restart names no checkpoint step"),
    (1000, "/ckpt/other/iter_0001000", ("restarts from '/ckpt/other/iter_0001000': the checkpoint at step 1000 is "
                                        "'/ckpt/42/iter_0001000'")),
])
def test_guardrail_restart_from_invalid_or_unknown_checkpoint_is_blocked(step: int | None, path: str | None,
                                                                         expected: str) -> None:
    result = check(ActionProposal(kind="restart", from_step=step, checkpoint_path=path), make_job())
    assert not result.ok and expected in result.violations


def test_guardrail_restart_behind_newer_checkpoints_warns() -> None:
    result = check(ActionProposal(kind="restart", from_step=1000), make_job())
    assert result.ok
    assert result.warnings == ["newer checkpoints exist (step 3000): make sure the job loads step 1000, not the latest"]


@pytest.mark.parametrize("commit,expected", [
    ("deadbee", "rolls back to 'deadbee': not a commit in job 42's code history"),
    ("2222bbb", "rolls back to '2222bbb': that is the commit that ran"),
    (None, "the rollback names no commit"),
])
def test_guardrail_rollback_to_unknown_commit_is_blocked(commit: str | None, expected: str) -> None:
    result = check(ActionProposal(kind="rollback", to_commit=commit), make_job())
    assert result.violations == [expected]


def test_guardrail_rollback_to_a_known_earlier_commit_passes() -> None:
    assert check(ActionProposal(kind="rollback", to_commit="1111AAA"), make_job()).ok


@pytest.mark.parametrize(("fault", "category"), [("process_killed_unknown", "infrastructure"),
                                                 ("framework_bug", "framework"),
                                                 ("extension_build_lock", "infrastructure")])
def test_faults_whose_table_row_says_none_propose_what_to_do_instead_not_a_restart(fault: str, category: str) -> None:
    # docs/conventions.md: a kill of unknown cause is checked first, a framework bug is upgraded around, a stale
    # build lock is removed: restarting as is would fail the same way
    proposals = propose(make_diagnosis(fault, category), make_job())
    assert kinds(proposals) == ["none"]


def test_the_second_table_of_conventions_decides_its_faults_and_a_schema_the_rest() -> None:
    job = make_job(checkpoints=[(1000, True), (2000, True), (3000, True)])
    # loss_scale_collapse: a restart from before the first overflow, as for the first NaN
    collapse = propose(make_diagnosis("loss_scale_collapse", "data", faulty=(), iteration=2500), job)
    assert kinds(collapse) == ["restart"] and collapse[0].from_step == 2000
    # nccl_socket_fallback is network, but the table says nothing runs on the cluster (whatever its schema says)
    fallback = propose(make_diagnosis("nccl_socket_fallback", "network"), job, schema_actions=[("evict", "")])
    assert kinds(fallback) == ["none"] and "expose the RDMA devices" in fallback[0].reason
    # a fault the tables do not list follows its schema: NCCL's /dev/shm too small is fixed in the container
    shm = propose(make_diagnosis("nccl_shm_exhausted", "infrastructure"), job,
                  schema_actions=[("none", "give the container a large /dev/shm and resubmit")])
    assert kinds(shm) == ["none"] and "a large /dev/shm" in shm[0].reason
    driver = propose(make_diagnosis("cuda_driver_mismatch", "infrastructure"), job,
                     schema_actions=[("evict", "drain the node"), ("restart", "")])
    assert kinds(driver) == ["evict", "restart"] and driver[0].nodes == ["node-003"]
    # with no schema, the category decides, as before
    assert kinds(propose(make_diagnosis("cuda_driver_mismatch", "infrastructure"), job)) == ["restart"]


def test_a_corrupt_checkpoint_is_never_the_one_restarted_from() -> None:
    # the checkpoint-corrupt schema: restart from the newest valid checkpoint older than the one that failed to load,
    # which the job's own logs name ("loading checkpoint from ... at iteration 3000")
    job = make_job(checkpoints=[(1000, True), (2000, True), (3000, True)])
    restart = ("restart", "")
    corrupt = propose(make_diagnosis("checkpoint_corrupt", "infrastructure", faulty=()), job,
                      schema_actions=[restart], resumed_from=3000)
    assert kinds(corrupt) == ["restart"] and corrupt[0].from_step == 2000
    assert "before step 3000, the checkpoint that failed to load" in corrupt[0].reason
    unknown = propose(make_diagnosis("checkpoint_corrupt", "infrastructure", faulty=()), job, schema_actions=[restart])
    assert unknown[0].from_step == 3000 and any("which checkpoint failed to load" in w for w in unknown[0].warnings)
    # the step a job resumed from does not matter to a fault that did not come from reading it
    crash = propose(make_diagnosis("host_oom_killed", "infrastructure", faulty=()), job, resumed_from=3000)
    assert crash[0].from_step == 3000


def test_a_setup_fault_on_named_nodes_drains_them_and_on_every_node_is_the_jobs_to_fix() -> None:
    # knowledge/schemata/network.yaml: NCCL picking an unroutable interface on one node of four is that node's setup
    # (blind incident fabric-nccl-ifname-docker0-4node: evict it, restart on the rest); on every node, the job's config
    seeds = read_schemata_dir(Path(__file__).resolve().parents[1] / "knowledge" / "schemata")
    bootstrap = next(s for s in seeds if s.fault == "nccl_bootstrap_failure")
    job = make_job(checkpoints=[(1000, True), (2000, True)])
    named = propose(make_diagnosis("nccl_bootstrap_failure", "network"), job,
                    schema_actions=[(a.kind, a.detail) for a in bootstrap.actions_for(True)])
    assert kinds(named) == ["evict", "restart"] and named[0].nodes == ["node-003"] and named[1].from_step == 2000
    everywhere = propose(make_diagnosis("nccl_bootstrap_failure", "network", faulty=()), job,
                         schema_actions=[(a.kind, a.detail) for a in bootstrap.actions_for(False)])
    assert kinds(everywhere) == ["none"] and "NCCL_SOCKET_IFNAME" in everywhere[0].reason
