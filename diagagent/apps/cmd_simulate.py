"""`diagagent simulate OUT --fault F --nodes N --seed S`: write a realistic incident bundle with its truth.json.

`diagagent simulate --list` prints the fault ids, one per line, and nothing else.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from diagagent.apps.common import console, fail


def _list_faults() -> None:
    from diagagent.sim import FAULTS

    sys.stdout.write("".join(f"{fault}\n" for fault in FAULTS))


def register(app: typer.Typer) -> None:
    @app.command()
    def simulate(
        out: Path | None = typer.Argument(
            None, help="Directory to write the bundle into: created, empty, or one simulate wrote (replaced)."
        ),
        fault: str | None = typer.Option(None, "--fault", "-f", help="Fault id (see --list)."),
        nodes: int = typer.Option(8, "--nodes", "-n", min=1, help="Number of nodes in the job."),
        seed: int = typer.Option(0, "--seed", "-s", help="Seed: the same arguments give the same bundle."),
        gpus_per_node: int = typer.Option(8, "--gpus-per-node", min=1, help="GPUs (ranks) per node."),
        minutes: float | None = typer.Option(
            None, "--minutes", min=0.1, help="Minutes of training before the fault (default: by job size)."
        ),
        job_id: str | None = typer.Option(None, "--job-id", help="The job id written into job.yaml."),
        compress: bool | None = typer.Option(
            None, "--compress/--no-compress", help="gzip the logs (default: chosen by seed and size)."
        ),
        force: bool = typer.Option(
            False, "--force", help="Write into a folder simulate did not write (its bundle parts are replaced)."
        ),
        list_faults: bool = typer.Option(
            False, "--list", help="Print the fault ids, one per line, and exit."
        ),
    ) -> None:
        """Write a simulated incident bundle (logs, flows, stacks, probes, job.yaml) and its truth.json."""
        from diagagent.sim import FAULTS
        from diagagent.sim import simulate as run

        if list_faults:
            _list_faults()
            return
        if out is None or fault is None:
            fail("give OUT and --fault (or --list to see the faults)")
        if fault not in FAULTS:
            fail(f"unknown fault {fault!r}; valid faults: {', '.join(FAULTS)}")
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        err = console(stderr=True)
        with Progress(
            TextColumn("writing {task.description:<6}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as progress:
            tasks: dict[str, object] = {}

            def on_progress(part: str, done: int, total: int) -> None:
                if part not in tasks:
                    tasks[part] = progress.add_task(part, total=total)
                progress.update(tasks[part], completed=done)  # type: ignore[arg-type]

            try:
                truth = run(
                    out,
                    fault,
                    nodes,
                    seed,
                    gpus_per_node=gpus_per_node,
                    minutes=minutes,
                    job_id=job_id,
                    compress=compress,
                    progress=on_progress,
                    force=force,
                )
            except ValueError as exc:
                fail(str(exc))
        nodes_text = ", ".join(truth.faulty_nodes or []) or "none"
        err.print(
            f"[green]wrote[/] {out}  fault={truth.fault} ({truth.category}) stage={truth.stage} "
            f"iteration={truth.iteration} faulty nodes: {nodes_text}",
            soft_wrap=True,
        )


__all__ = ["register"]
