"""The agent: tools built from tools/*.yaml, the chat model, the offline playbook, and a Session per incident.

The model only reads and proposes; it has no tool that executes anything.
"""


def __getattr__(name: str):
    if name in ("Session", "Answer", "diagnose_with_llm"):
        from diagagent.agent import session

        return getattr(session, name)
    raise AttributeError(name)
