"""Fault stories: for each fault id, the function that decides how the fault plays out in one simulated job.

`tell(plan)` runs the story of `plan.fault` and returns its Incident.
"""

from __future__ import annotations

from collections.abc import Callable

from diagagent.sim.incident import Incident
from diagagent.sim.plan import Plan
from diagagent.sim.stories import gpu, network, software
from diagagent.sim.stories.common import Ctx, new_ctx

STORIES: dict[str, Callable[[Ctx], Incident]] = {
    "gpu_ecc_uncorrectable": gpu.gpu_ecc_uncorrectable,
    "gpu_fell_off_bus": gpu.gpu_fell_off_bus,
    "nvlink_error": gpu.nvlink_error,
    "gpu_straggler": gpu.gpu_straggler,
    "gpu_hang": gpu.gpu_hang,
    "node_crash": gpu.node_crash,
    "ib_link_flap": network.ib_link_flap,
    "nic_down": network.nic_down,
    "slow_link": network.slow_link,
    "host_oom_killed": software.host_oom_killed,
    "storage_checkpoint_write_failure": software.storage_checkpoint_write_failure,
    "nccl_internal_error": software.nccl_internal_error,
    "pytorch_internal_assert": software.pytorch_internal_assert,
    "cuda_oom": software.cuda_oom,
    "user_shape_mismatch_at_init": software.user_shape_mismatch_at_init,
    "user_import_error": software.user_import_error,
    "nan_loss_divergence": software.nan_loss_divergence,
    "dataloader_corrupt_sample": software.dataloader_corrupt_sample,
}


def tell(plan: Plan) -> Incident:
    return STORIES[plan.fault.id](new_ctx(plan))
