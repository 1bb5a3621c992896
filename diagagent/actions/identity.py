"""Who acts on the Ledger: a name checked against the approvers, and the operator acting as them (an admin's --as).

Names compare casefolded and stripped, so `Alice`, `alice ` and `ALICE` are one person.
"""

from __future__ import annotations

from dataclasses import dataclass


def name_key(name: str) -> str:
    """The form names are compared in."""
    return name.strip().casefold()


@dataclass(frozen=True)
class Actor:
    """`name` decides; `via`, when set, is the operator acting as them, and is recorded as "via acting as name"."""

    name: str
    via: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name.strip())
        via = (self.via or "").strip()
        object.__setattr__(self, "via", via if via and name_key(via) != name_key(self.name) else None)

    @classmethod
    def of(cls, who: str | Actor) -> Actor:
        return who if isinstance(who, Actor) else cls(who)

    def people(self) -> frozenset[str]:
        """Everyone behind this act, as name keys: the name, and the operator acting as them."""
        return frozenset(name_key(n) for n in (self.name, self.via) if n)

    def __str__(self) -> str:
        if self.via:
            return f"{self.via} acting as {self.name or '(unnamed)'}"
        return self.name or "(unnamed)"


__all__ = ["Actor", "name_key"]
