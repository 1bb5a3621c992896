"""One incident in a Slack thread: progress while the analyzers run, the diagnosis, the timeline picture, proposals.

Follow-up questions in the thread go to the same Session; proposals go to the ledger as pending, nothing more.
"""

from __future__ import annotations

import logging
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from diagagent.actions import Ledger, LedgerEntry, TemplateError, plan
from diagagent.agent.session import Session
from diagagent.apps.cmd_diagnose import ANALYZER_LABELS
from diagagent.apps.slack import blocks
from diagagent.apps.slack.jobs import JobDirectory
from diagagent.apps.slack.sessions import EventRelay, SessionStore, ThreadKey, ThreadSession
from diagagent.config import Settings
from diagagent.diagnosis import Diagnosis
from diagagent.telemetry import Bundle
from diagagent.telemetry.store import JobRef

MAX_CONCURRENT_DIAGNOSES = 2  # analyzers are CPU-heavy; more threads wait their turn

log = logging.getLogger(__name__)


class ProgressMessage:
    """A thread message that says which analyzers (or, for a question, which tools) have run, updated as they do."""

    def __init__(self, client: WebClient, channel: str, ts: str, title: str, kind: str = "analyzer") -> None:
        self.client, self.channel, self.ts, self.title, self.kind = client, channel, ts, title, kind
        self.done: list[str] = []
        self.running: str | None = None
        self._shown = ""

    def text(self) -> str:
        steps = [f":white_check_mark: {s}" for s in self.done]
        if self.running:
            steps.append(f":hourglass_flowing_sand: {self.running}")
        return self.title + ("\n" + " · ".join(steps) if steps else "")

    def __call__(self, event: dict[str, Any]) -> None:
        name = event.get("name") or event.get("tool") or ""
        label = ANALYZER_LABELS.get(name, name) if self.kind == "analyzer" else f"tool {name}"
        if event.get("type") == f"{self.kind}_start":
            self.running = label
        elif event.get("type") == f"{self.kind}_end":
            self.running = None
            self.done.append(label)
        else:
            return
        self.show()

    def show(self, text: str | None = None) -> None:
        """Update the message (quietly: a failed progress update must not stop the diagnosis)."""
        text = text or self.text()
        if text == self._shown:
            return
        self._shown = text
        try:
            self.client.chat_update(channel=self.channel, ts=self.ts, text=text)
        except SlackApiError as exc:
            log.warning("progress update failed: %s", exc.response.get("error"))


def _send(client: WebClient, channel: str, thread_ts: str, text: str,
          block_list: list[blocks.Block] | None = None) -> str:
    """Post in a thread; the new message's ts."""
    reply = client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=text, blocks=block_list)
    return str(reply["ts"])


class IncidentThreads:
    """Starts a diagnosis in a thread, answers follow-ups there, and posts proposals with their buttons."""

    def __init__(self, settings: Settings, jobs: JobDirectory, ledger: Ledger, sessions: SessionStore) -> None:
        self.settings = settings
        self.jobs = jobs
        self.ledger = ledger
        self.sessions = sessions
        self._slots = threading.BoundedSemaphore(MAX_CONCURRENT_DIAGNOSES)

    # --- a new incident ------------------------------------------------------------------------------------

    def diagnose(self, client: WebClient, key: ThreadKey, ref: JobRef, asked_by: str) -> ThreadSession | None:
        """Open the job, diagnose it with progress in the thread, then post diagnosis, picture and proposals.

        `asked_by` (the asking Slack user's id) is recorded as proposing the actions, so they cannot approve them.
        """
        channel, thread_ts = key
        title = f":mag: Looking at {blocks.job_label(ref)}…"
        progress = ProgressMessage(client, channel, _send(client, channel, thread_ts, title), title)
        try:
            bundle = self.jobs.open(ref)
        except Exception as exc:  # noqa: BLE001 - an unreadable bundle is reported in the thread
            progress.show(f":x: I could not open {blocks.job_label(ref)}: {blocks.escape(str(exc))}")
            return None
        relay = EventRelay()
        thread = ThreadSession(key=key, job=ref, session=Session(bundle, self.settings, on_event=relay), relay=relay)
        thread.session.ctx.ledger = self.ledger  # thread answers say each proposal's state in the bot's ledger
        self.sessions.put(thread)
        with thread.lock:
            relay.target = progress
            try:
                diagnosis, seconds = self._run_diagnosis(thread.session, progress)
            except Exception as exc:
                log.exception("diagnosis of job %s failed", ref.job_id)
                progress.show(f":x: The diagnosis of {blocks.job_label(ref)} failed: "
                              f"{blocks.escape(type(exc).__name__)}: {blocks.escape(blocks.clip(str(exc), 500))}")
                return thread
            finally:
                relay.target = None
        self._replace(client, progress, blocks.diagnosis_text(diagnosis),
                      blocks.diagnosis_blocks(diagnosis, ref, seconds))
        self._upload_timeline(client, key, thread.session)
        self._post_proposals(client, key, diagnosis, bundle, asked_by)
        return thread

    def _run_diagnosis(self, session: Session, progress: ProgressMessage) -> tuple[Diagnosis, float]:
        if not self._slots.acquire(blocking=False):
            progress.show(progress.title + "\n:hourglass: waiting for another diagnosis to finish")
            self._slots.acquire()
        try:
            started = time.perf_counter()
            diagnosis = session.diagnose()
            return diagnosis, time.perf_counter() - started
        finally:
            self._slots.release()

    def _upload_timeline(self, client: WebClient, key: ThreadKey, session: Session) -> None:
        """The per-node iteration heatmap as a PNG in the thread, when the bundle has flows; a failure is a note."""
        findings = session.ctx.analyses.flows
        if findings is None:
            return
        from diagagent.analysis.flows import plot_heatmap

        job_id = session.bundle.job.job_id
        with tempfile.TemporaryDirectory(prefix="diagagent-slack-") as tmp:
            try:
                picture = plot_heatmap(findings, Path(tmp) / "timeline.png")
            except ValueError as exc:  # the flows gave no iterations: nothing to draw
                log.info("no timeline picture for job %s: %s", job_id, exc)
                return
            try:
                client.files_upload_v2(channel=key[0], thread_ts=key[1], file=str(picture),
                                       filename=f"job-{job_id}-timeline.png",
                                       title=f"Job {job_id}: iteration time and compute gap per node",
                                       alt_txt=f"Heatmap of iteration times per node for job {job_id}")
            except Exception as exc:  # noqa: BLE001 - the proposals still follow
                error = exc.response.get("error") if isinstance(exc, SlackApiError) else type(exc).__name__
                log.warning("timeline upload failed: %s", error)
                _send(client, key[0], key[1], f"(I could not upload the timeline picture: {blocks.escape(str(error))})")

    def _post_proposals(self, client: WebClient, key: ThreadKey, diagnosis: Diagnosis, bundle: Bundle,
                        asked_by: str) -> None:
        for proposal in diagnosis.proposals:
            entry = self.ledger.submit(diagnosis.job_id, proposal, asked_by, job=bundle.job,
                                       evidence=diagnosis.evidence)
            _send(client, key[0], key[1], blocks.proposal_text(entry), self.proposal_view(entry))

    def proposal_view(self, entry: LedgerEntry) -> list[blocks.Block]:
        """The proposal's blocks; while pending, with what approving it would run (or why it cannot run)."""
        if entry.state != "pending":
            return blocks.proposal_blocks(entry, None)
        try:
            return blocks.proposal_blocks(entry, plan(entry, self.settings))
        except TemplateError as exc:
            return blocks.proposal_blocks(entry, None, str(exc))

    # --- a follow-up question --------------------------------------------------------------------------------

    def answer(self, client: WebClient, thread: ThreadSession, question: str) -> None:
        """Answer in the thread with the thread's Session: a placeholder that shows tools, then the answer."""
        channel, thread_ts = thread.key
        title = ":thought_balloon: Looking into it…"
        progress = ProgressMessage(client, channel, _send(client, channel, thread_ts, title), title, kind="tool")
        with thread.lock:
            thread.relay.target = progress
            try:
                answer = thread.session.ask(question)
            except Exception as exc:
                log.exception("answering in thread %s failed", thread.key)
                progress.show(f":x: I could not answer that: {blocks.escape(type(exc).__name__)}: "
                              f"{blocks.escape(blocks.clip(str(exc), 500))}")
                return
            finally:
                thread.relay.target = None
        self._replace(client, progress, blocks.clip(blocks.mrkdwn_from_markdown(answer.markdown), 300),
                      blocks.answer_blocks(answer))

    @staticmethod
    def _replace(client: WebClient, progress: ProgressMessage, text: str, block_list: list[blocks.Block]) -> None:
        """Turn the progress message into the result; if Slack refuses the blocks, the text still arrives."""
        try:
            client.chat_update(channel=progress.channel, ts=progress.ts, text=text, blocks=block_list)
        except SlackApiError as exc:
            log.warning("Slack refused the result blocks (%s); sending the text only", exc.response.get("error"))
            progress.show(text)


__all__ = ["IncidentThreads", "ProgressMessage"]
