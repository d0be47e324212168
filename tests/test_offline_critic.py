"""The offline critic and the object pre-check must not stand in the way of an agent that knows what to do
(issue 12): no penalty for waiting, for a command that merely changed nothing, or for adjectives and topics."""

from __future__ import annotations

from agents.offline_critic import OfflineCritic
from agents.precheck import head_nouns
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


def test_the_precheck_reads_head_nouns_only():
    assert head_nouns("gray rod".split()) == ["rod"]
    assert head_nouns("clown mask".split()) == ["mask"]
    assert head_nouns("card to alan".split()) == ["card", "alan"]
    assert head_nouns("teapot and gold key".split()) == ["teapot", "key"]
    assert head_nouns("moss in nest".split()) == ["moss", "nest"]


def test_the_precheck_passes_a_destination_but_not_a_thing_to_take(rom_path):
    """The lamp is in the Living Room: `take lamp` at West of House is turned away, `walk to the lamp` is not (what
    follows a travel verb's `to` is somewhere else by definition: sherlock's `drive to the monument`)."""
    from agents.precheck import ObjectPrecheck
    from session.jericho_session import JerichoSession

    session = JerichoSession(rom_path)
    session.reset()
    precheck = ObjectPrecheck(session)
    assert precheck.check("take lamp").score == 0.0
    assert precheck.check("walk to the lamp") is None
    assert precheck.check("drive lamp to the house").score == 0.0  # what is driven must be at hand
    session.close()
