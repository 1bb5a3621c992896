"""What the agent's tools work on: one incident's bundle, its analyses and evidence ids, and the proposals made.

Tools read through it; nothing in it can approve or execute: proposals only go to the Ledger as pending.
"""

from __future__ import annotations

from diagagent.config import Settings
from diagagent.diagnosis import ActionProposal, Analyses, Diagnosis
from diagagent.diagnosis.analyses import ProgressSink
from diagagent.telemetry import Bundle


class ToolContext:
    def __init__(self, bundle: Bundle, settings: Settings, analyses: Analyses | None = None,
                 on_progress: ProgressSink | None = None) -> None:
        self.bundle = bundle
        self.settings = settings
        self.analyses = analyses or Analyses(bundle, settings, on_progress)
        self.proposed: list[ActionProposal] = []  # from the propose_action tool, pending an operator
        self._draft: Diagnosis | None = None

    def draft(self) -> Diagnosis:
        """The deterministic diagnosis (the playbook's), computed once."""
        if self._draft is None:
            from diagagent.diagnosis import diagnose

            self._draft = diagnose(self.bundle, self.settings, analyses=self.analyses)
        return self._draft
