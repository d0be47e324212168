"""The offline critic must not stand in the way of an agent that knows what to do: no penalty for waiting, or for a
command that merely changed nothing (the object pre-check: tests/agents/test_precheck.py)."""

from __future__ import annotations

from agents.offline_critic import OfflineCritic
from session.context import AgentContext, Guidance
from session.records import GameView


def context(**fields) -> AgentContext:
    view = GameView(7, "Dam", 0, 1, (), (), "hash", "You are on the dam.")
    return AgentContext(turn=2, view=view, **fields)


def test_waiting_again_is_never_penalised():
    judge = OfflineCritic().evaluate
    assert judge("wait", context(refused_here=frozenset({"wait"}))).score >= 0.5
    assert judge("z", context(refused_here=frozenset({"z"}))).score >= 0.5


def test_only_what_the_game_refused_is_penalised():
    judge = OfflineCritic().evaluate
    assert judge("push button", context(refused_here=frozenset({"push button"}))).score >= 0.5  # no visible change
    assert judge("push button", context(failed_here=frozenset({"push button"}))).score < 0.5  # "You can't."
    assert judge("north", context(failed_exits=("north",))).score >= 0.5  # failed once, the world changed since
    assert judge("north", context(failed_exits=("north",), failed_here=frozenset({"north"}))).score < 0.5


def test_what_scored_here_before_is_welcome():
    known = Guidance(known_here=("turn bolt",))
    assert OfflineCritic().evaluate("turn bolt", context(knowledge=known)).score >= 0.9
