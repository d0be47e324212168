"""The interfaces every agent and critic implements, and the named exceptions (the context they read is
session.context.AgentContext)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from session.context import AgentContext
from session.records import Judgement


@runtime_checkable
class Agent(Protocol):
    kind: str
    forced: bool
    """Scripted agents are forced: their command always runs, the critic's verdict is only recorded."""
    prompted: bool
    """The agent is shown the rendered prompt (an LLM): its context then carries what the game itself says here
    (`AgentContext.readings`, a few steps on a copy of the game a turn, which the other agents do without)."""

    def propose(self, context: AgentContext) -> str:
        """One validated game command."""
        ...


@runtime_checkable
class Critic(Protocol):
    kind: str
    prompted: bool
    """The critic is shown the rendered prompt (an LLM): see `Agent.prompted`."""

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
