"""The interfaces every agent and critic implements, the context they read, and the named exceptions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

from session.commands import canonical_command
from session.records import GameView, Judgement


@dataclass(frozen=True)
class AgentContext:
    """What an agent (and the critic) may know at the start of a turn. Built by managers.context."""

    turn: int
    view: GameView
    recent: tuple[tuple[str, str], ...] = ()
    """(command, game response) of the last turns, oldest first."""
    known_exits: dict[str, str] = field(default_factory=dict)
    """Direction -> destination room name, from the map."""
    untried_exits: tuple[str, ...] = ()
    failed_exits: tuple[str, ...] = ()
    room_text: str = ""
    """The game's description of this room when the player last arrived (or looked)."""
    tried_here: frozenset[str] = frozenset()
    """Normalised commands already run in this room (this episode)."""
    refused_here: frozenset[str] = frozenset()
    """Normalised commands that changed nothing the last time they ran in this room."""
    path_to_frontier: tuple[str, ...] = ()
    """Known exits leading to the nearest room with untried directions."""
    path_to_primary_frontier: tuple[str, ...] = ()
    """Known exits leading to the nearest room with an untried north/south/east/west/up/down."""
    objectives: tuple[str, ...] = ()
    loop_status: str = ""
    """Warnings and loop detections, rendered for the agent and the critic (empty when all is well)."""
    banned: tuple[str, ...] = ()
    """Commands the loop break forbids this turn."""
    feedback: tuple[str, ...] = ()
    """`command: reason` for each proposal rejected earlier in this turn."""
    rejected: tuple[str, ...] = ()
    """Commands rejected earlier in this turn, in canonical form (`session.commands.canonical_command`)."""

    def with_feedback(self, command: str, reason: str) -> AgentContext:
        return replace(
            self, feedback=self.feedback + (f"{command}: {reason}",), rejected=self.rejected + (canonical_command(command),)
        )


@runtime_checkable
class Agent(Protocol):
    kind: str
    forced: bool
    """Scripted agents are forced: their command always runs, the critic's verdict is only recorded."""

    def propose(self, context: AgentContext) -> str:
        """One validated game command."""
        ...


@runtime_checkable
class Critic(Protocol):
    kind: str

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        """Score in [0, 1] with a one-line reason."""
        ...


class AgentError(Exception):
    """Base of the named exceptions that steer the turn loop."""


class ScriptExhausted(AgentError):
    """A scripted agent has no command left."""


class InvalidReply(AgentError):
    """An LLM reply could not be turned into exactly one game command."""

    def __init__(self, kind: str, reply: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.reply = reply
        self.detail = detail


class LLMCallFailed(AgentError):
    """One LLM call failed after the client's own retries (timeout, rate limit, server or connection error)."""

    def __init__(self, role: str, category: str, detail: str):
        super().__init__(f"{role} call failed ({category}): {detail}")
        self.role = role
        self.category = category


class LLMUnavailable(AgentError):
    """Too many LLM calls failed in a row: the episode ends as `llm_unavailable`."""
