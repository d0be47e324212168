"""Scripted agents: replay a list of commands (a file, or the game's own walkthrough). Forced: they always run.

An empty command is a step too: Jericho's walkthroughs hold blank "press a key" steps, and skipping them knocks
games such as tryst205 and yomomma off their walkthrough.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import AgentContext, ScriptExhausted


class ReplayAgent:
    forced = True

    def __init__(self, commands: list[str], kind: str = "replay"):
        self.kind = kind
        self.commands = [c.strip() for c in commands]
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayAgent:
        """One command per line; blank lines and `#` comments are layout, not steps."""
        lines = Path(path).read_text().splitlines()
        return cls([line for line in lines if line.strip() and not line.lstrip().startswith("#")], kind="replay")

    def propose(self, context: AgentContext) -> str:
        if self.position >= len(self.commands):
            raise ScriptExhausted(f"{self.kind}: all {len(self.commands)} commands have run")
        command = self.commands[self.position]
        self.position += 1
        return command
