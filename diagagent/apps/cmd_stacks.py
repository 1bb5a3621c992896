"""`diagagent stacks|health PATH|JOB_ID [--json]` and `diagagent probe HOST [--probe NAME] [--save BUNDLE]`.

Stack clusters with the eviction set (ByteRobust), node verdicts with their evidence lines, live read-only probes.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import console, fail, open_bundle, print_json, settings


def _stacks_render(f: object) -> None:
    from diagagent.analysis.stacks import StackFindings

    assert isinstance(f, StackFindings)
    out = console()
    out.print(f"[bold]stacks[/]: {f.note}", soft_wrap=True)
    if not f.present or not f.clusters:
        return
    table = Table(title="clusters (main thread, innermost frame)", title_justify="left")
    for col in ("id", "role", "ranks", "hosts", "where", "collective", "FR"):
        table.add_column(col)
    for c in f.clusters[:15]:
        style = "green" if c.role == "healthy" else "red"
        hosts = ", ".join(c.hosts[:3]) + (f" +{len(c.hosts) - 3}" if len(c.hosts) > 3 else "")
        table.add_row(c.id, f"[{style}]{c.role}[/]", f"{len(c.ranks)}: {c.ranks_text[:40]}", hosts, c.top,
                      c.collective or "-", c.fr_state if c.role == "outlier" else "")
    out.print(table)
    if f.fr_summary:
        out.print(f"[bold]flight recorder view[/]: {f.fr_summary.text}", soft_wrap=True)
    if f.eviction:
        e = f.eviction
        out.print(f"[bold]evict[/] {e.kind.upper()} group {e.group_id}: {e.machine_count} machine(s) "
                  f"{', '.join(e.hosts[:12])}{' ...' if len(e.hosts) > 12 else ''}", soft_wrap=True)
        out.print(f"  {e.reasoning}", soft_wrap=True)
    for c in f.clusters:
        if c.role == "outlier":
            out.print(f"[bold]{c.id}[/] representative stack ({c.files[0] if c.files else '-'}):")
            for fr in c.stack[:12]:
                line = f":{fr.line}" if fr.line else ""
                out.print(f"    {fr.function} ({fr.file}{line})", soft_wrap=True, markup=False)
            break
    if f.suspects:
        out.print("[bold]suspects[/]: " + "; ".join(f"{s.host} {s.score:.2f}" for s in f.suspects[:5]))


def _health_render(f: object) -> None:
    from diagagent.analysis.health import HealthFindings

    assert isinstance(f, HealthFindings)
    out = console()
    out.print(f"[bold]health[/]: {f.note}", soft_wrap=True)
    colors = {"faulty": "red", "degraded": "yellow", "healthy": "green"}
    for n in f.nodes:
        if n.verdict == "healthy":
            continue
        out.print(f"[{colors[n.verdict]}]{n.verdict}[/] [bold]{n.host}[/]: {n.reason}", soft_wrap=True)
        for s in n.signals[:6]:
            if s.severity == "info":
                continue
            code = f" {s.code}" if s.code is not None else ""
            out.print(f"    [{s.severity}] {s.kind}{code}  {s.file}:{s.line}", soft_wrap=True)
            out.print(f"        {s.text}", soft_wrap=True, markup=False)
            if s.action:
                out.print(f"        -> {s.action}", soft_wrap=True, markup=False)
    healthy = [n.host for n in f.nodes if n.verdict == "healthy"]
    if healthy:
        out.print(f"[green]healthy[/] ({len(healthy)}): {', '.join(healthy[:20])}{' ...' if len(healthy) > 20 else ''}")
    for p in f.problems[:10]:
        out.print(f"[yellow]skipped[/] {p}", soft_wrap=True)


def register(app: typer.Typer) -> None:
    @app.command()
    def stacks(
        target: str = typer.Argument(..., help="A bundle directory or .tar.gz, or a job id / name in the jobs dir."),
        json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
        lines: bool = typer.Option(False, "--lines", help="Keep line numbers in stack signatures."),
    ) -> None:
        """Cluster every rank's py-spy stack; name the outliers and the parallel group to evict (ByteRobust)."""
        from diagagent.analysis.stacks import analyze_stacks

        with open_bundle(target) as bundle:
            findings = analyze_stacks(bundle, with_lines=lines)
        if json_out:
            print_json(findings)
        else:
            _stacks_render(findings)

    @app.command()
    def health(
        target: str = typer.Argument(..., help="A bundle directory or .tar.gz, or a job id / name in the jobs dir."),
        json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
    ) -> None:
        """Node verdicts (healthy, degraded, faulty) from probe output, each with its exact evidence line."""
        from diagagent.analysis.health import analyze_health
        from diagagent.analysis.xid import load_xid_catalog

        cfg = settings()
        catalog = load_xid_catalog(cfg.content_dir("knowledge") / "xid_catalog.yaml")
        with open_bundle(target, cfg) as bundle:
            findings = analyze_health(bundle, catalog)
        if json_out:
            print_json(findings)
        else:
            _health_render(findings)

    @app.command()
    def probe(
        host: str = typer.Argument(..., help="The host to probe (a node name; a pod name with kubectl)."),
        probe_names: list[str] = typer.Option(None, "--probe", "-p", help="A probe from tools/probes.yaml (repeat); "
                                                                         "default: the manifest's default probes."),
        transport: str = typer.Option(None, "--transport", "-t", help="local, ssh, srun, kubectl (see the manifest)."),
        save: Path = typer.Option(None, "--save", help="Write each output into BUNDLE/probes/HOST/."),
        manifest_path: Path = typer.Option(None, "--manifest", help="A probes.yaml to use instead of tools/probes.yaml."),
        json_out: bool = typer.Option(False, "--json", help="Print the runs as JSON."),
    ) -> None:
        """Run read-only health probes on a host (commands from tools/probes.yaml only) and show what they say."""
        from diagagent.telemetry.live_probes import ProbeError, ProbeManifest, check_host, run_probe, save_run

        cfg = settings()
        path = manifest_path or cfg.content_dir("tools") / "probes.yaml"
        try:
            manifest = ProbeManifest.load(path)
            check_host(host)
            names = manifest.select(probe_names)
        except ProbeError as exc:
            fail(str(exc))
        if save is not None:
            _check_save(save)
        runs = []
        for name in names:
            try:
                run = run_probe(host, name, manifest, transport)
            except ProbeError as exc:
                fail(str(exc))
            if save is not None and run.output:
                try:
                    save_run(run, save, manifest)
                except (ProbeError, OSError) as exc:
                    fail(str(exc))
            runs.append(run)
        if json_out:
            print_json([r.model_dump() for r in runs])
        else:
            _probe_render(runs)
        if any(not r.ok for r in runs):
            raise typer.Exit(1)


def _check_save(save: Path) -> None:
    """--save must name an existing bundle directory: checked before any probe runs."""
    if not save.exists():
        fail(f"--save {save}: no such folder; give an existing bundle directory (its probes/HOST/ is created)")
    if not save.is_dir():
        fail(f"--save {save}: not a folder (a tarball cannot be written to); give a bundle directory")


def why_failed(run: object) -> str:
    """Why a probe did not succeed, in one line: the error or exit code, and the last line it wrote to stderr."""
    from diagagent.telemetry.live_probes import ProbeRun

    assert isinstance(run, ProbeRun)
    head = run.error or f"exit {run.exit_code}"
    tail = next((line.strip() for line in reversed(run.stderr.splitlines()) if line.strip()), "")
    return f"{head}: {tail[-300:]}" if tail and not run.error else head


def _status(run: object) -> str:
    from diagagent.telemetry.live_probes import ProbeRun

    assert isinstance(run, ProbeRun)
    if run.timed_out:
        return "timed out"
    if run.truncated:
        return "output cut"
    return "not started" if run.exit_code is None else f"exit {run.exit_code}"


def _probe_render(runs: list) -> None:
    from diagagent.analysis.probes import parse_dcgm_diag, parse_dmesg, parse_nccl_tests, parse_nvidia_smi
    from diagagent.analysis.xid import load_xid_catalog

    out = console()
    table = Table(title="probes", title_justify="left")
    for col in ("probe", "status", "seconds", "bytes", "saved to"):
        table.add_column(col, overflow="fold")
    for r in runs:
        status = Text("ok", style="green") if r.ok else Text(_status(r), style="red")
        table.add_row(r.probe, status, f"{r.seconds:.1f}", str(r.bytes), r.saved_to or "-")
    out.print(table)
    failed = [r for r in runs if not r.ok]
    if failed:
        out.print(Text(f"{len(failed)} of {len(runs)} probes failed:", style="bold red"))
        reasons = {why_failed(r) for r in failed}
        if len(failed) > 1 and len(reasons) == 1:  # one cause for all (the host is unreachable): say it once
            out.print(Text(f"  all of them: {reasons.pop()}"), soft_wrap=True)
        else:
            for r in failed:
                out.print(Text(f"  {r.probe}: {why_failed(r)}"), soft_wrap=True)
    catalog = load_xid_catalog()
    parsers = {"nvidia-smi": lambda t, f: parse_nvidia_smi(t, f), "dcgm-diag": lambda t, f: parse_dcgm_diag(t, f),
               "dmesg": lambda t, f: parse_dmesg(t, f, catalog), "nccl-tests": lambda t, f: parse_nccl_tests(t, f)}
    for r in runs:
        parse = parsers.get(r.probe)
        if parse is None or not r.output:
            continue
        for s in parse(r.output, r.probe).signals:
            if s.severity != "info":
                out.print(f"  [{s.severity}] {r.probe}:{s.line} {s.kind}: {s.meaning}", soft_wrap=True, markup=False)


__all__ = ["register"]
