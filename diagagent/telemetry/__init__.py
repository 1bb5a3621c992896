"""The telemetry contract (BUNDLE.md): `Job`, `Bundle`, `JobStore`, and streaming readers for each part.

Everything above reads incidents through this package only.
"""

from diagagent.telemetry.bundle import PARTS, Bundle
from diagagent.telemetry.errors import BundleError, FileError, ReadIssue, file_errors
from diagagent.telemetry.job import Job, Parallelism, RankCoord
from diagagent.telemetry.readers import LogFile, LogLine, PartFile
from diagagent.telemetry.store import JobStore, UnknownJob, open_target
from diagagent.telemetry.timestamps import parse_timestamp
from diagagent.telemetry.truth import Truth

__all__ = ["PARTS", "Bundle", "BundleError", "FileError", "Job", "JobStore", "LogFile", "LogLine", "Parallelism",
           "PartFile", "RankCoord", "ReadIssue", "Truth", "UnknownJob", "file_errors", "open_target",
           "parse_timestamp"]
