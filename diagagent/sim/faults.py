"""The fault catalogue the simulator can inject: one `FaultSpec` per fault id (docs/conventions.md).

Each spec says what the fault is and how the job ends (crash, hang or slow); the scenarios module tells the story.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from diagagent.telemetry.truth import Category, Stage

Outcome = Literal["crash", "hang", "slow"]


class FaultSpec(BaseModel):
    """One injectable fault: its id, category (docs/conventions.md), what happens, and how the job ends."""

    id: str
    category: Category
    description: str
    outcome: Outcome = "crash"
    stage: Stage = "training"
    node_fault: bool = True  # one host holds the fault (truth faulty_nodes names it)


_SPECS = [
    FaultSpec(
        id="gpu_ecc_uncorrectable",
        category="hardware",
        description="Uncorrectable (double-bit) ECC error in one GPU's memory: Xid 48/94/95, CUDA error, crash.",
    ),
    FaultSpec(
        id="gpu_fell_off_bus",
        category="hardware",
        description="A GPU falls off the PCIe bus (Xid 79); its rank fails and nvidia-smi loses the GPU.",
    ),
    FaultSpec(
        id="nvlink_error",
        category="hardware",
        description="Fatal NVLink error (Xid 74) on one GPU; uncorrectable NVLink CUDA error, crash.",
    ),
    FaultSpec(
        id="gpu_straggler",
        category="hardware",
        outcome="slow",
        description="One GPU thermally throttles: the whole job slows, no error; flows and stacks show it.",
    ),
    FaultSpec(
        id="gpu_hang",
        category="hardware",
        outcome="hang",
        description="One GPU stops making progress silently; the job hangs; only stack dumps show where.",
    ),
    FaultSpec(
        id="node_crash",
        category="hardware",
        description="A node kernel-panics (machine check); its ranks' logs just end, peers time out.",
    ),
    FaultSpec(
        id="ib_link_flap",
        category="network",
        description="An InfiniBand port flaps (link down/up); NCCL IB completion errors, crash.",
    ),
    FaultSpec(
        id="nic_down",
        category="network",
        description="An InfiniBand NIC port goes down and stays down (Polling); NCCL errors, crash.",
    ),
    FaultSpec(
        id="slow_link",
        category="network",
        outcome="slow",
        description="A congested switch port slows one host's traffic; iterations slow, flows show it.",
    ),
    FaultSpec(
        id="host_oom_killed",
        category="infrastructure",
        description="Host memory runs out; the kernel OOM killer kills a rank (SIGKILL), peers time out.",
    ),
    FaultSpec(
        id="storage_checkpoint_write_failure",
        category="infrastructure",
        stage="checkpoint",
        node_fault=False,
        description="The checkpoint file system fills up mid-save; torch.save fails, the checkpoint is partial.",
    ),
    FaultSpec(
        id="nccl_internal_error",
        category="framework",
        node_fault=False,
        description="NCCL raises ncclInternalError on one rank; a software fault, restart fixes it.",
    ),
    FaultSpec(
        id="pytorch_internal_assert",
        category="framework",
        node_fault=False,
        description="A PyTorch INTERNAL ASSERT FAILED on one rank; a software fault, restart fixes it.",
    ),
    FaultSpec(
        id="cuda_oom",
        category="user_code",
        node_fault=False,
        description="CUDA out of memory on the first pipeline stage at the first iteration: config too big.",
    ),
    FaultSpec(
        id="user_shape_mismatch_at_init",
        category="user_code",
        stage="init",
        node_fault=False,
        description="A new commit changed the model: loading the checkpoint fails with size mismatches.",
    ),
    FaultSpec(
        id="user_import_error",
        category="user_code",
        stage="init",
        node_fault=False,
        description="A new commit imports a name that does not exist: every rank fails at startup.",
    ),
    FaultSpec(
        id="nan_loss_divergence",
        category="data",
        node_fault=False,
        description="The loss spikes and turns NaN; skipped iterations, then the NaN check stops training.",
    ),
    FaultSpec(
        id="dataloader_corrupt_sample",
        category="data",
        node_fault=False,
        description="A corrupt sample makes a DataLoader worker raise; that rank fails, peers time out.",
    ),
]

FAULTS: dict[str, FaultSpec] = {spec.id: spec for spec in _SPECS}


def fault_spec(fault: str) -> FaultSpec:
    """The spec of `fault`; an unknown id raises ValueError listing the valid ones."""
    try:
        return FAULTS[fault]
    except KeyError:
        raise ValueError(f"unknown fault {fault!r}; valid faults: {', '.join(FAULTS)}") from None
