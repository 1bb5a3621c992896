"""Collectors: build a bundle (BUNDLE.md) from where the telemetry lives: a Slurm job id or a Kubernetes job.

Each runs the cluster's own client (`scontrol`/`sacct`/`srun`, `kubectl`) with the user's configuration; nothing stored.
"""

from diagagent.telemetry.collect.runner import CollectError, Runner
from diagagent.telemetry.collect.slurm import CollectResult, SlurmCollector

__all__ = ["CollectError", "CollectResult", "Runner", "SlurmCollector"]
