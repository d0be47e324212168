"""Scripted agents: replay a list of commands (a file, or the game's own walkthrough). Forced: they always run.

An empty command is a step too: Jericho's walkthroughs hold blank "press a key" steps, and skipping them knocks
games such as tryst205 and yomomma off their walkthrough.
"""

from __future__ import annotations

from pathlib import Path

from agents.base import Agent, Proposal, ScriptExhausted
from session.commands import why_invalid
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
        """One command per line; blank lines and `#` comments are layout, not steps. A file that is not UTF-8
        text, or a line that is no command (control characters, a NUL byte, too long), is a ConfigError naming the
        line: such text must never reach the emulator. Interpreter commands (`save`...) load, and are refused when
        their turn comes."""
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read --actions {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"--actions {path}: not UTF-8 text (byte {exc.start})") from None
        commands = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            problem = why_invalid(line.strip())
            if problem is not None:
                raise ConfigError(f"--actions {path}, line {number}: {problem}")
            commands.append(line)
        return cls(commands, kind="replay")

    def resume(self, turns: int) -> None:
        """The first `turns` commands have run already."""
        self.position += turns

    def propose(self, context: AgentContext) -> Proposal:
        if self.position >= len(self.commands):
            raise ScriptExhausted(f"{self.kind}: all {len(self.commands)} commands have run")
        command = self.commands[self.position]
        self.position += 1
        return Proposal(command)
