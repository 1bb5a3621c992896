"""`diagagent kb list|show|search|add|import|export`: the failure-schema cache (seeds, learned schemata, outcomes).

chromadb loads only when a kb command runs, so `diagagent --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from diagagent.apps.common import console, fail, fitted, print_json, settings

if TYPE_CHECKING:
    from diagagent.schemata import FailureSchema, SchemaCache, SchemaHit


def _cache() -> SchemaCache:
    from diagagent.schemata import SchemaCache

    try:
        return SchemaCache.open(settings())
    except (ValueError, RuntimeError) as exc:
        fail(f"cannot open the schema cache: {exc}")


def _list_table(schemata: list[FailureSchema], dropped: frozenset[str]) -> Table:
    """Every schema, one row each; without a category column, the rows are grouped under category headings."""
    table = Table(title=f"{len(schemata)} failure schemata (m/c/r: times matched / confirmed / rejected)",
                  title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("id", no_wrap=True, min_width=max((len(s.id) for s in schemata), default=2))
    for col in ("v", "origin", "category", "fault"):
        if col not in dropped:
            table.add_column(col, no_wrap=True)
    table.add_column("title")
    table.add_column("m/c/r", justify="right", no_wrap=True)
    grouped = "category" in dropped
    last = None
    for s in sorted(schemata, key=lambda s: (s.category, s.id)) if grouped else schemata:
        if grouped and s.category != last:
            table.add_row(Text(s.category, style="bold"), end_section=False)
            last = s.category
        o = s.outcomes
        marked = Text(s.id) if "origin" not in dropped or s.origin == "seed" else Text.assemble(s.id, (f" ({s.origin})", "dim"))
        cells = [marked] + [str(getattr(s, "version" if col == "v" else col))
                          for col in ("v", "origin", "category", "fault") if col not in dropped]
        table.add_row(*cells, s.title, f"{o.times_matched}/{o.times_confirmed}/{o.times_rejected}")
    return table


def _search_table(hits: list[SchemaHit], dropped: frozenset[str]) -> Table:
    """The hits, best first: scores, the schema, and the evidence template it matched (under its title)."""
    table = Table(title=f"{len(hits)} matching schemata", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    table.add_column("score", justify="right", no_wrap=True)
    for col in ("similarity", "overlap"):
        if col not in dropped:
            table.add_column(col, justify="right", no_wrap=True)
    table.add_column("id", no_wrap=True, min_width=max((len(h.id) for h in hits), default=2))
    if "fault" not in dropped:
        table.add_column("fault", no_wrap=True)
    table.add_column("title / matched template")
    for h in hits:
        cells = [f"{h.score:.3f}"]
        cells += [f"{v:.3f}" for col, v in (("similarity", h.similarity), ("overlap", h.template_overlap))
                  if col not in dropped]
        cells.append(h.id)
        if "fault" not in dropped:
            cells.append(h.fault)
        matched = h.matched_lines[0].template if h.matched_lines else "-"
        table.add_row(*cells, Text.assemble(h.failure_schema.title, "\n", (f"matches: {matched}", "dim")))
    return table


def register(app: typer.Typer) -> None:
    kb = typer.Typer(help="The failure-schema knowledge base: list, show, search, add, import, export.",
                     no_args_is_help=True)
    app.add_typer(kb, name="kb")

    @kb.command("list")
    def list_(
        category: str | None = typer.Option(None, "--category", "-c", help="Only this category."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """List every schema: id, version, category, fault, title and how often operators confirmed it."""
        schemata = _cache().list(category)
        if json_out:
            print_json([s.model_dump(mode="json", include={"id", "version", "origin", "category", "fault", "title",
                                                          "outcomes"}) for s in schemata])
            return
        out = console()
        out.print(fitted(out, lambda dropped: _list_table(schemata, dropped), ("fault", "origin", "category", "v")))

    @kb.command()
    def show(
        schema_id: str = typer.Argument(..., help="A schema id (see `diagagent kb list`)."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON instead of YAML."),
    ) -> None:
        """Show one schema in full (YAML): templates, symptoms, checks, actions, references, outcomes."""
        from diagagent.schemata import schema_yaml

        schema = _cache().get(schema_id)
        if schema is None:
            fail(f"no schema {schema_id!r} (see `diagagent kb list`)")
        if json_out:
            print_json(schema)
        else:
            console().print(schema_yaml(schema), markup=False, highlight=False, soft_wrap=True)

    @kb.command()
    def search(
        texts: list[str] = typer.Argument(None, help="Evidence: log lines, probe lines or symptom phrases."),
        from_file: Path | None = typer.Option(None, "--file", "-f", help="Read evidence lines from a file."),
        k: int = typer.Option(5, "-k", help="How many schemata to return."),
        category: str | None = typer.Option(None, "--category", "-c", help="Only this category."),
        json_out: bool = typer.Option(False, "--json", help="Print JSON."),
    ) -> None:
        """Find the schemata that best explain the evidence (embedding similarity + template overlap)."""
        lines = list(texts or [])
        if from_file is not None:
            try:
                lines += from_file.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError as exc:
                fail(f"cannot read {from_file}: {exc}")
        if not any(line.strip() for line in lines):
            fail("give evidence text as arguments or with --file")
        hits = _cache().search(lines, k=k, category=category)
        if json_out:
            print_json([h.model_dump(mode="json") for h in hits])
            return
        out = console()
        out.print(fitted(out, lambda dropped: _search_table(hits, dropped), ("fault", "similarity", "overlap")))

    @kb.command()
    def add(
        path: Path = typer.Argument(..., help="A YAML file with one schema (or a list of them)."),
        replace: bool = typer.Option(False, "--replace", help="Overwrite an existing id (its history is kept)."),
    ) -> None:
        """Add schemata from a YAML file; an existing id is refused unless --replace."""
        from diagagent.schemata import read_schemata

        try:
            schemata = read_schemata(path)
        except (OSError, ValueError) as exc:
            fail(str(exc))
        cache = _cache()
        for schema in schemata:
            try:
                cache.add(schema, replace=replace)
            except ValueError as exc:
                fail(str(exc))
            console().print(f"added {schema.id} (version {schema.version})")

    @kb.command("import")
    def import_(folder: Path = typer.Argument(..., help="A folder of schema YAML files.")) -> None:
        """Import schemata: new ids are added, higher versions upgrade (keeping outcomes), the rest are skipped."""
        if not folder.is_dir():
            fail(f"{folder} is not a folder")
        try:
            report = _cache().import_dir(folder)
        except ValueError as exc:
            fail(str(exc))
        console().print(f"added {len(report.added)}, upgraded {len(report.upgraded)}, "
                        f"skipped {len(report.skipped)} (same or older version stored)")

    @kb.command()
    def export(folder: Path = typer.Argument(..., help="Where to write one <id>.yaml per schema.")) -> None:
        """Export every schema, outcomes and learned templates included, as YAML files."""
        paths = _cache().export_dir(folder)
        console().print(f"wrote {len(paths)} schemata to {folder}")


__all__ = ["register"]
