"""`diagagent collect slurm JOBID` / `collect k8s NAMESPACE/NAME`: build a bundle from where the job ran.

Thin: the collectors (telemetry.collect) do the work; this prints what was written and what could not be had.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from diagagent.apps.common import console, fail, print_json, settings


def _report(result, json_out: bool) -> None:
    if json_out:
        print_json(result)
        return
    out = console()
    out.print(Text.assemble(("collected ", "bold"), f"{result.source} job {result.job_id} ({result.status}) into ",
                            (result.path, "cyan"), f": {result.files} file(s) from {len(result.hosts)} node(s)"),
              soft_wrap=True)
    for note in result.notes:
        out.print(Text(f"- {note}"), soft_wrap=True)
    out.print(Text.assemble("next: ", (f"diagagent diagnose {result.path}", "bold")))


def register(app: typer.Typer) -> None:
    collect = typer.Typer(help="Build a bundle from a Slurm job id or a Kubernetes job, with the cluster's own "
                               "client (scontrol/sacct/srun, kubectl).", no_args_is_help=True)
    app.add_typer(collect, name="collect")

    @collect.command("slurm")
    def slurm(
        job_id: str = typer.Argument(..., help="The Slurm job id (42, 42_3 for an array task, 42+1 for a het part)."),
        out: Path | None = typer.Option(None, "-o", "--output", help="Bundle folder to write (default ./job-ID)."),
        probes: bool = typer.Option(False, "--probes", help="Run tools/probes.yaml on each node (srun --overlap "
                                                            "into the allocation while it runs, else ssh)."),
        probe: list[str] = typer.Option([], "--probe", help="Only this probe (repeatable); implies --probes."),
        transport: str | None = typer.Option(None, "--transport", help="Probe transport from tools/probes.yaml "
                                                                       "(default: srun while running, else ssh)."),
        quiet_for: float | None = typer.Option(None, "--quiet-for", help="Seconds without output after which a "
                                               "running job is collected as hung (DIAGAGENT_COLLECT_QUIET_FOR_S)."),
        stacks: bool = typer.Option(False, "--stacks", help="A running job: py-spy dump of each rank (srun --overlap "
                                                            "into the allocation; py-spy must be on the nodes)."),
        py_spy: str = typer.Option("py-spy", "--py-spy", help="py-spy as the job's nodes find it (on their PATH, or "
                                                              "a path there)."),
        json_out: bool = typer.Option(False, "--json", help="Print what was collected as JSON."),
    ) -> None:
        """Collect a Slurm job: scontrol/sacct record, output files split per task, node probes, py-spy stacks."""
        from diagagent.telemetry.collect import CollectError, SlurmCollector
        from diagagent.telemetry.live_probes import ProbeError, ProbeManifest

        cfg = settings()
        manifest = None
        if probes or probe:
            try:
                manifest = ProbeManifest.load(cfg.content_dir("tools") / "probes.yaml")
            except ProbeError as exc:
                fail(str(exc))
        try:
            result = SlurmCollector(quiet_for_s=quiet_for or cfg.collect_quiet_for_s, py_spy=py_spy).collect(
                job_id, out or Path(f"job-{job_id}"), probes=bool(probes or probe), probe_names=probe or None,
                manifest=manifest, transport=transport, stacks=stacks)
        except CollectError as exc:
            fail(str(exc))
        _report(result, json_out)

    @collect.command("k8s")
    def k8s(
        ref: str = typer.Argument(..., help="NAMESPACE/NAME (or KIND/NAMESPACE/NAME, KIND one of pytorchjob, "
                                            "jobset, job; a bare NAME uses DIAGAGENT_K8S_NAMESPACE)."),
        out: Path | None = typer.Option(None, "-o", "--output", help="Bundle folder to write (default ./NAME)."),
        context: str | None = typer.Option(None, "--context", help="kubeconfig context (default: the current one)."),
        json_out: bool = typer.Option(False, "--json", help="Print what was collected as JSON."),
    ) -> None:
        """Collect a PyTorchJob, JobSet or Job: pods, every container's logs, events, node conditions."""
        from diagagent.telemetry.collect import CollectError
        from diagagent.telemetry.collect.k8s import K8sCollector, parse_ref

        cfg = settings()
        try:
            _, _, name = parse_ref(ref, cfg.k8s_namespace)
            result = K8sCollector(context=context or cfg.k8s_context).collect(ref, out or Path(name),
                                                                              cfg.k8s_namespace)
        except CollectError as exc:
            fail(str(exc))
        _report(result, json_out)


__all__ = ["register"]
