"""SVG snapshots of the TUI's main screens (pytest-textual-snapshot), at 80x24, and at 80x16, 120x30 and 160x48.

They render the canned incident on the tiny bundle from test_tui.py, so they change only when the TUI does, not when
the analyzers do; nothing on screen depends on the clock or a path. Update with `--snapshot-update`, then look.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from diagagent.actions import Ledger
from diagagent.apps.tui import DiagApp
from diagagent.apps.tui.chat import ToolCallView
from diagagent.telemetry import Bundle
from tests.test_tui import canned_source, settings_for, settle, write_tiny_bundle

Snap = Callable[..., bool]


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[Callable[[], DiagApp]]:
    with ExitStack() as stack:
        def make() -> DiagApp:
            bundle = stack.enter_context(Bundle.open(write_tiny_bundle(tmp_path / "job-7")))
            return DiagApp(bundle, settings_for(tmp_path / "state", tmp_path), user="alice", proposer="bob",
                           ledger=Ledger(tmp_path / "ledger.sqlite", ["alice"]), incident_source=canned_source())

        yield make


def after(*keys: str) -> Callable[[Pilot], object]:
    """Wait for the diagnosis, stop the cursor blinking, press `keys`, and wait again."""

    async def run(pilot: Pilot) -> None:
        await settle(pilot)
        for field in pilot.app.query(Input):
            field.cursor_blink = False
        for key in keys:
            await pilot.press(key)
            await settle(pilot)

    return run


def test_chat_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    async def expand_a_tool_call(pilot: Pilot) -> None:
        await after()(pilot)  # type: ignore[misc]
        call = pilot.app.query(ToolCallView).first()
        call.collapsed = False
        await settle(pilot)
        # the expanded call scrolls itself into view with an animation (a run drew the scrollbar mid-way, at
        # scroll_y 23.5 of 24): let it finish, then put the call at the top
        await pilot.wait_for_animation()
        call.scroll_visible(top=True, animate=False)
        await pilot.wait_for_scheduled_animations()
        await pilot.wait_for_animation()
        await settle(pilot)

    assert snap_compare(make_app(), run_before=expand_a_tool_call)


def test_evidence_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), run_before=after("f3"))


def test_nodes_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), run_before=after("f4"))


def test_timeline_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), run_before=after("f5"))


def test_actions_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), run_before=after("f6"))


def test_confirm_approve_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), run_before=after("f6", "a"))


def test_wide_evidence_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    assert snap_compare(make_app(), terminal_size=(160, 48), run_before=after("f3", "down"))


def test_medium_evidence_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    """120 columns: the table above its details, its text column taking the room the others leave."""
    assert snap_compare(make_app(), terminal_size=(120, 30), run_before=after("f3"))


def test_reject_without_a_reason_screen(make_app: Callable[[], DiagApp], snap_compare: Snap) -> None:
    """A short terminal: Enter in the empty reason says why nothing happened, above the buttons."""
    assert snap_compare(make_app(), terminal_size=(80, 16), run_before=after("f6", "r", "enter"))
