"""Failure schemata: the FailureSchema model, the chromadb-backed SchemaCache, and learning from operators.

Importing this package is cheap: chromadb, scipy and the embeddings load only when a cache is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from diagagent.schemata.model import (
    CounterExample,
    FailureSchema,
    Outcomes,
    RecommendedAction,
    read_schemata,
    read_schemata_dir,
    schema_yaml,
    write_schemata_dir,
)

if TYPE_CHECKING:
    from diagagent.schemata.cache import ImportReport, SchemaCache, SchemaHit

_LAZY = {"SchemaCache", "SchemaHit", "ImportReport", "MatchedLine"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from diagagent.schemata import cache

        return getattr(cache, name)
    raise AttributeError(name)


__all__ = [
    "CounterExample",
    "FailureSchema",
    "ImportReport",
    "Outcomes",
    "RecommendedAction",
    "SchemaCache",
    "SchemaHit",
    "read_schemata",
    "read_schemata_dir",
    "schema_yaml",
    "write_schemata_dir",
]
