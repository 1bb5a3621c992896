"""Collectors: build a bundle (BUNDLE.md) from where the telemetry lives: a Slurm job id or a Kubernetes job.

Each runs the cluster's own client (`scontrol`/`sacct`/`srun`, `kubectl`) with the user's configuration; nothing stored.
"""

from diagagent.telemetry.collect.k8s import K8sCollector
from diagagent.telemetry.collect.runner import CollectError, Runner
from diagagent.telemetry.collect.slurm import CollectResult, SlurmCollector
from diagagent.telemetry.collect.source import AmbiguousJob, K8sSource, SlurmSource, job_source

__all__ = ["AmbiguousJob", "CollectError", "CollectResult", "K8sCollector", "K8sSource", "Runner", "SlurmCollector",
           "SlurmSource", "job_source"]
