"""Diagnosis: the output contract (Evidence, Diagnosis, ActionProposal) and `diagnose()`, which fuses the
analyzers' findings and the matched schemata into one cited diagnosis with proposed actions.
"""

from diagagent.contract import (  # re-exported: the contract lives below the analyzers
    ActionProposal,
    Candidate,
    Diagnosis,
    Evidence,
    EvidenceKind,
    EvidenceRole,
    NodeScore,
    SchemaMatch,
)

__all__ = ["ActionProposal", "Analyses", "Candidate", "Diagnosis", "Evidence", "EvidenceKind", "EvidenceRole", "NodeScore",
           "SchemaMatch", "diagnose"]


def __getattr__(name: str):
    if name == "diagnose":
        from diagagent.diagnosis.fuse import diagnose

        return diagnose
    if name == "Analyses":
        from diagagent.diagnosis.analyses import Analyses

        return Analyses
    raise AttributeError(name)
