"""The offline agent's rules, without Jericho: fight a foe that bars the way, but not one the game passes over in
silence or said is not in sight (zork1's thief sits hidden in the object tree); loads, treasures, known sources."""

from __future__ import annotations

from dataclasses import replace

from agents.offline_agent import OfflineAgent
from session.context import AgentContext, Guidance
from session.jericho_session import JerichoSession
from session.records import GameObject, GameView
from tests.helpers import make_config, run_episode, story_file

SWORD, THIEF = GameObject(1, "sword"), GameObject(2, "thief")


def context(text: str, recent: tuple = (), room: int = 7) -> AgentContext:
    view = GameView(room, "Dam Lobby", 0, 1, (SWORD,), (THIEF,), "hash", text)
    return AgentContext(turn=len(recent) + 1, view=view, recent=recent)


BARRED = "The thief blocks the way north, fingering his stiletto."


def test_a_foe_that_bars_the_way_is_attacked_with_the_best_weapon():
    assert OfflineAgent().propose(context(BARRED, (("north", BARRED),))).command == "kill thief with sword"


def test_a_foe_the_game_passes_over_in_silence_is_left_alone():
    """A fight can kill: a foe that neither bars a move nor fights back is no reason to start one."""
    assert (
        not OfflineAgent().propose(context("A seedy-looking individual with a large bag.")).command.startswith("kill")
    )


def test_a_fight_once_begun_goes_on_until_the_player_leaves():
    agent = OfflineAgent()
    assert agent.propose(context(BARRED, (("north", BARRED),))).command == "kill thief with sword"
    missed = (("north", BARRED), ("kill thief with sword", "The thief parries."))
    assert agent.propose(context("The thief parries.", missed)).command == "kill thief with sword"


def test_a_foe_the_game_says_is_not_in_sight_is_left_alone_until_the_player_moves():
    agent = OfflineAgent()
    missed = (("kill thief with sword", "You can't see any thief here!"),)
    assert agent.propose(context("You can't see any thief here!", missed)).command != "kill thief with sword"
    assert agent.propose(context("Taken.", missed + (("take bag", "Taken."),))).command != "kill thief with sword"
    barred = missed + (("north", BARRED),)
    assert agent.propose(context(BARRED, barred, room=8)).command == "kill thief with sword"  # another room: seen anew


def test_a_foe_earlier_episodes_say_not_to_fight_is_left_alone_whatever_the_weapon():
    axe = GameObject(3, "axe")
    view = GameView(7, "Dam Lobby", 0, 1, (axe,), (THIEF,), "hash", "A seedy-looking individual.")
    told = AgentContext(turn=1, view=view, knowledge=Guidance(avoid_here=("attack thief with sword",)))
    assert not OfflineAgent().propose(told).command.startswith("kill thief")


def proposals(agent: OfflineAgent, context: AgentContext, count: int) -> list[str]:
    """The agent's first `count` proposals of one turn, each rejected in turn by the critic."""
    made = []
    for _ in range(count):
        made.append(agent.propose(context).command)
        context = context.with_feedback(made[-1], "no")
    return made


def test_one_light_and_one_weapon_are_enough():
    """A second weapon or lamp only fills the hands a treasure needs: it is taken once, to see whether taking it
    scores (zork1's torch is a light and a treasure), put down again when it does not, and never taken again."""
    lamp, knife = GameObject(3, "brass lantern"), GameObject(4, "rusty knife")
    view = GameView(7, "Maze", 0, 1, (SWORD, lamp), (knife,), "hash", "A maze.")
    agent = OfflineAgent()
    assert agent.propose(AgentContext(turn=1, view=view)).command == "take rusty knife"
    held = GameView(7, "Maze", 0, 2, (knife, SWORD, lamp), (), "hash2", "Taken.")
    assert (
        agent.propose(AgentContext(turn=2, view=held, recent=(("take rusty knife", "Taken."),))).command == "drop knife"
    )
    dropped = GameView(7, "Maze", 0, 3, (SWORD, lamp), (knife,), "hash3", "Dropped.")
    later = AgentContext(turn=3, view=dropped, recent=(("take rusty knife", "Taken."), ("drop knife", "Dropped.")))
    assert not any(p.startswith("take") for p in proposals(agent, later, 6))


def test_making_room_never_drops_a_treasure():
    """The load is too heavy: a second weapon goes first, then plain things; never the item whose taking scored in an
    earlier episode, nor the one light and the best weapon."""
    held = tuple(
        GameObject(n, name)
        for n, name in ((4, "manual"), (3, "painting"), (5, "axe"), (1, "sword"), (6, "brass lantern"))
    )
    view = GameView(7, "Studio", 4, 9, held, (), "hash", "Your load is too heavy.")
    context = AgentContext(
        turn=9,
        view=view,
        recent=(("take wrench", "Your load is too heavy."),),
        knowledge=Guidance(valuables=("painting",)),
    )
    made = proposals(OfflineAgent(), context, 3)
    assert made[:2] == ["drop axe", "drop manual"], made
    assert not {"drop painting", "drop sword", "drop lantern", "drop brass lantern"} & set(made)


def test_a_way_refused_for_the_load_is_taken_again_with_only_the_light_and_the_treasures():
    """A chimney lets only a light load through: everything but the lamp and the treasure goes, then the move again."""
    held = tuple(
        GameObject(n, name) for n, name in ((4, "manual"), (3, "painting"), (1, "sword"), (6, "brass lantern"))
    )
    view = GameView(7, "Studio", 4, 9, held, (), "hash", "You can't get up there with what you're carrying.")
    context = AgentContext(
        turn=9,
        view=view,
        recent=(("up", "You can't get up there with what you're carrying."),),
        knowledge=Guidance(valuables=("painting",)),
    )
    agent = OfflineAgent()
    assert proposals(agent, context, 2) == ["drop manual", "drop sword"]
    dropped = GameView(7, "Studio", 4, 10, held[1:2] + held[3:], (), "hash", "Dropped.")
    assert agent.propose(AgentContext(turn=10, view=dropped, recent=(("drop sword", "Dropped."),))).command == "up"


def test_a_treasure_inside_a_carried_container_is_taken_out_once():
    """The nest was taken with the egg in it: taking the egg on its own is what scores; it is tried once."""
    view = GameView(
        7,
        "Up a Tree",
        0,
        3,
        (GameObject(8, "bird's nest"),),
        (),
        "hash",
        "Taken.",
        held_inside=(GameObject(9, "jewel-encrusted egg"),),
    )
    agent = OfflineAgent()
    assert agent.propose(AgentContext(turn=3, view=view)).command == "take egg"
    assert agent.propose(AgentContext(turn=4, view=view)).command != "take egg"


def test_an_earlier_score_source_is_tried_once_until_the_score_rises():
    """`down` scored here in an earlier episode; today the trap door is shut: one try, not one per turn."""
    view = GameView(7, "Living Room", 10, 5, (), (), "hash", "Living Room")
    agent = OfflineAgent()
    known = Guidance(known_here=("down",))
    assert agent.propose(AgentContext(turn=5, view=view, knowledge=known)).command == "down"
    shut = GameView(7, "Living Room", 10, 6, (), (), "hash2", "The trap door is closed.")
    assert (
        agent.propose(AgentContext(turn=6, view=shut, recent=(("down", shut.text),), knowledge=known)).command != "down"
    )


def test_unarmed_before_a_foe_the_player_backs_away():
    view = GameView(7, "The Troll Room", 0, 5, (), (GameObject(2, "troll"),), "hash", "A nasty troll blocks the way.")
    context = AgentContext(turn=5, view=view, recent=(("north", "The Troll Room"),))
    assert OfflineAgent().propose(context).command == "south"


# -- every idea in a room spent: leave ------------------------------------------------------------------------------
def offline_agent(story) -> OfflineAgent:
    """The offline agent as `main.py` builds it: with the game's dictionary."""
    session = JerichoSession(story)
    words = frozenset(w.word for w in session.dictionary())
    return OfflineAgent(words, session.dictionary_word_length)


def test_spent_in_a_room_the_agent_leaves_rather_than_looking_again(tmp_path):
    """Once every idea in a room is spent (karn's Storage Room, from turn 64 of seed 1), the agent goes on by a way
    it knows rather than typing `look` until the loop break ends the episode, and it never looks or waits in a room
    it has left by a move before."""
    story = story_file("karn.z5")
    config = make_config(tmp_path, gameplay={"seed": 1, "max_turns_per_episode": 80})
    records = run_episode(story, config, offline_agent(story)).records
    [spent] = [r for r in records if r["room_name_before"] == "Storage Room" and r["command"] == "out"]
    after = records[spent["turn"]]  # the turn after every untried way out of the Storage Room failed
    assert (after["room_name_before"], after["command"], after["room_name_after"]) == (
        "Storage Room",
        "south",
        "Corridor",
    )
    for record in records:
        if record["command"] in ("look", "wait"):
            left = [
                r
                for r in records[: record["turn"] - 1]
                if r["room_id_before"] == record["room_id_before"] != r["room_id_after"]
            ]
            assert not left, (record["turn"], record["room_name_before"], [r["command"] for r in left])


def test_a_direction_is_spelt_as_the_game_knows_it():
    """enchanter's dictionary has `ne` but not `northeast`: the diagonal is proposed as `ne` (the game answered `I
    don't know the word "northeast"` to each diagonal, and the pre-check turned every one down)."""
    agent = offline_agent(story_file("enchanter.z3"))
    view = GameView(7, "Fork", 0, 5, (), (), "hash", "Fork")
    context = AgentContext(turn=5, view=view, untried_exits=("northeast",), known_exits={"west": "Long Road"})
    assert agent.propose(context).command == "ne"
    assert offline_agent(story_file("zork1.z5")).propose(context).command == "northeast"


# -- after a rewind: second thoughts ----------------------------------------------------------------------------------
def spent_context(text: str, rewinds: int, **fields) -> AgentContext:
    """A room whose first ideas are all spent: the door was taken and opened, every way out but the one back failed."""
    door, rope = GameObject(3, "wooden door"), GameObject(4, "rope")
    view = GameView(7, "Secret Entrance", 0, 5, (rope,), (door,), "hash", text)
    return AgentContext(
        turn=5,
        view=view,
        room_text="Secret Entrance. A heavy wooden door leads southwest.",
        visible_objects=("wooden door",),
        tried_here=frozenset({"take wooden door", "open wooden door", "open door"}),
        known_exits={"north": "Cave"},
        failed_exits=("southwest",),
        rewinds=rewinds,
        **fields,
    )


def test_before_a_rewind_a_spent_room_is_left():
    assert OfflineAgent().propose(spent_context("Secret Entrance", rewinds=0)).command == "north"


def test_after_a_rewind_the_agent_tries_what_a_stuck_player_tries_next():
    """The rewind says its first ideas led nowhere: it gets up, tries again a way the description names that was
    refused before the world here changed, looks at everything in sight and held, then handles what is in sight,
    verb by verb; the way out comes after."""
    made = proposals(OfflineAgent(), spent_context("Secret Entrance", rewinds=1), 9)
    assert made == [
        "stand up",
        "southwest",
        "examine door",
        "examine rope",
        "push door",
        "search door",
        "pull door",
        "touch door",
        "look in door",
    ]
    refused_still = spent_context("Secret Entrance", rewinds=1, failed_here=frozenset({"southwest"}))
    assert "southwest" not in proposals(OfflineAgent(), refused_still, 4)


def test_after_a_rewind_a_yes_or_no_question_is_answered():
    asked = spent_context("Do you want to go on?\n(Please type YES or NO.)", rewinds=1)
    assert proposals(OfflineAgent(), asked, 2) == ["yes", "no"]
    assert OfflineAgent().propose(spent_context("(Please type YES or NO.)", rewinds=0)).command != "yes"


def test_second_thoughts_use_only_words_the_game_knows_and_each_once_in_a_room():
    agent = OfflineAgent(frozenset({"examine", "door", "rope", "pull", "stand", "up"}), word_length=9)
    context = spent_context("Secret Entrance", rewinds=1, failed_here=frozenset({"southwest"}))
    assert proposals(agent, context, 4) == ["stand up", "examine door", "examine rope", "pull door"]
    tried = replace(context, tried_here=context.tried_here | {"stand up", "examine door", "examine rope"})
    assert agent.propose(tried).command == "pull door"
