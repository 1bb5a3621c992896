"""`TablePane`: a table of rows and the highlighted row's details below it (beside it on a wide screen).

The evidence, nodes and actions panes are TablePanes; each says what its columns are and what a row's details read.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

CELL_PADDING = 1  # DataTable's default, each side of a cell
MIN_FLEX = 12  # the flexible column never gets narrower than this
Row = tuple[str, tuple[Text, ...]]  # key, cells


def fit_cell(cell: Text, width: int, *, keep_end: bool = False) -> Text:
    """`cell` on one line within `width` cells, cut with an ellipsis (at the start when `keep_end`)."""
    text = cell.copy()
    text.plain = " ".join(text.plain.split("\n"))
    if cell_len(text.plain) <= width:
        return text
    if keep_end:
        cut = text.plain
        while cut and cell_len(cut) > width - 1:
            cut = cut[1:]
        return Text.assemble("…", Text(cut, style=text.style))
    text.truncate(width, overflow="ellipsis")
    return text


class TablePane(Vertical):
    """Subclasses set COLUMNS, FLEX and PLACEHOLDER and implement `row_highlighted(key)`.

    The table always fits its pane: FLEX takes the width the other columns leave, every column is cut with an
    ellipsis where it is too long (CAPS bounds the others; KEEP_END columns keep their end, e.g. `file:line`),
    and the full text is in the details. Rows are laid out again when the pane's width changes.
    """

    COLUMNS: ClassVar[tuple[str, ...]] = ()
    FLEX: ClassVar[str] = ""
    CAPS: ClassVar[dict[str, int]] = {}
    KEEP_END: ClassVar[frozenset[str]] = frozenset()
    PLACEHOLDER: ClassVar[str] = ""

    def __init__(self, name: str) -> None:
        super().__init__(id=f"{name}-pane", classes="table-pane")
        self.pane_name = name
        self.rows: list[Row] = []
        self._laid_out_for = -1

    def compose(self) -> ComposeResult:
        table: DataTable[Text] = DataTable(id=f"{self.pane_name}-table", cursor_type="row", zebra_stripes=True,
                                           cell_padding=CELL_PADDING)
        table.add_columns(*self.COLUMNS)
        yield table
        with VerticalScroll(id=f"{self.pane_name}-detail", classes="pane-detail"):
            yield Static(Text(self.PLACEHOLDER, style="dim"), id=f"{self.pane_name}-lines")

    @property
    def table(self) -> DataTable[Text]:
        return self.query_one(f"#{self.pane_name}-table", DataTable)

    @property
    def detail_width(self) -> int:
        """Cells a line of the details may take (0 while the pane is not shown)."""
        return self.query_one(f"#{self.pane_name}-lines", Static).content_region.width

    def show_detail(self, text: Text) -> None:
        self.query_one(f"#{self.pane_name}-lines", Static).update(text)

    def set_rows(self, rows: list[Row]) -> None:
        """Replace the rows (cells uncut: they are fitted to the width here), keeping the cursor's row."""
        self.rows = rows
        self._layout()

    def column_widths(self, width: int) -> list[int]:
        """Each column's width in cells for a table `width` cells wide (its vertical scrollbar included)."""
        natural = [max([cell_len(c)] + [cell_len(r[1][i].plain) for r in self.rows])
                   for i, c in enumerate(self.COLUMNS)]
        widths = [min(n, self.CAPS.get(c, n)) for c, n in zip(self.COLUMNS, natural, strict=True)]
        flex = self.COLUMNS.index(self.FLEX)
        used = sum(w for i, w in enumerate(widths) if i != flex) + 2 * CELL_PADDING * len(widths)
        widths[flex] = max(MIN_FLEX, width - 1 - used)  # 1: the vertical scrollbar
        return widths

    def _layout(self) -> None:
        table = self.table
        width = table.size.width
        keep = max(table.cursor_row, 0)
        table.clear(columns=True)
        widths = self.column_widths(width) if width else [None] * len(self.COLUMNS)
        for name, w in zip(self.COLUMNS, widths, strict=True):
            table.add_column(name, width=w, key=name)
        for key, cells in self.rows:
            if width:
                cells = tuple(fit_cell(c, w or 0, keep_end=name in self.KEEP_END)
                              for name, c, w in zip(self.COLUMNS, cells, widths, strict=True))
            table.add_row(*cells, key=key)
        if self.rows:
            table.move_cursor(row=min(keep, len(self.rows) - 1))
        self._laid_out_for = width

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._relayout)

    def _relayout(self) -> None:
        if self.table.size.width and self.table.size.width != self._laid_out_for:
            self._layout()
            self.relayout_detail()

    def relayout_detail(self) -> None:
        """Draw the highlighted row's details again (their width changed); subclasses that wrap override it."""

    @on(DataTable.RowHighlighted)
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self.table and event.row_key.value is not None:
            self.row_highlighted(str(event.row_key.value))

    def row_highlighted(self, key: str) -> None:
        raise NotImplementedError


__all__ = ["TablePane", "fit_cell"]
