"""The offline agent's fighting rule, without Jericho: attack a foe in the room, but not one the game said is not in
sight (zork1's thief sits hidden in the object tree)."""

from __future__ import annotations

from agents.offline_agent import OfflineAgent
from session.context import AgentContext
from session.records import GameObject, GameView

SWORD, THIEF = GameObject(1, "sword"), GameObject(2, "thief")


def context(text: str, recent: tuple = (), room: int = 7) -> AgentContext:
    view = GameView(room, "Dam Lobby", 0, 1, (SWORD,), (THIEF,), "hash", text)
    return AgentContext(turn=len(recent) + 1, view=view, recent=recent)


def test_a_foe_in_the_room_is_attacked_with_the_best_weapon():
    assert OfflineAgent().propose(context("A seedy-looking individual with a large bag.")) == "kill thief with sword"


def test_a_foe_the_game_says_is_not_in_sight_is_left_alone_until_the_player_moves():
    agent = OfflineAgent()
    missed = (("kill thief with sword", "You can't see any thief here!"),)
    assert agent.propose(context("You can't see any thief here!", missed)) != "kill thief with sword"
    assert agent.propose(context("Taken.", missed + (("take bag", "Taken."),))) != "kill thief with sword"
    assert agent.propose(context("Dam Lobby", missed, room=8)) == "kill thief with sword"  # another room: seen anew
