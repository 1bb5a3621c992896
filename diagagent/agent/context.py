"""What the agent's tools work on: one incident's bundle, its analyses and evidence ids, and the proposals made.

Tools read through it; nothing in it can approve or execute: proposals only go to the Ledger as pending.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal, Analyses, Diagnosis
from diagagent.diagnosis.analyses import ProgressSink
from diagagent.telemetry import Bundle

if TYPE_CHECKING:
    from diagagent.actions import Ledger, LedgerEntry


class ToolContext:
    def __init__(self, bundle: Bundle, settings: Settings, analyses: Analyses | None = None,
                 on_progress: ProgressSink | None = None) -> None:
        self.bundle = bundle
        self.settings = settings
        self.analyses = analyses or Analyses(bundle, settings, on_progress)
        self.proposed: list[ActionProposal] = []  # from the propose_action tool, pending an operator
        self._draft: Diagnosis | None = None
        # the ledger proposals are recorded in (an app sets its own); None: the settings' one, if it exists
        self.ledger: Ledger | None = None

    def ledger_entries(self, proposals: Sequence[ActionProposal]) -> tuple[list[LedgerEntry | None], str]:
        """(each proposal's ledger entry as it stands now, None where not recorded; a note when the ledger could
        not be read). Only reads: a ledger that does not exist yet is not created."""
        from diagagent.actions import Ledger, LedgerError

        none: list[LedgerEntry | None] = [None] * len(proposals)
        if self.ledger is None:
            path = self.settings.state_dir / "ledger.sqlite"
            if not path.exists():
                return none, ""
            self.ledger = Ledger.from_settings(self.settings)
        try:
            return [self.ledger.find(self.bundle.job.job_id, p) for p in proposals], ""
        except (sqlite3.Error, LedgerError, OSError) as exc:
            return none, f"the ledger could not be read ({type(exc).__name__}: {exc})"

    def draft(self) -> Diagnosis:
        """The deterministic diagnosis (the playbook's), computed once."""
        if self._draft is None:
            from diagagent.diagnosis import diagnose

            self._draft = diagnose(self.bundle, self.settings, analyses=self.analyses)
        return self._draft
