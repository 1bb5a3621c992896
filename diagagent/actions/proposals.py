"""From a Diagnosis to ActionProposals, following docs/conventions.md's table of faults, categories and actions.

Each proposal cites the diagnosis evidence ids it rests on and carries the policy warnings that apply to it.
"""

from __future__ import annotations

from collections.abc import Sequence

from diagagent.actions.policy import check
from diagagent.contract import ActionProposal, Diagnosis
from diagagent.telemetry.job import Checkpoint, Job
from diagagent.telemetry.truth import Category

# docs/conventions.md, "Categories and actions"
FAULT_CATEGORY: dict[str, Category] = {
    "gpu_ecc_uncorrectable": "hardware", "gpu_fell_off_bus": "hardware", "nvlink_error": "hardware",
    "gpu_hang": "hardware", "gpu_straggler": "hardware", "node_crash": "hardware",
    "ib_link_flap": "network", "nic_down": "network", "slow_link": "network",
    "host_oom_killed": "infrastructure", "storage_checkpoint_write_failure": "infrastructure",
    "nccl_internal_error": "framework", "pytorch_internal_assert": "framework",
    "cuda_oom": "user_code", "user_shape_mismatch_at_init": "user_code", "user_import_error": "user_code",
    "nan_loss_divergence": "data", "dataloader_corrupt_sample": "data",
}
EVICT_CATEGORIES: frozenset[str] = frozenset({"hardware", "network"})
RESTART_CATEGORIES: frozenset[str] = frozenset({"hardware", "network", "infrastructure", "framework"})
# faults whose eviction set may be the over-eviction set (ByteRobust: the parallel group shared by the outliers)
OVER_EVICTION_FAULTS: frozenset[str] = frozenset({"gpu_hang", "gpu_straggler"})
INSTEAD: dict[str, str] = {  # what is done instead of a cluster action (docs/conventions.md)
    "cuda_oom": "the user changes the config (micro-batch size, activation recompute)",
    "dataloader_corrupt_sample": "the user fixes or skips the corrupt sample",
    "process_killed_unknown": "first find what killed it: the OOM killer in the node's dmesg, or the scheduler's log "
                              "(a preemption, a time or memory limit)",
    "framework_bug": "upgrade or pin the framework to a release with the fix, or apply the maintainers' workaround",
    "cuda_illegal_memory_access": "find the kernel: rerun with CUDA_LAUNCH_BLOCKING=1 under compute-sanitizer, then "
                                  "report it to the framework that owns it (or roll back the job's own kernel "
                                  "change); evict only if one GPU repeats it",
    "checkpoint_load_failure": "the user points the run at a checkpoint that exists and fits the model",
    "input_pipeline_bound": "raise the DataLoader's num_workers, free the host's CPUs, or move the data to faster "
                            "storage; check the host's CPU load and GPU utilisation while it runs",
    "extension_build_lock": "remove the stale lock file from the extension's build directory (under "
                            "~/.cache/torch_extensions), then restart",
    "nccl_socket_fallback": "expose the RDMA devices to the job (or fix NCCL_IB_HCA), then resubmit",
}
# user-code faults whose fix is never the code's rollback (docs/conventions.md: none): a checkpoint the run cannot load
# is pointed at or converted, whichever commit reads it (blind incident accelerate-2machine-resume-missing-keys)
NO_ROLLBACK: frozenset[str] = frozenset({"checkpoint_load_failure"})
# restarted from a checkpoint taken before the first abnormal iteration (the first NaN, the first overflow)
RESTART_BEFORE: dict[str, str] = {"nan_loss_divergence": "the first NaN iteration",
                                  "loss_scale_collapse": "the first abnormal iteration"}
# faults whose restart must skip the checkpoint the job failed to load, and any newer one: the checkpoint-corrupt
# schema's "mark this checkpoint invalid and restart from the newest valid earlier one" (incident
# megatron-rankprefix-truncated-shard-4node: iter_0007000's shards truncated by a node lost in its save)
UNREADABLE_CHECKPOINT: frozenset[str] = frozenset({"checkpoint_corrupt"})
# the faults docs/conventions.md's tables give actions for; any other fault gets the actions its schema recommends
CONVENTION_FAULTS: frozenset[str] = frozenset(FAULT_CATEGORY) | frozenset(INSTEAD) | frozenset(RESTART_BEFORE) | {
    "user_code_exception", "user_config_error"}
MAX_CITED = 5


def propose(diagnosis: Diagnosis, job: Job, *, eviction_hosts: list[str] | None = None,
            new_code_suspected: bool = False, schema_actions: Sequence[tuple[str, str]] = (),
            resumed_from: int | None = None) -> list[ActionProposal]:
    """The actions docs/conventions.md prescribes for the diagnosis' fault (else its category), checked by policy;
    for a fault its tables do not list, the ones its schema recommends (`schema_actions`: (kind, detail) pairs).

    `eviction_hosts` (the over-eviction set) replaces the faulty nodes' eviction for hangs and stragglers;
    `new_code_suspected` (the newest commit landed after the last successful run) turns a user-code
    failure into a rollback to the commit before the newest; `resumed_from` (the step of the checkpoint the job
    loaded, as its logs say) is never restarted from when that checkpoint is what failed.
    """
    fault = diagnosis.fault
    category = FAULT_CATEGORY.get(fault or "", diagnosis.category)
    if category is None:
        return []
    kinds = {kind for kind, _ in schema_actions} if fault and fault not in CONVENTION_FAULTS else set()
    users_fix = fault in INSTEAD  # nothing to evict or restart: the fix is done instead of a cluster action
    proposals: list[ActionProposal] = []
    notes: list[str] = []
    if not users_fix and ("evict" in kinds if kinds else category in EVICT_CATEGORIES):
        evict = _evict(diagnosis, job, eviction_hosts)
        if evict is not None:
            proposals.append(evict)
        else:
            notes.append("no faulty node is known: restarting on the same nodes may fail the same way")
    restarts = "restart" in kinds if kinds else category in RESTART_CATEGORIES or fault in RESTART_BEFORE
    if restarts and not users_fix:
        restart, restart_notes = _restart(diagnosis, job, resumed_from)
        proposals += [restart] if restart is not None else []
        notes += restart_notes
    elif ("rollback" in kinds if kinds else category == "user_code" and fault not in NO_ROLLBACK) and new_code_suspected:
        rollback = _rollback(diagnosis, job)
        if rollback is not None:
            proposals.append(rollback)
        else:
            notes.append(f"job {job.job_id}'s code history has no commit before the newest to roll back to")
    if not proposals:
        instead = next((detail for kind, detail in schema_actions if kind == "none" and detail), "") if kinds else ""
        proposals.append(ActionProposal(kind="none", reason=_no_action_reason(fault, category, instead),
                                        evidence=_cause_evidence(diagnosis)))
    for proposal in proposals:
        verdict = check(proposal, job)
        extra = notes + verdict.warnings + [f"blocked by policy: {v}" for v in verdict.violations]
        proposal.warnings = list(dict.fromkeys(proposal.warnings + extra))
    return proposals


def _evict(diagnosis: Diagnosis, job: Job, eviction_hosts: list[str] | None) -> ActionProposal | None:
    faulty = diagnosis.faulty_hosts
    over_evict = bool(eviction_hosts) and (
        diagnosis.fault in OVER_EVICTION_FAULTS
        or (diagnosis.fault is None and (diagnosis.status or job.status) in ("hung", "slow")))
    hosts = list(dict.fromkeys(faulty + (eviction_hosts or []))) if over_evict else list(dict.fromkeys(faulty))
    if not hosts:
        return None
    what = diagnosis.fault or diagnosis.category
    if over_evict and len(hosts) > len(faulty):
        reason = (f"{what}: evict the parallel group the outlier ranks share ({len(hosts)} nodes), so the "
                  "restart does not land on the hang's unseen cause")
    else:
        reason = f"{what} on {', '.join(hosts)}: evict so the job restarts on healthy nodes"
    return ActionProposal(kind="evict", nodes=hosts, reason=reason, evidence=_node_evidence(diagnosis, hosts))


def _restart(diagnosis: Diagnosis, job: Job, resumed_from: int | None) -> tuple[ActionProposal | None, list[str]]:
    valid = [c for c in job.checkpoints if c.valid]
    notes: list[str] = []
    before = ""
    first = RESTART_BEFORE.get(diagnosis.fault or "")
    if diagnosis.fault in UNREADABLE_CHECKPOINT:
        if resumed_from is None:
            notes.append("the logs do not say which checkpoint failed to load: check it is not the one restarted from")
        else:
            valid = [c for c in valid if c.step < resumed_from]
            before = f" before step {resumed_from}, the checkpoint that failed to load"
    elif first is not None:
        if diagnosis.iteration is None:
            notes.append(f"{first} is unknown: check that the checkpoint predates it")
        else:
            # a checkpoint at step S holds the state after iteration S; the first abnormal iteration must not be in it
            valid = [c for c in valid if c.step < diagnosis.iteration]
            before = f" before {first} ({diagnosis.iteration})"
    if not valid:
        notes.append(f"no valid checkpoint{before} in job {job.job_id}: a restart would start from scratch, "
                     "so none is proposed")
        return None, notes
    newest: Checkpoint = max(valid, key=lambda c: c.step)
    reason = f"restart from step {newest.step}, the newest valid checkpoint{before}"
    return ActionProposal(kind="restart", from_step=newest.step, checkpoint_path=newest.path, reason=reason,
                          evidence=_cause_evidence(diagnosis)), notes


def _rollback(diagnosis: Diagnosis, job: Job) -> ActionProposal | None:
    if len(job.code) < 2:
        return None
    newest, previous = job.code[-1], job.code[-2]
    reason = (f"{diagnosis.fault or 'user code failure'} after commit {newest.commit} landed: roll back to "
              f"{previous.commit}, the commit before it")
    return ActionProposal(kind="rollback", to_commit=previous.commit, reason=reason,
                          evidence=_cause_evidence(diagnosis))


def _no_action_reason(fault: str | None, category: str, instead: str = "") -> str:
    instead = INSTEAD.get(fault or "", instead)
    if instead:
        return f"{fault}: nothing to run on the cluster; {instead}"
    return f"{fault or category}: nothing to run on the cluster; the fix is the user's"


def _cause_evidence(diagnosis: Diagnosis) -> list[str]:
    causes = [e.id for e in diagnosis.evidence if e.role == "cause"]
    return (causes or [e.id for e in diagnosis.evidence])[:MAX_CITED]


def _node_evidence(diagnosis: Diagnosis, hosts: list[str]) -> list[str]:
    known = {e.id for e in diagnosis.evidence}
    cited = [i for n in diagnosis.faulty_nodes if n.host in hosts for i in n.evidence if i in known]
    cited += [e.id for e in diagnosis.evidence if e.host in hosts and e.role == "cause"]
    return list(dict.fromkeys(cited))[:MAX_CITED] or _cause_evidence(diagnosis)


__all__ = ["FAULT_CATEGORY", "propose"]
