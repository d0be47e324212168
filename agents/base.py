"""The interfaces every agent and critic implements, and the named exceptions (the context they read is
session.context.AgentContext).

The protocols are subclassed explicitly (`class MyAgent(Agent)`): their optional behaviour then comes with a default
(a no-op, none, zero), so the orchestrator calls it on every agent and critic instead of asking which has it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from session.context import AgentContext, ObjectiveReview
from session.records import Ending, EpisodeOver, Judgement


@dataclass(frozen=True)
class Proposal:
    """One proposed game command, with what the agent says about it."""

    command: str
    """One validated game command ("" answers a "press a key" pause)."""
    thought: str = ""
    """Why (LLM agents in `thought` mode): recorded with the candidate and shown back to the agent, never sent to the
    game."""
    parse_failures: tuple[dict[str, Any], ...] = ()
    """Replies that failed validation on the way to this command (`{"kind", "reply"}`): recorded with the turn."""
    note: str = ""
    """A fact the agent asks to keep for the rest of the episode (LLM agents: the reply's `note`), shown back to it
    in every later prompt; never sent to the game."""


@runtime_checkable
class Agent(Protocol):
    kind: str
    """The kind it was registered as (agents.registry): summary.json and episode.json name it."""
    forced: bool = False
    """Scripted agents are forced: their command always runs, the critic's verdict is only recorded."""
    prompted: bool = False
    """The agent is shown the rendered prompt (an LLM): its context then carries what the game itself says here
    (`AgentContext.readings`, a few steps on a copy of the game a turn, which the other agents do without)."""

    def propose(self, context: AgentContext) -> Proposal:
        """One validated game command, with its thought and the replies that failed on the way. InvalidReply when
        no reply could be read (it carries those failures)."""
        ...

    def resume(self, turns: int) -> None:
        """The episode goes on after `turns` turns already played (`main.py --resume`): a scripted agent goes on
        from where it was. Default: nothing (an agent that reads only its context keeps no place)."""

    def memory(self) -> dict[str, Any] | None:
        """What the agent remembers beyond its context, as JSON: recorded with the turn when it changed, so that a
        resumed episode goes on as the uninterrupted one would. Default: None (it remembers nothing)."""
        return None

    def recall(self, memory: dict[str, Any]) -> None:
        """`main.py --resume`: take back the memory recorded last (`memory`'s answer). ValueError when it does not
        read. Default: nothing."""


@runtime_checkable
class Critic(Protocol):
    kind: str
    """The kind it was registered as (agents.registry)."""
    prompted: bool = False
    """The critic is shown the rendered prompt (an LLM): see `Agent.prompted`."""
    reviews_objectives: bool = False
    """It reviews the objectives in its verdicts when the context asks (`AgentContext.review_objectives`), handing
    each review over through `drain_review`: the objectives are then its to propose and complete. Otherwise they are
    read off the game state."""

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        """Score in [0, 1] with a one-line reason."""
        ...

    def drain_review(self) -> ObjectiveReview | None:
        """The objective review of its last verdict that gave one, once (then None). Default: none."""
        return None

    def synthesize(self, facts: list[str]) -> list[tuple[str, int]] | None:
        """At the episode's end, strategic notes for the next episodes as (note, turn) pairs, from this episode's
        facts (the caller keeps only those the records back). LLMCallFailed when its call fails. Default: None, it
        writes no notes."""
        return None

    def unreadable_verdicts(self) -> Counter:
        """Verdicts it could not read this episode: `retried` (asked once more) and `fallback` (scored offline);
        summary.json's `critic_retries` and `critic_fallbacks`. Default: none (a critic that reads no model)."""
        return Counter()


class AgentError(Exception):
    """Base of the named exceptions that steer the turn loop."""


class ScriptExhausted(AgentError, EpisodeOver):
    """A scripted agent has no command left: the episode ends as `script_exhausted`."""

    ending = Ending.SCRIPT_EXHAUSTED


class InvalidReply(AgentError):
    """An LLM reply could not be turned into exactly one game command."""

    def __init__(self, kind: str, reply: str, detail: str, parse_failures: tuple[dict[str, Any], ...] = ()):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.reply = reply
        self.detail = detail
        self.parse_failures = parse_failures
        """An agent that gave up on the turn: every reply that failed on the way (recorded with the turn)."""


class LLMCallFailed(AgentError):
    """One LLM call failed after the client's own retries (timeout, rate limit, server or connection error)."""

    def __init__(self, role: str, category: str, detail: str):
        super().__init__(f"{role} call failed ({category}): {detail}")
        self.role = role
        self.category = category


class LLMUnavailable(AgentError, EpisodeOver):
    """Too many LLM calls failed in a row: the episode ends as `llm_unavailable`."""

    ending = Ending.LLM_UNAVAILABLE
