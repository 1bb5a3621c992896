"""The TUI at 80, 120 and 160 columns (issue 18, item 12): tables fit, details wrap, dialogs keep what is typed.

Pilot on the tiny bundle with the canned incident (tests/test_tui.py), so only the TUI is under test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input

from diagagent.actions import Ledger
from diagagent.apps.tui import DiagApp
from diagagent.apps.tui.confirm import ConfirmDecision
from diagagent.telemetry import Bundle
from tests.test_tui import (
    canned_source,
    screen_text,
    settings_for,
    settle,
    static_text,
    unwrapped,
    write_tiny_bundle,
)


@pytest.fixture
def app_as(tmp_path: Path) -> Iterator:
    with Bundle.open(write_tiny_bundle(tmp_path / "job-7")) as bundle:
        def make(user: str = "alice") -> DiagApp:
            return DiagApp(bundle, settings_for(tmp_path / "state", tmp_path), user=user, proposer="bob",
                           ledger=Ledger(tmp_path / f"{user}.sqlite", ["alice"]), incident_source=canned_source())

        yield make


def column_width(table: DataTable, name: str) -> int:
    return next(c.get_render_width(table) for c in table.columns.values() if str(c.label) == name)


@pytest.mark.parametrize("size", [(80, 24), (120, 30), (160, 40)])
async def test_tables_and_details_fit_without_sideways_scrolling(app_as, size: tuple[int, int]) -> None:
    app = app_as()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for key, name in (("f3", "evidence"), ("f4", "nodes"), ("f6", "actions")):
            await pilot.press(key)
            await settle(pilot)
            table = app.query_one(f"#{name}-table", DataTable)
            detail = app.query_one(f"#{name}-detail", VerticalScroll)
            # nothing wider than its pane: no horizontal scrollbar (its glyphs showed mid-row at 80x24)
            assert table.virtual_size.width <= table.size.width, (name, size)
            assert not table.show_horizontal_scrollbar and not detail.show_horizontal_scrollbar, (name, size)
            assert detail.virtual_size.width <= detail.scrollable_content_region.width, (name, size)
        table = app.query_one("#evidence-table", DataTable)
        # the text column gets the room the others leave (it was ~8 characters at 120 columns)
        assert column_width(table, "text") >= {80: 30, 120: 60, 160: 50}[size[0]]
        await pilot.press("f3")
        await settle(pilot)
        shown = static_text(app, "#evidence-lines")
        room = app.query_one("#evidence-lines").content_region.width
        assert max(len(line) for line in shown.splitlines()) <= room  # wrapped, not cut at the pane's edge
        assert "uncorrectable ECC error encountered" in unwrapped(shown)


async def test_wide_layout_starts_at_160_columns(app_as) -> None:
    app = app_as()
    async with app.run_test(size=(120, 30)) as pilot:
        await settle(pilot)
        assert not app.screen.has_class("-wide")
    app = app_as()
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(pilot)
        assert app.screen.has_class("-wide")


async def test_text_typed_after_shift_tab_goes_into_the_reason(app_as) -> None:
    app = app_as()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f6", "a")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecision) and app.focused is app.screen.query_one("#cancel")
        await pilot.press("tab")  # from Cancel, Tab wraps round to the reason
        assert app.focused is app.screen.query_one("#decision-reason")
        await pilot.press("shift+tab", "shift+tab")  # back past Cancel to the Approve button
        assert app.focused is app.screen.query_one("#confirm")
        await pilot.press(*"disk ok")
        await pilot.pause()
        reason = app.screen.query_one("#decision-reason", Input)
        assert reason.value == "disk ok" and reason.has_focus
        assert isinstance(app.screen, ConfirmDecision)  # typing decided nothing


async def test_reject_with_an_empty_reason_says_so_on_screen(app_as) -> None:
    app = app_as()
    async with app.run_test(size=(80, 16)) as pilot:  # a short terminal: the body gives way, not the error
        await settle(pilot)
        await pilot.press("f6", "r")
        await pilot.pause()
        await pilot.press("enter")  # Enter in the empty reason
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDecision)
        text = screen_text(app)
        assert "A rejection needs a reason" in text and "Cancel" in text
        assert app.focused is app.screen.query_one("#decision-reason")
        await pilot.press(*"bad")
        await pilot.pause()
        assert "A rejection needs a reason" not in screen_text(app)


async def test_the_first_refusal_shows_its_red_line_uncovered(app_as) -> None:
    app = app_as("mallory")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f6", "a")
        await pilot.pause()
        await pilot.click("#confirm")
        await settle(pilot)
        assert "Approval refused: mallory is not an approver" in screen_text(app)
        assert not app._notifications  # no toast over the bottom rows, where the status line is
