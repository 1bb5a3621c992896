"""The TUI (`diagagent chat`) through Textual's Pilot: the real offline pipeline on examples/job-42, and fixed data.

Fixed-data helpers here (a tiny bundle and a canned Incident) also feed the SVG snapshots in test_tui_snapshots.py.
"""

from __future__ import annotations

import html
import re
import shlex
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static, TabbedContent
from typer.testing import CliRunner

from diagagent.actions import Ledger, plan
from diagagent.agent import Session
from diagagent.apps.cli import build_app
from diagagent.apps.tui import DiagApp
from diagagent.apps.tui.chat import AnswerView, ToolCallView
from diagagent.apps.tui.commands import parse_slash
from diagagent.apps.tui.confirm import ConfirmDecision
from diagagent.apps.tui.diagnosis_panel import DiagnosisPanel
from diagagent.apps.tui.incident import (
    Incident,
    NodeStatus,
    Signal,
    TimelineData,
    submit_proposals,
    timeline_data,
)
from diagagent.apps.tui.timeline import chart_text, duration_bars, ratio_cell
from diagagent.config import Settings
from diagagent.contract import ConfidenceWhy
from diagagent.diagnosis import ActionProposal, Diagnosis, Evidence, NodeScore
from diagagent.telemetry import Bundle

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "job-42"
MARKUP = "[bold]x[/bold] [@click=app.quit]boom[/] $var"  # telemetry that looks like markup must stay literal

# --- fixed data: a tiny bundle and a canned incident (deterministic, independent of the analyzers) ------------

TINY_JOB = textwrap.dedent("""\
    job_id: "7"
    name: gpt-tiny-pretrain
    framework: megatron
    status: failed
    gpus_per_node: 2
    nodes:
      - {host: node-101, ranks: [0, 1]}
      - {host: node-102, ranks: [2, 3]}
      - {host: node-103, ranks: [4, 5]}
      - {host: node-104, ranks: [6, 7]}
    checkpoints:
      - {step: 1000, path: /ckpt/7/iter_0001000, valid: true}
    spares: 2
    """)


def write_tiny_bundle(root: Path) -> Path:
    (root / "logs" / "node-102").mkdir(parents=True)
    (root / "probes" / "node-102").mkdir(parents=True)
    (root / "job.yaml").write_text(TINY_JOB)
    lines = [f"[rank2]: iteration {1190 + i} | lm loss: 2.10 | elapsed time per iteration (ms): 5012.0" for i in range(8)]
    lines += ["[rank2]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
              f"[rank2]: note {MARKUP}", "[rank2]: exiting"]
    (root / "logs" / "node-102" / "rank-2.log").write_text("\n".join(lines) + "\n")
    (root / "probes" / "node-102" / "dmesg.txt").write_text(
        "[Thu Nov 19 15:41:30 2026] nvidia-peermem loaded\n"
        "[Thu Nov 19 15:41:35 2026] NVRM: Xid (PCI:0000:5d:00): 48, pid=2054, name=python3, DBE\n")
    return root


def tiny_diagnosis() -> Diagnosis:
    return Diagnosis(
        job_id="7", status="failed", category="hardware", fault="gpu_ecc_uncorrectable",
        root_cause="Uncorrectable ECC error (Xid 48) on node-102 (rank 2) at iteration 1198.", confidence=0.8,
        faulty_nodes=[NodeScore(host="node-102", score=0.95, reason="logs: CUDA ECC error; health: Xid 48",
                                evidence=["e1", "e2"])],
        stage="training", iteration=1198,
        confidence_why=ConfidenceWhy(
            basis="80%: lines that point to the fault; such evidence was right 80% of the time on the dev cases",
            raised=["decisive sign of gpu_ecc_uncorrectable: xid-48 (logs/node-102/rank-2.log:9)"],
            held_down=["one node's probes are missing"],
            check="Xid 48 on exactly one GPU tells it from a software CUDA error"),
        evidence=[
            Evidence(id="e1", kind="log", role="cause", file="logs/node-102/rank-2.log", line=9, host="node-102",
                     rank=2, text="[rank2]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
                     why="error; on 1/4 nodes"),
            Evidence(id="e2", kind="probe", role="cause", file="probes/node-102/dmesg.txt", line=2, host="node-102",
                     text="[Thu Nov 19 15:41:35 2026] NVRM: Xid (PCI:0000:5d:00): 48, pid=2054, name=python3, DBE",
                     why="Xid 48: double-bit ECC error"),
            Evidence(id="e3", kind="log", role="symptom", file="logs/node-102/rank-2.log", line=10, host="node-102",
                     rank=2, text=f"[rank2]: note {MARKUP}", why=f"odd line {MARKUP}"),
        ],
        proposals=[ActionProposal(kind="evict", nodes=["node-102"], reason=f"Xid 48 on node-102 {MARKUP}",
                                  evidence=["e1", "e2"]),
                   ActionProposal(kind="restart", from_step=1000, reason="restart from step 1000")],
        notes=["no stacks/ in this bundle: a hang cannot be localized by stack clustering"],
    )


def tiny_nodes() -> tuple[NodeStatus, ...]:
    d = tiny_diagnosis()
    xid = Signal("probes/node-102/dmesg.txt", 2, d.evidence[1].text, "Xid 48: double-bit ECC error", "error")
    return (NodeStatus("node-102", "faulty", "xid: Xid 48", d.faulty_nodes[0], (xid,)),
            NodeStatus("node-101", "healthy", "no probe shows a problem", None),
            NodeStatus("node-103", "healthy", f"probe note {MARKUP}", None),
            NodeStatus("node-104", "unprobed", "no probe output for this node", None))


def tiny_timeline() -> TimelineData:
    its = tuple(range(20, 60))
    slow = tuple(1.0 if i < 45 else 1.2 + 0.1 * (i - 45) for i in its)
    steady = tuple(None if i == 30 else 1.0 for i in its)
    return TimelineData(
        summary="1200 job flows over 4 nodes; 60 iterations, median 5.0 s; straggler(s): node-102",
        p50_s=5.0, p95_s=6.4, job_iterations=tuple(range(60)),
        job_durations=tuple(5.0 if i < 45 else 5.0 + 0.1 * (i - 45) for i in range(60)),
        hosts=("node-102", "node-101", "node-103", "node-104"), iterations=its,
        ratios=(slow, steady, tuple(0.85 for _ in its), tuple(1.1 for _ in its)),
        marked=frozenset({"node-102"}), hosts_total=4)


def canned_source(release: threading.Event | None = None) -> Callable[[Session, Ledger, str], Incident]:
    """An incident source that reports two tool calls and some analyzer progress, then returns fixed data."""

    def source(session: Session, ledger: Ledger, proposer: str) -> Incident:
        emit = session.on_event
        assert emit is not None
        emit({"type": "analyzer_start", "name": "logs"})
        emit({"type": "analyzer_end", "name": "logs", "seconds": 0.5, "ok": True})
        emit({"type": "tool_start", "tool": "log_events", "args": {"top": 10}})
        emit({"type": "tool_end", "tool": "log_events", "args": {"top": 10},
              "result": '{"events":[{"evidence":"e1","text":"' + MARKUP + '"}]}'})
        emit({"type": "analyzer_start", "name": "health"})
        emit({"type": "tool_start", "tool": "node_health", "args": {"verdict": "faulty"}})
        if release is not None:
            release.wait(timeout=30)
        emit({"type": "analyzer_end", "name": "health", "seconds": 0.2, "ok": True})
        emit({"type": "tool_end", "tool": "node_health", "args": {"verdict": "faulty"}, "result": '{"nodes":[]}'})
        d = tiny_diagnosis()
        emit({"type": "diagnosis", "diagnosis": d})
        entries = submit_proposals(ledger, d, session.bundle.job, proposer)
        return Incident(d, tiny_nodes(), tiny_timeline(), "", tuple(entries))

    return source


def settings_for(state: Path, tmp: Path, approvers: tuple[str, ...] = ("alice",)) -> Settings:
    return Settings.load(state_dir=state, jobs_dir=tmp / "jobs", approvers=list(approvers))


@pytest.fixture
def tiny_app(tmp_path: Path) -> Iterator[DiagApp]:
    """The app on the tiny bundle with the canned incident (bob asked for it), as alice (an approver)."""
    cfg = settings_for(tmp_path / "state", tmp_path)
    with Bundle.open(write_tiny_bundle(tmp_path / "job-7")) as bundle:
        yield DiagApp(bundle, cfg, user="alice", proposer="bob", ledger=Ledger(tmp_path / "ledger.sqlite", ["alice"]),
                      incident_source=canned_source())


# --- the real pipeline on examples/job-42 ---------------------------------------------------------------

@pytest.fixture(scope="module")
def shared_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One state dir (schema cache) for this module's real diagnoses; each test still gets its own ledger."""
    return tmp_path_factory.mktemp("tui-state")


def example_app(shared_state: Path, tmp: Path, user: str = "alice") -> tuple[DiagApp, Ledger]:
    """The real pipeline on examples/job-42 as `user`; bob asked for the diagnosis, so its actions are his proposals."""
    cfg = settings_for(shared_state, tmp)
    ledger = Ledger(tmp / "ledger.sqlite", ["alice"])
    return DiagApp(Bundle.open(EXAMPLE), cfg, user=user, proposer="bob", use_llm=False, ledger=ledger), ledger


async def settle(pilot: Pilot) -> None:
    """Let the workers finish (but not one waiting on a confirmation) and the screen catch up."""
    await pilot.pause()
    busy = [w for w in pilot.app.workers if w.group != "decision" and w.is_running]
    if busy:
        await pilot.app.workers.wait_for_complete(busy)
    await pilot.pause()


async def ask(pilot: Pilot, text: str, *, wait: bool = True) -> None:
    """Type into the prompt (set at once: pressing each key is slow) and submit with Enter."""
    prompt = pilot.app.query_one("#prompt", Input)
    prompt.focus()
    prompt.value = text
    await pilot.press("enter")
    if wait:
        await settle(pilot)


def screen_text(app: DiagApp) -> str:
    """What the terminal shows, as text (from the SVG screenshot)."""
    return html.unescape(re.sub(r"<[^>]+>", "", app.export_screenshot())).replace("\xa0", " ")


def unwrapped(text: str) -> str:
    """A detail's text with its wrapped log lines joined again (a continuation starts with '┆ ')."""
    return re.sub(r"\n *┆ ", "", text)


def static_text(app: DiagApp, selector: str) -> str:
    widget = app.screen.query_one(selector, Static)
    content = widget.content
    parts = getattr(content, "renderables", [content])  # a Group: its lines
    return "\n".join(str(p.plain if hasattr(p, "plain") else p) for p in parts)


async def test_why_did_it_fail_offline_names_node_and_evidence(shared_state: Path, tmp_path: Path) -> None:
    app, _ = example_app(shared_state, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.session.mode == "playbook"
        assert "node-013" in static_text(app, "#diagnosis-panel")
        await ask(pilot, "why did it fail?")
        answer = list(app.query(AnswerView))[-1]
        assert answer.label == "diagagent"
        assert "node-013" in answer.markdown
        assert "logs/node-013/" in answer.markdown  # cited evidence, with file and line
        tabs = app.query_one(TabbedContent)
        assert str(tabs.get_tab("evidence").label).startswith("Evidence ")
        # the investigation's tool calls are listed under the diagnosis, collapsed, and expand to their result
        calls = list(app.query(ToolCallView))
        assert [c.call.tool for c in calls][:2] == ["overview", "log_events"]
        assert calls[0].collapsed
        calls[0].scroll_visible(animate=False)
        await pilot.pause()
        await pilot.click(calls[0].query_one("CollapsibleTitle"))
        assert not calls[0].collapsed


async def test_approve_through_confirmation_runs_exactly_the_plan(shared_state: Path, tmp_path: Path) -> None:
    app, ledger = example_app(shared_state, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f6")
        entry = ledger.list(job_id="42")[0]
        assert entry.state == "pending" and entry.proposal.kind == "evict"
        await pilot.press("a")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConfirmDecision)
        shown = static_text(app, "#confirm-text")
        for argv in plan(entry, app.settings).commands:
            assert f"$ {shlex.join(argv)}" in shown
        assert "You are alice, an approver." in shown
        assert ledger.get(entry.id).state == "pending"  # opening the confirmation decides nothing
        await pilot.click("#confirm")
        await settle(pilot)
        done = ledger.get(entry.id)
        assert done.state == "executed" and done.decided_by == "alice"
        assert done.commands == plan(entry, app.settings).commands
        assert "executed" in static_text(app, "#action-status")


async def test_reject_needs_a_reason_and_records_it(shared_state: Path, tmp_path: Path) -> None:
    app, ledger = example_app(shared_state, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f6", "down", "r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecision)
        entry = ledger.list(job_id="42")[1]
        await pilot.click("#confirm")  # no reason yet: refused on the screen, nothing decided
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecision)
        assert static_text(app, "#confirm-error") == "A rejection needs a reason: type it above."
        reason = app.screen.query_one("#decision-reason", Input)
        assert reason.has_focus
        reason.value = "checkpoint is suspect"
        button = app.screen.query_one("#confirm")
        for _ in range(40):  # a Button ignores presses while it shows the last one (its "-active" effect)
            if not button.has_class("-active"):
                break
            await pilot.pause(0.05)
        await pilot.press("enter", "enter")  # Enter in the reason moves to Reject; Enter there presses it
        await settle(pilot)
        done = ledger.get(entry.id)
        assert done.state == "rejected" and done.decision_reason == "checkpoint is suspect"
        assert "rejected" in static_text(app, "#action-status")


async def test_cancel_decides_nothing_and_a_non_approver_is_refused_clearly(tmp_path: Path) -> None:
    cfg = settings_for(tmp_path / "state", tmp_path)
    ledger = Ledger(tmp_path / "ledger.sqlite", ["alice"])
    with Bundle.open(write_tiny_bundle(tmp_path / "job-7")) as bundle:
        app = DiagApp(bundle, cfg, user="mallory", proposer="bob", ledger=ledger, incident_source=canned_source())
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("f6", "a")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmDecision)
            await pilot.press("escape")
            await settle(pilot)
            assert not isinstance(app.screen, ConfirmDecision)
            assert [e.state for e in ledger.list()] == ["pending", "pending"]
            assert "Cancelled" in static_text(app, "#action-status")
            await pilot.press("a")
            await pilot.pause()
            assert "You are mallory, not an approver (approvers: alice)" in static_text(app, "#confirm-text")
            await pilot.click("#confirm")
            await settle(pilot)
            status = static_text(app, "#action-status")
            assert status.startswith("Approval refused: mallory is not an approver")
            assert ledger.list()[0].state == "pending"
            assert [a.event for a in ledger.audit(1)][-1] == "approve_refused"


async def test_the_diagnosis_panel_says_why_that_confidence(tiny_app: DiagApp) -> None:
    """Issue 18 item 7: the TUI showed a bare 80%; the panel now says what raised it, what held it down and the
    one check that would settle it, each on a line cut to the width (never wrapped into the panes)."""
    async with tiny_app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        panel = static_text(tiny_app, "#diagnosis-panel")
        assert "why 80%:" in panel and "+ decisive sign of gpu_ecc_uncorrectable" in panel
        assert "- one node's probes are missing" in panel
        assert "to settle it: Xid 48 on exactly one GPU" in panel
        shown = screen_text(tiny_app)
        assert "why 80%:" in shown and "to settle it:" in shown  # on screen at 80x24, not cut off by the panel


async def test_slash_commands_open_panes_and_help(tiny_app: DiagApp) -> None:
    async with tiny_app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        tabs = tiny_app.query_one(TabbedContent)
        await ask(pilot, "/nodes")
        assert tabs.active == "nodes" and tiny_app.focused is tiny_app.query_one("#nodes-table")
        await pilot.press("f2")
        await ask(pilot, "/TIMELINE")
        assert tabs.active == "timeline"
        await pilot.press("f1")
        assert tabs.active == "chat"
        assert "`/evidence`" in list(tiny_app.query(AnswerView))[-1].markdown
        await ask(pilot, "/help")
        assert list(tiny_app.query(AnswerView))[-1].label == "help"
        await ask(pilot, "/frobnicate")
        assert "Unknown command `/frobnicate`" in list(tiny_app.query(AnswerView))[-1].markdown
    assert parse_slash("why did it fail?") is None
    assert [parse_slash(f"/{p} now")[0].pane for p in ("evidence", "nodes", "timeline", "actions")] == [  # type: ignore[union-attr]
        "evidence", "nodes", "timeline", "actions"]


async def test_evidence_selection_shows_the_lines_around_it(tiny_app: DiagApp, tmp_path: Path) -> None:
    async with tiny_app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        shown = unwrapped(static_text(tiny_app, "#evidence-lines"))
        log = (tmp_path / "job-7" / "logs" / "node-102" / "rank-2.log").read_text().splitlines()
        assert f"> 9 │ {log[8]}" in shown
        assert f"  8 │ {log[7]}" in shown and f"  6 │ {log[5]}" in shown and "  5 │" not in shown
        await pilot.press("down", "down")  # e3: the markup-looking line, cited at line 10
        await settle(pilot)
        assert f">10 │ [rank2]: note {MARKUP}" in unwrapped(static_text(tiny_app, "#evidence-lines"))


async def test_telemetry_that_looks_like_markup_shows_literally(tiny_app: DiagApp) -> None:
    async with tiny_app.run_test(size=(119, 40)) as pilot:
        await settle(pilot)
        for key in ("f3", "f4", "f6"):
            await pilot.press(key)
            await settle(pilot)
            assert MARKUP in screen_text(tiny_app)
        await pilot.press("a")
        await pilot.pause()
        assert MARKUP in static_text(tiny_app, "#confirm-text")
        await pilot.press("escape")
        await settle(pilot)
        assert tiny_app.is_running  # nothing in the text ran an action (e.g. app.quit)


async def test_live_progress_while_analyzers_run(tmp_path: Path) -> None:
    release = threading.Event()
    cfg = settings_for(tmp_path / "state", tmp_path)
    with Bundle.open(write_tiny_bundle(tmp_path / "job-7")) as bundle:
        app = DiagApp(bundle, cfg, user="alice", proposer="bob", ledger=Ledger(tmp_path / "l.sqlite", ["alice"]),
                      incident_source=canned_source(release))
        async with app.run_test(size=(80, 24)) as pilot:
            try:
                for _ in range(50):
                    await pilot.pause(0.05)
                    if "node_health" in static_text(app, "#diagnosis-panel"):
                        break
                progress = static_text(app, "#diagnosis-panel")
                assert "✓ logs 0.5s" in progress and "◐ health" in progress and "running node_health" in progress
                assert "– flows" in progress  # absent from the bundle
                await ask(pilot, "/help", wait=False)  # the prompt works while the diagnosis runs
                await pilot.pause()
                assert list(app.query(AnswerView))[-1].label == "help"
            finally:
                release.set()
            await settle(pilot)
            panel = app.query_one(DiagnosisPanel)
            assert panel.has_class("-ready") and "node-102" in static_text(app, "#diagnosis-panel")
            assert "0.5s" not in static_text(app, "#diagnosis-panel")


def test_timeline_says_plainly_when_there_are_no_flows() -> None:
    chart, note = timeline_data(None, tiny_diagnosis(), flows_present=False)
    assert chart is None and note.startswith("no flows in this bundle")


def test_chart_fits_the_width_and_marks_slow_nodes() -> None:
    assert ratio_cell(None) == ("·", "dim")
    assert ratio_cell(1.0) == ("▂", "green") and ratio_cell(1.6)[1] == "bold red" and ratio_cell(9.0)[0] == "█"
    assert duration_bars([5.0] * 10, 4) == "▅" * 4  # typical iterations fill half the height
    assert duration_bars([5.0, 10.0], 8) == "▅█"
    for width in (60, 80, 160):
        rows = [line for line in chart_text(tiny_timeline(), width).plain.splitlines() if line.startswith("node-")]
        assert len(rows) == 4 and max(len(line) for line in rows) <= width
    row = next(line for line in chart_text(tiny_timeline(), 80).plain.splitlines() if line.startswith("node-102"))
    assert row.startswith("node-102 !") and row.endswith(" now 2.40x") and "▇" in row


def test_chat_command_is_registered_and_fails_cleanly_on_a_missing_bundle(tmp_path: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(build_app(), ["chat", "--help"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "--as" in shown.output and "--llm" in shown.output
    missing = runner.invoke(build_app(), ["chat", str(tmp_path / "nope")])
    assert missing.exit_code == 2
