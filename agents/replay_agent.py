"""Scripted agents: replay a list of commands (a file, or the game's own walkthrough). Forced: they always run.

An empty command is a step too: Jericho's walkthroughs hold blank "press a key" steps, and skipping them knocks
games such as tryst205 and yomomma off their walkthrough.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent, Proposal, ScriptExhausted
from session.commands import CommandFileError, read_command_file
from session.config import ConfigError
from session.context import AgentContext


class ReplayAgent(Agent):
    forced = True
    prompted = False

    def __init__(self, commands: list[str], kind: str = "replay"):
        self.kind = kind
        self.commands = [c.strip() for c in commands]
        self.position = 0

    @classmethod
    def from_file(cls, path: str | Path) -> ReplayAgent:
        """The commands of an `--actions` file (session.commands.read_command_file); a ConfigError naming the line
        when it cannot be read."""
        try:
            return cls(read_command_file(path), kind="replay")
        except CommandFileError as exc:
            raise ConfigError(f"--actions {exc}") from None

    def resume(self, turns: int) -> None:
        """The first `turns` commands have run already."""
        self.position += turns

    def propose(self, context: AgentContext) -> Proposal:
        if self.position >= len(self.commands):
            raise ScriptExhausted(f"{self.kind}: all {len(self.commands)} commands have run")
        command = self.commands[self.position]
        self.position += 1
        return Proposal(command)
