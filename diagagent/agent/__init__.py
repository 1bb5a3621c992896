"""The agent: tools built from tools/*.yaml, the chat model, the offline playbook, and a Session per incident.

The model only reads and proposes; it has no tool that executes anything.
"""
