"""Collectors: build a bundle (BUNDLE.md) from where the telemetry lives: a Slurm job id or a Kubernetes job.

Each runs the cluster's own client (`scontrol`/`sacct`/`srun`, `kubectl`) with the user's configuration; nothing stored.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diagagent.telemetry.collect.k8s import K8sCollector
    from diagagent.telemetry.collect.runner import CollectError, Runner
    from diagagent.telemetry.collect.slurm import CollectResult, SlurmCollector
    from diagagent.telemetry.collect.source import AmbiguousJob, K8sSource, SlurmSource, job_source

# each name's module, imported on first use: opening a bundle from a folder (which catches CollectError) need not load
# the Slurm and Kubernetes collectors
_MODULES = {"K8sCollector": "k8s", "CollectError": "runner", "Runner": "runner", "CollectResult": "slurm",
            "SlurmCollector": "slurm", "AmbiguousJob": "source", "K8sSource": "source", "SlurmSource": "source",
            "job_source": "source"}

__all__ = ["AmbiguousJob", "CollectError", "CollectResult", "K8sCollector", "K8sSource", "Runner", "SlurmCollector",
           "SlurmSource", "job_source"]


def __getattr__(name: str) -> object:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_MODULES[name]}"), name)
