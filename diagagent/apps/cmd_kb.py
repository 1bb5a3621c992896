"""`diagagent kb list|show|search|add|import|export`: the failure-schema cache (seeds, learned schemata, outcomes).

chromadb loads only when a kb command runs, so `diagagent --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from diagagent.apps.common import console, fail, print_json, settings

if TYPE_CHECKING:
    from diagagent.schemata import SchemaCache


def _cache() -> SchemaCache:
    from diagagent.schemata import SchemaCache

    try:
        return SchemaCache.open(settings())
    except (ValueError, RuntimeError) as exc:
        fail(f"cannot open the schema cache: {exc}")


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
        table = Table(title=f"{len(schemata)} failure schemata", title_justify="left")
        for col in ("id", "v", "origin", "category", "fault", "title", "matched", "confirmed", "rejected"):
            table.add_column(col, justify="right" if col in ("v", "matched", "confirmed", "rejected") else "left")
        for s in schemata:
            o = s.outcomes
            table.add_row(s.id, str(s.version), s.origin, s.category, s.fault, s.title, str(o.times_matched),
                          str(o.times_confirmed), str(o.times_rejected))
        console().print(table)

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
        table = Table(title=f"{len(hits)} matching schemata", title_justify="left")
        for col in ("score", "similarity", "overlap", "id", "fault", "title", "matched template"):
            table.add_column(col, justify="right" if col in ("score", "similarity", "overlap") else "left")
        for h in hits:
            table.add_row(f"{h.score:.3f}", f"{h.similarity:.3f}", f"{h.template_overlap:.3f}", h.id, h.fault,
                          h.failure_schema.title, h.matched_lines[0].template if h.matched_lines else "-")
        console().print(table)

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
