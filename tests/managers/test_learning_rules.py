"""What later episodes take from earlier ones' troubles. A way refused for the load is no dead end; a valuable put down
to get through is fetched again, one the way refused by name is not; valuables lost to a command make it one to avoid
there; what killed or robbed the player at two places roams, and is left rather than handled. Units on synthetic records
(the five-episode zork1 curve is benchmarks.evaluate --learning's)."""

from __future__ import annotations

from agents.offline_agent import OfflineAgent
from managers.knowledge import Death, Knowledge, KnowledgeStore, Loss, ScoreEvent
from session.context import AgentContext, Guidance
from session.outcomes import burdened, load_named
from session.records import GameObject, GameView
from tests.factories import turn_record

MD5 = "md5"
CHIMNEY = "You can't get up there with what you're carrying."
COFFIN_REFUSED = "You haven't a prayer of getting the coffin down there.\nThe lamp appears a bit dimmer."
LAMP, PAINTING, COFFIN, SWORD = (
    GameObject(1, "brass lantern"),
    GameObject(2, "painting"),
    GameObject(3, "gold coffin"),
    GameObject(4, "sword"),
)


def ran(turn: int, command: str, before: int, after: int | None = None, held=((), ()), response: str = "", **fields):
    return turn_record(
        turn,
        command=command,
        room_id_before=before,
        room_id_after=before if after is None else after,
        room_name_before=f"room {before}",
        room_name_after=f"room {before if after is None else after}",
        inventory_before=held[0],
        inventory_after=held[1],
        response=response,
        world_hash_after=f"h{turn}",
        **fields,
    )


def view(room: int, held=(), here=()) -> GameView:
    return GameView(room, f"room {room}", 0, 0, tuple(held), tuple(here), "hash", "")


def end(knowledge: Knowledge, episode: str = "e2") -> KnowledgeStore:
    return knowledge.merge({"episode_id": episode, "turns": 9, "best_score": 5, "termination_reason": "max_turns"})


def painting_store() -> KnowledgeStore:
    """Taking the painting (room 3) and putting it in the case (room 1) scored in an earlier episode."""
    store = KnowledgeStore(game="g", story_md5=MD5)
    store.score_events = [
        ScoreEvent(room_id=3, room_name="Gallery", command="take painting", points=4, episode="e1", turn=3),
        ScoreEvent(room_id=1, room_name="Living Room", command="put painting in case", points=6, episode="e1", turn=9),
    ]
    return store


# -- ways refused for the load ----------------------------------------------------------------------------------
def test_a_refusal_for_the_load_in_so_many_words_or_naming_what_is_held():
    assert burdened(CHIMNEY) and not burdened("You can't go that way.", ["coffin"])
    assert load_named(COFFIN_REFUSED, ["coffin", "lamp", "sword"]) == ["coffin"]  # the lamp is the world going on
    assert load_named("You can't walk away while you're holding the microphone!", ["microphone"]) == ["microphone"]


def test_a_way_refused_for_the_load_is_no_failed_exit():
    """zork1's chimney refused a heavy load in every episode that tried it: stored as a failed exit, no later episode
    tried it again with a light one, and the treasures below never reached the trophy case."""
    knowledge = Knowledge(KnowledgeStore(game="g", story_md5=MD5), None)
    knowledge.observe(ran(1, "up", 2, held=(("painting", "sword"),) * 2, response=CHIMNEY), "e1")
    knowledge.observe(ran(2, "down", 2, held=(("gold coffin",),) * 2, response=COFFIN_REFUSED), "e1")
    knowledge.observe(ran(3, "north", 2, response="You can't go that way."), "e1")
    assert end(knowledge, "e1").rooms["2"].failed_exits == ["north"]


# -- valuables put down and fetched again -------------------------------------------------------------------------
def test_a_valuable_put_down_to_get_through_is_fetched_again_and_brought_home():
    knowledge = Knowledge(painting_store(), None)
    for turn, (way, start, to) in enumerate((("north", 1, 2), ("south", 2, 1), ("east", 2, 3), ("west", 3, 2)), 1):
        knowledge.observe(ran(turn, way, start, to), "e2")  # the map: 1 - 2 - 3
    knowledge.observe(ran(5, "take painting", 3, held=((), ("painting",)), score_after=4), "e2")
    knowledge.observe(ran(6, "west", 3, 2, held=(("painting",),) * 2), "e2")
    knowledge.observe(ran(7, "up", 2, held=(("painting",),) * 2, response=CHIMNEY), "e2")
    knowledge.observe(ran(8, "drop painting", 2, held=(("painting",), ())), "e2")
    assert knowledge.guidance(view(1)).path_to_known == ("north",)  # empty-handed: back to where it lies
    assert "take painting" in knowledge.guidance(view(2, here=(PAINTING,))).known_here  # though its take scored
    knowledge.observe(ran(9, "take painting", 2, held=((), ("painting",))), "e2")
    assert knowledge.guidance(view(2, held=(PAINTING,))).path_to_known == ("south",)  # and home with it


def test_a_valuable_the_way_refused_by_name_stays_where_it_was_put_down():
    store = painting_store()
    store.score_events.append(
        ScoreEvent(room_id=5, room_name="Egyptian Room", command="take coffin", points=10, episode="e1", turn=4)
    )
    knowledge = Knowledge(store, None)
    knowledge.observe(ran(1, "south", 4, 1), "e2")
    knowledge.observe(ran(2, "north", 1, 4), "e2")
    knowledge.observe(ran(3, "down", 4, held=(("gold coffin",),) * 2, response=COFFIN_REFUSED), "e2")
    knowledge.observe(ran(4, "drop coffin", 4, held=(("gold coffin",), ())), "e2")
    assert knowledge.guidance(view(1)).path_to_known == ()
    agent = OfflineAgent()
    held = (COFFIN, LAMP, SWORD)
    refused = AgentContext(
        turn=3, view=GameView(4, "Altar", 0, 3, held, (), "hash", COFFIN_REFUSED), recent=(("down", COFFIN_REFUSED),)
    )
    assert agent.propose(refused).command == "drop coffin"  # what the game named first, not the sword
    there = AgentContext(
        turn=9, view=GameView(4, "Altar", 0, 9, (LAMP, SWORD), (COFFIN,), "hash", "Altar"), recent=(("north", "Altar"),)
    )
    assert agent.propose(there).command != "take coffin"


def test_the_agent_takes_again_a_treasure_it_put_down_for_a_narrow_way():
    agent = OfflineAgent()
    squeezed = AgentContext(
        turn=7,
        view=GameView(2, "Studio", 0, 7, (PAINTING, LAMP), (), "hash", CHIMNEY),
        recent=(("up", CHIMNEY),),
        knowledge=Guidance(valuables=("painting",)),
    )
    assert agent.propose(squeezed).command == "drop painting"
    light = AgentContext(
        turn=8,
        view=GameView(2, "Studio", 0, 8, (LAMP,), (PAINTING,), "hash", "Dropped."),
        recent=(("up", CHIMNEY), ("drop painting", "Dropped.")),
    )
    assert agent.propose(light).command == "up"  # through with the lighter load
    back = AgentContext(
        turn=20,
        view=GameView(2, "Studio", 0, 20, (LAMP,), (PAINTING,), "hash", "Studio"),
        recent=(("north", "Studio"),),
        knowledge=Guidance(valuables=("painting",)),
    )
    assert agent.propose(back).command == "take painting"


# -- valuables lost -----------------------------------------------------------------------------------------------
def test_a_command_that_cost_valuables_is_avoided_there_in_later_episodes():
    """zork1's `take skeleton` in the maze: a ghost banishes every treasure the player carries."""
    store = painting_store()
    knowledge = Knowledge(store, None)
    curse = "A ghost appears in the room and is appalled at your desecration of the remains of a fellow adventurer."
    knowledge.observe(ran(1, "take skeleton", 6, held=(("painting", "sword"), ("sword",)), response=curse), "e2")
    knowledge.observe(ran(2, "drop sword", 6, held=(("sword",), ())), "e2")  # a drop is no loss
    knowledge.observe(ran(3, "put painting in case", 1, held=(("painting",), ())), "e2")  # nor handing over
    merged = end(knowledge)
    assert [(x.command, x.items) for x in merged.losses] == [("take skeleton", ["painting"])]
    later = Knowledge(merged, None)
    assert "take skeleton" in later.guidance(view(6)).avoid_here and "take skeleton" not in later.avoid(7)


# -- dangers that roam --------------------------------------------------------------------------------------------
def test_what_killed_or_robbed_at_two_places_is_left_rather_than_handled():
    store = painting_store()  # an earlier episode scored: the store guides
    knocked = "Getting close enough would be a good trick.\nThe thief knocks you out."
    store.deaths = [
        Death(room_id=1, room_name="Chasm", command="open large bag", words=knocked, episode="e1", turn=9),
        Death(
            room_id=2,
            room_name="Cellar",
            command="north",
            episode="e2",
            turn=9,
            words="The Troll Room\nThe troll's axe hits you.",
        ),
    ]
    thief, troll = GameObject(8, "thief"), GameObject(9, "troll")
    assert Knowledge(store, None).guidance(view(5, here=(thief, troll))).dangers_here == ()  # one place each
    store.losses = [
        Loss(
            room_id=3,
            room_name="Dead End",
            command="take thief",
            items=["torch"],
            episode="e3",
            turn=7,
            words="Once you got him, what would you do with him?\nThe thief just left.",
        )
    ]
    store.deaths.append(
        Death(
            room_id=4,
            room_name="The Troll Room",
            command="kill troll with sword",
            episode="e4",
            turn=9,
            words="The troll's axe hits you.",
        )
    )
    assert Knowledge(store, None).guidance(view(5, here=(thief, troll))).dangers_here == ("thief",)
    context = AgentContext(
        turn=3,
        view=GameView(5, "Studio", 0, 3, (LAMP,), (thief,), "hash", "A seedy individual."),
        recent=(("north", "Studio"),),
        knowledge=Guidance(dangers_here=("thief",), exits_here=("up",)),
    )
    assert OfflineAgent().propose(context).command == "south"  # back the way it came, before anything here
