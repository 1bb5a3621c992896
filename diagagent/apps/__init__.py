"""Where users meet diagagent: the CLI, the Textual TUI, the Slack bot.

Thin layers over Session, Diagnosis and Ledger.
"""
