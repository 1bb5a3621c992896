"""NVIDIA's Xid catalog (knowledge/xid_catalog.yaml): Xid code -> mnemonic, meaning, severity, recommended action.

Loaded from the SRE-editable knowledge folder; an unknown code still gets an entry that says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field

from diagagent.config import packaged_content_dir

Severity = Literal["fatal", "error", "warning", "info"]


class XidEntry(BaseModel):
    code: int
    mnemonic: str = ""
    meaning: str
    severity: Severity
    immediate: str = ""
    action: str
    hardware: bool = True


class XidCatalog(BaseModel):
    source: str = ""
    entries: dict[int, XidEntry] = Field(default_factory=dict)

    def lookup(self, code: int) -> XidEntry:
        """The catalog row, or a cautious default for a code the catalog does not hold."""
        hit = self.entries.get(code)
        if hit is not None:
            return hit
        return XidEntry(code=code, meaning=f"Xid {code} (not in the local catalog)", severity="warning",
                        action="Look the code up in NVIDIA's Xid catalog; run dcgmi diag -r 3 if it repeats.")


def load_xid_catalog(path: Path | None = None) -> XidCatalog:
    """The catalog from `path`, else the packaged knowledge/xid_catalog.yaml; an unreadable file gives an empty one."""
    path = path or packaged_content_dir("knowledge") / "xid_catalog.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return XidCatalog()
    entries: dict[int, XidEntry] = {}
    for code, row in (data.get("xids") or {}).items():
        if isinstance(row, dict):
            try:
                entries[int(code)] = XidEntry(code=int(code), **row)
            except (ValueError, TypeError):
                continue  # a malformed row is skipped; the rest of the catalog still loads
    return XidCatalog(source=str(data.get("source", "")), entries=entries)


__all__ = ["Severity", "XidCatalog", "XidEntry", "load_xid_catalog"]
