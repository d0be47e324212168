"""What was refused in a room may work once something there changes (a trap door opens), except a command refused in
two states of the world (a trophy case fastened to the wall), and a way shut earlier is a way again for the store."""

from __future__ import annotations

from managers.action_memory import STUBBORN_REFUSALS, ActionMemory
from managers.knowledge import Knowledge, KnowledgeStore, ScoreEvent
from session.records import GameView
from tests.factories import turn_record

ROOM = 5


def record(turn: int, command: str, world: tuple[str, str], response: str = "", after: int = ROOM):
    return turn_record(
        turn,
        command=command,
        room_id_before=ROOM,
        room_id_after=after,
        world_hash_before=world[0],
        world_hash_after=world[1],
        response=response,
    )


def test_a_refusal_is_untried_again_once_the_room_changes():
    memory = ActionMemory()
    memory.observe(record(1, "down", ("shut", "shut"), "The trap door is closed."))
    assert "down" in memory.refused(ROOM)
    memory.observe(record(2, "open trap door", ("shut", "open"), "The door opens."))
    assert "down" not in memory.refused(ROOM) and "down" not in memory.tried(ROOM)


def test_a_command_refused_in_two_states_of_the_world_stays_refused():
    memory = ActionMemory()
    worlds = [("w0", "w0"), ("w1", "w1")]
    for turn, (world, change) in enumerate(zip(worlds, ("w1", "w2")), 1):
        memory.observe(record(2 * turn - 1, "take trophy case", world, "It is fastened to the wall."))
        memory.observe(record(2 * turn, "move rug", (world[0], change), "Done."))
    assert STUBBORN_REFUSALS == 2
    assert "take trophy case" in memory.refused(ROOM) and "take trophy case" in memory.tried(ROOM)


def test_a_take_the_game_refused_stays_refused_when_the_room_changes():
    """A take the game refused stays refused after the room changes: the small mailbox is not taken again once opened
    ("It is securely anchored." twice)."""
    memory = ActionMemory()
    memory.observe(record(1, "take small mailbox", ("w0", "w0"), "It is securely anchored."))
    memory.observe(record(2, "open small mailbox", ("w0", "w1"), "Opening the small mailbox reveals a leaflet."))
    assert "take small mailbox" in memory.refused(ROOM) and "take small mailbox" in memory.tried(ROOM)
    memory.observe(record(3, "open door", ("w1", "w1"), "The door cannot be opened."))
    memory.observe(record(4, "move rug", ("w1", "w2"), "Done."))
    assert "open door" not in memory.tried(ROOM)  # other refusals may work once the room changes (it may be unlocked)


def test_a_command_whose_object_was_not_in_sight_is_never_stubborn():
    memory = ActionMemory()
    for turn, (world, change) in enumerate((("w0", "w1"), ("w1", "w2"), ("w2", "w3")), 1):
        memory.observe(record(2 * turn - 1, "take egg", (world, world), "You can't see any egg here!"))
        memory.observe(record(2 * turn, "move rug", (world, change), "Done."))
    assert "take egg" not in memory.refused(ROOM)


def test_the_store_forgets_a_way_shut_earlier_once_something_in_the_room_changes():
    """`down` failed while the trap door was shut; once it is open, the way down leads to known points again."""
    store = KnowledgeStore(game="g", story_md5="m")
    store.score_events.append(
        ScoreEvent(room_id=6, room_name="Cellar", command="take lamp", points=5, episode="e0", turn=1)
    )
    knowledge = Knowledge(store, None)
    knowledge.observe(record(1, "down", ("w", "w"), after=6), "e")  # the way down is known ...
    knowledge.observe(turn_record(2, command="up", room_id_before=6, room_id_after=ROOM), "e")
    knowledge.observe(record(3, "down", ("w", "w"), "The trap door is closed."), "e")  # ... then shut
    here = GameView(ROOM, "Living Room", 0, 3, (), (), "w", "")
    assert knowledge.guidance(here).path_to_known == ()
    knowledge.observe(record(4, "open trap door", ("w", "w2"), "The door opens."), "e")
    assert knowledge.guidance(here).path_to_known == ("down",)
