"""The Textual TUI behind `diagagent chat`: one incident's diagnosis, chat, evidence, nodes, timeline and actions.

app.py wires a Session (in worker threads) and the Ledger to small pane widgets, one module each; tui.tcss styles them.
"""

from diagagent.apps.tui.app import DiagApp

__all__ = ["DiagApp"]
