"""`TablePane`: a table of rows and the highlighted row's details below it (beside it on a wide screen).

The evidence, nodes and actions panes are TablePanes; each says what its columns are and what a row's details read.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static


class TablePane(Vertical):
    """Subclasses set COLUMNS and PLACEHOLDER and implement `row_highlighted(key)`."""

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    PLACEHOLDER: ClassVar[str] = ""

    def __init__(self, name: str) -> None:
        super().__init__(id=f"{name}-pane", classes="table-pane")
        self.pane_name = name

    def compose(self) -> ComposeResult:
        table: DataTable[Text] = DataTable(id=f"{self.pane_name}-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*self.COLUMNS)
        yield table
        with VerticalScroll(id=f"{self.pane_name}-detail", classes="pane-detail"):
            yield Static(Text(self.PLACEHOLDER, style="dim"), id=f"{self.pane_name}-lines")

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one(f"#{self.pane_name}-table", DataTable)

    def show_detail(self, text: Text) -> None:
        self.query_one(f"#{self.pane_name}-lines", Static).update(text)

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.table and event.row_key.value is not None:
            self.row_highlighted(str(event.row_key.value))

    def row_highlighted(self, key: str) -> None:
        raise NotImplementedError


__all__ = ["TablePane"]
