"""The Slack bot (`diagagent slack`): @mentions, DMs and `/diagagent` answered in threads, with approval buttons.

`build_app(settings, client=None)` gives the slack-bolt App; `make_http_server` serves it in HTTP mode.
"""

from diagagent.apps.slack.app import build_app
from diagagent.apps.slack.server import make_http_server

__all__ = ["build_app", "make_http_server"]
