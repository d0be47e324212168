"""Units of what counts as new: the memory reader, novelty facts with the idle counterfactual, repetition, and
progress."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from managers.loop_break.progress import ProgressTracker
from managers.loop_break.window import RepetitionWindow
from managers.novelty import WorldNovelty, answer_key
from session.jericho_session import JerichoSession
from session.outcomes import outcome_between
from session.records import GameObject, GameView
from session.zmachine import WorldSnapshot, decode_zstring
from tests.factories import turn_record
from tests.helpers import story_file


# -- reading dynamic memory -------------------------------------------------------------------------------------
def test_object_names_decode_abbreviations(rom_path):
    """Jericho drops abbreviations from names ("West House", "set teeth"); the reader decodes them."""
    session = JerichoSession(rom_path)
    view = session.reset()
    assert view.room_name == "West of House"
    names = {session.objects.short_name(session.env._get_ram(), n) for n in range(1, session.objects.count + 1)}
    assert "set of teeth" in names and "small mailbox" in names


def test_object_count_is_the_tables_own(rom_path):
    """Spirit holds 817 objects; Jericho reads 176 of them."""
    spirit = JerichoSession(story_file("spirit.z5"))
    assert spirit.objects.count == 817 > int(spirit.env.frotz_lib.get_num_world_objs())


def test_room_inside_a_vehicle_is_the_room(rom_path, walkthrough):
    """In the magic boat, Jericho's location is the boat; the room is where the boat is."""
    session = JerichoSession(rom_path)
    session.reset()
    boat_step = next(i for i, c in enumerate(walkthrough) if c.lower().startswith("enter boat"))
    for command in walkthrough[: boat_step + 1]:
        view = session.step(command)
    player_parent = view.world.parent(session.player)
    assert session.objects.short_name(session.env._get_ram(), player_parent) == "magic boat"
    assert view.room_id != player_parent and view.room_name


def test_decode_zstring_plain_letters():
    # "hi" in version 3: z-chars h=13, i=14, then padding 5; end bit set.
    word = (1 << 15) | (13 << 10) | (14 << 5) | 5
    memory = bytearray(0x40) + word.to_bytes(2, "big")
    assert decode_zstring(bytes(memory), 0x40, 3) == "hi"


# -- novelty ----------------------------------------------------------------------------------------------------
def world(parents, attributes=None, globals_=None, special=()) -> WorldSnapshot:
    parents = np.array(parents, dtype=np.int32)
    count = len(parents)
    return WorldSnapshot(
        parents=parents,
        siblings=np.zeros(count, dtype=np.int32),
        children=np.zeros(count, dtype=np.int32),
        attributes=np.array(attributes if attributes is not None else [[0, 0, 0, 0]] * count, dtype=np.uint8),
        globals=np.array(globals_ if globals_ is not None else [0] * 8, dtype=np.int32),
        special=np.array(special, dtype=np.uint8),
    )


def view(snapshot: WorldSnapshot, room: int = 50, text: str = "", inventory=(), name: str = "") -> GameView:
    return GameView(room, name or f"Room {room}", 0, 0, tuple(inventory), (), "h", text, world=snapshot)


def test_a_change_an_idle_turn_makes_too_is_not_the_players():
    """Object 3 (an NPC) walks from room 1 to room 2 whatever the player does: no novelty. Object 4 moved by the
    command: novelty."""
    start = view(world([0, 0, 1, 1]))
    novelty = WorldNovelty(start)
    after = view(world([0, 0, 2, 1]), text="The thief wanders off.")
    idle = world([0, 0, 2, 1])
    assert "new_object_state" not in novelty.observe(start, after, "wait", "success", lambda: idle).kinds
    taken = view(world([0, 0, 2, 5]), text="Taken.")
    assert "new_object_state" in novelty.observe(after, taken, "take it", "success", lambda: idle).kinds


def test_a_refused_command_leaves_no_object_novelty():
    start = view(world([0, 0, 1], attributes=[[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]))
    touched = view(world([0, 0, 1], attributes=[[0, 0, 0, 0], [0, 0, 0, 0], [16, 0, 0, 0]]), text="It is anchored.")
    assert WorldNovelty(start).observe(start, touched, "take mailbox", "refused").kinds == ()


def test_global_novelty_filters_the_parser():
    """A global set to a dictionary word's address, to an object within reach, or changed on a refused command
    is the parser's; a flag the command sets with a new answer is the world's."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start, dictionary_range=(1000, 2000))
    noun = view(world([0, 0, 1], globals_=[0, 1500, 0, 0, 0, 0, 0, 0]), text="You see nothing special.")
    assert novelty.observe(start, noun, "examine rock", "no_effect").kinds == ()
    refused = view(world([0, 0, 1], globals_=[0, 1500, 7, 0, 0, 0, 0, 0]), text="You can't.")
    novelty.observe(noun, refused, "frob rock", "refused")
    assert 2 in novelty.noisy_globals
    flag = view(world([0, 0, 1], globals_=[0, 1500, 7, 99, 0, 0, 0, 0]), text="A door opens far away.")
    assert "new_game_variable" in novelty.observe(refused, flag, "push button", "success").kinds


def test_a_global_an_idle_turn_writes_too_is_no_new_variable():
    """partyfoul keeps the parser's verb in globals that the start-of-game probes never see move: `search floor`
    gave one a value never seen, with news in the answer, and a semi-novel loop kept going past its target. An idle
    `look` writes that global too, so it is the command's words, not the world; a global the idle turn leaves alone
    is the command's doing."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    searched = view(world([0, 0, 1], globals_=[0, 0, 0, 52, 0, 0, 0, 0]), text="Frank snorts in his sleep.")
    looked = world([0, 0, 1], globals_=[0, 0, 0, 31, 0, 0, 0, 0])
    assert "new_game_variable" not in novelty.observe(start, searched, "search floor", "success", lambda: looked).kinds
    pushed = view(world([0, 0, 1], globals_=[0, 0, 0, 52, 0, 7, 0, 0]), text="A door opens far away.")
    looked = world([0, 0, 1], globals_=[0, 0, 0, 31, 0, 0, 0, 0])
    assert "new_game_variable" in novelty.observe(searched, pushed, "push button", "success", lambda: looked).kinds


def test_a_global_an_idle_turn_wrote_once_is_the_parsers_from_then_on():
    """An Inform 7 parser notes, in a global, the noun it chose for a word several things share ("(the white
    onion)"), and the next turn clears it as an idle `look` would. Once an idle turn was seen writing it, a later
    choice setting it to a value never seen is no new variable either, though the answer is new."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    chosen = view(world([0, 0, 1], globals_=[0, 0, 0, 1, 0, 0, 0, 0]), text="(the white onion)\nYou rub it.")
    novelty.observe(start, chosen, "rub white", "success", lambda: world([0, 0, 1]))
    cleared = view(world([0, 0, 1]), text="You can't see any such thing.")
    novelty.observe(chosen, cleared, "taste quaxxle", "refused", lambda: world([0, 0, 1]))
    again = view(world([0, 0, 1], globals_=[0, 0, 0, 2, 0, 0, 0, 0]), text="(the knife)\nIt looks sharp.")
    assert (
        "new_game_variable"
        not in novelty.observe(cleared, again, "examine other", "success", lambda: world([0, 0, 1])).kinds
    )


def test_a_variable_set_on_a_turn_the_parser_noted_is_the_parsers():
    """An Inform 7 parser keeps what it inferred in globals it writes on no other kind of turn: the first time it
    chose a thing for a shared word, they took values never seen. No new variable on such a turn; the same change
    on a turn without a note counts."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    noted = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 2, 0]), text="(the green bell pepper)\nYou take it.")
    assert (
        "new_game_variable"
        not in novelty.observe(start, noted, "take green", "success", lambda: world([0, 0, 1])).kinds
    )
    flag = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 7, 2, 0]), text="A door opens far away.")
    assert "new_game_variable" in novelty.observe(noted, flag, "push button", "success", lambda: world([0, 0, 1])).kinds


def test_a_variable_a_look_sets_is_the_librarys_note_of_what_was_looked_at():
    """TextWorld's library writes a global when the player looks under something (`look under bug`, answered `You
    find nothing of interest.`, a new answer): looking changes nothing, so no new variable; the same change on a
    command that does something counts."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    looked = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 3, 0]), text="You find nothing of interest.")
    assert (
        "new_game_variable"
        not in novelty.observe(start, looked, "look under bug", "success", lambda: start.world).kinds
    )
    pushed = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 5, 0]), text="Something clicks.")
    assert "new_game_variable" in novelty.observe(looked, pushed, "push bug", "success", lambda: looked.world).kinds


def test_the_parsers_note_on_the_noun_it_chose_is_no_new_answer():
    """ "(the white onion) You find nothing of interest." answers as "You find nothing of interest." did."""
    plain = "You find nothing of interest."
    assert answer_key(f"\n(the white onion)\n{plain}\n", "look under white") == answer_key(plain, "look under rug")


def test_global_novelty_needs_a_new_answer():
    """A new value alongside a canned answer ("nothing special about the <noun>") is the parser's echo."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    floor = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 93, 0, 0]), text="You see nothing special about the floor.")
    novelty.observe(start, floor, "examine floor", "no_effect")
    wall = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 94, 0, 0]), text="You see nothing special about the wall.")
    assert answer_key(wall.text, "examine wall") == answer_key(floor.text, "examine floor")
    assert "new_game_variable" not in novelty.observe(floor, wall, "examine wall", "no_effect").kinds


def test_a_variable_set_while_the_game_waits_for_a_key_is_no_new_variable():
    """sherlock's Big Ben strikes the hour in the middle of a walk and waits for a key, setting globals to values
    never seen at every pause: a walk between two streets counted as progress once an hour. The same change on a
    turn that finished its answer is the command's."""
    start = view(world([0, 0, 1]), text="start")
    chimed = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 23770, 0]), text="Big Ben strikes. [Press any key.]")
    assert (
        "new_game_variable"
        not in WorldNovelty(start).observe(start, replace(chimed, paused=True), "n", "success").kinds
    )
    assert "new_game_variable" in WorldNovelty(start).observe(start, chimed, "n", "success").kinds


def test_the_game_waiting_for_a_key_in_the_middle_of_an_answer_is_paused_sherlock():
    session = JerichoSession(story_file("sherlock.z5"))
    session.reset()
    steps = session.walkthrough()
    views = [session.step(command) for command in steps[:51]]
    assert views[49].paused and "[Press any key to continue.]" in views[49].text
    assert not views[48].paused and not views[50].paused


def test_a_nothing_happens_answer_sets_no_variable():
    """ "You feel nothing unexpected" is the parser's bookkeeping even when a global moves and the answer is new
    (semi-novel stuck loops kept going on such answers); the same change on a command that worked counts."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)
    touched = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 41, 0]), text="You feel nothing unexpected.")
    assert "new_game_variable" not in novelty.observe(start, touched, "touch coin", "no_effect").kinds
    pushed = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 41, 7]), text="A door opens far away.")
    assert "new_game_variable" in novelty.observe(touched, pushed, "push button", "success").kinds


def test_a_move_made_again_from_the_same_situation_reaches_no_new_object_state():
    """Going back and forth, a gnome waves at the arrival the second time round: that is the gnome reacting to an
    arrival already made, not the player changing the world. The first arrival's changes count."""
    here = view(world([0, 0, 1, 60]), room=50)
    novelty = WorldNovelty(here)
    idle = world([0, 0, 1, 60])
    arrived = view(world([0, 0, 1, 60], attributes=[[0] * 4, [0] * 4, [0] * 4, [1, 0, 0, 0]]), room=60, text="A")
    assert "new_object_state" in novelty.observe(here, arrived, "east", "success", lambda: idle).kinds
    novelty.observe(arrived, here, "west", "success", lambda: idle)
    waved = view(world([0, 0, 1, 60], attributes=[[0] * 4, [0] * 4, [0] * 4, [2, 0, 0, 0]]), room=60, text="B")
    assert "new_object_state" not in novelty.observe(here, waved, "e", "success", lambda: idle).kinds


def test_a_new_answer_to_a_question_a_look_up_or_a_reply_is_information():
    """Reading up, asking or answering a character changes nothing in memory, yet it is how some games move on
    (deephome's encyclopedia; weapon's closing conversation of bare `reply` commands, which a noisy walkthrough of
    seed 13 reaches while healthy). A canned reply, a short one, the same answer again, a reply the game did not
    take, or any answer to another verb is no information."""
    start = view(world([0, 0, 1]), text="start")
    novelty = WorldNovelty(start)

    def answer(text: str, command: str, category: str = "no_effect") -> tuple[str, ...]:
        return novelty.observe(start, view(world([0, 0, 1]), text=text), command, category).kinds

    entry = "One of the children of Hashar, cursed to exist only in spiritual form."
    assert "new_information" in answer(entry, "look up kebarn in leshosh")
    assert "new_information" not in answer(entry, "look up kebarn in leshosh")  # heard already
    assert "new_information" not in answer("Cholok.", "ask spirit for name")  # too short to tell anything
    assert "new_information" not in answer(
        "The man does not know about that subject at all.", "ask man about x", "refused"
    )
    assert "new_information" not in answer("A long thin balsa wood beam, light and strong as ever.", "examine beam")
    line = 'You say, "Yi-Lono-Mordel is powered up and ready to go." Cheryl says, "Ready? What is Yi-Lono-Mordel?"'
    assert "new_information" in answer(line, "reply")
    assert "new_information" not in answer(line, "reply")
    assert "new_information" in answer('You say, "So now I will get to do the honors." Cheryl gasps.', "say honors")
    nobody = "You can't see anyone here to answer to, so nobody hears you."
    assert "new_information" not in answer(nobody, "answer", "refused")


def test_counters_stop_counting():
    start = view(world([0, 0, 1]), text="0")
    novelty = WorldNovelty(start)
    previous = start
    fired = []
    for step in range(1, 6):
        now = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 100 + step, 0, 0, 0]), text=f"turn {step} " + "x" * step)
        fired.append("new_game_variable" in novelty.observe(previous, now, f"go {step}", "success").kinds)
        previous = now
    assert fired[:2] == [True, True] and fired[3:] == [False, False]  # the third equal step marks a counter


def test_a_variable_a_walk_made_again_sets_is_not_the_players():
    """The first walk north from room 50 sets a flag with a new answer: the player's doing. Made again from room 50
    with the same things in hand, a move that meets a new value (the thief moved the guidebook meanwhile) is not."""
    here = view(world([0, 0, 1]), room=50, text="Room 50")
    novelty = WorldNovelty(here)
    there = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 3]), room=51, text="Room 51. A door creaks.")
    assert "new_game_variable" in novelty.observe(here, there, "north", "success").kinds
    back = view(there.world, room=50, text="Room 50 again")
    novelty.observe(there, back, "south", "success")
    again = view(
        world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 4]), room=51, text="Room 51. There is a guidebook here."
    )
    assert "new_game_variable" not in novelty.observe(back, again, "north", "success").kinds


def test_moves_from_no_known_room_are_not_walks_for_variables():
    nowhere = view(world([0, 0, 1]), room=None, text="Somewhere")
    novelty = WorldNovelty(nowhere)
    first = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 3]), room=None, text="A bell rings.")
    assert "new_game_variable" in novelty.observe(nowhere, first, "north", "success").kinds
    second = view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 5]), room=None, text="A gong sounds.")
    assert "new_game_variable" in novelty.observe(first, second, "north", "success").kinds


def test_curated_state_bytes_count_whoever_changes_them():
    start = view(world([0, 0, 1], special=[5]), text="Okay, the sub is moving east.")
    moved = view(world([0, 0, 1], special=[6]), text="Okay, the sub is moving east.")
    assert "new_game_variable" in WorldNovelty(start).observe(start, moved, "east", "blocked_exit").kinds


def test_new_position_needs_the_room_named_in_a_new_answer():
    start = view(world([0, 0, 1]), room=7, text="Room 7\nWalls all around.")
    novelty = WorldNovelty(start)
    moved = view(world([0, 0, 1]), room=7, text="Room 7\nA wall to the north, an opening east.")
    assert "new_position" in novelty.observe(start, moved, "east", "success").kinds
    blocked = view(world([0, 0, 1]), room=7, text="You can't go that way.")
    assert "new_position" not in novelty.observe(moved, blocked, "west", "blocked_exit").kinds


def test_a_way_back_into_the_room_described_as_on_arrival_is_no_new_position():
    """zork1's coal mine has a way west that leads back into the same room, described as it was on arriving."""
    elsewhere = view(world([0, 0, 1]), room=6, name="Ladder Top", text="Ladder Top\nA very small room.")
    novelty = WorldNovelty(elsewhere)
    text = "Coal Mine\nThere is a brown sack here."
    arrived = view(world([0, 0, 1]), room=7, name="Coal Mine", text=text)
    novelty.observe(elsewhere, arrived, "up", "success")
    back = view(world([0, 0, 1]), room=7, name="Coal Mine", text=text)
    assert "new_position" not in novelty.observe(arrived, back, "west", "success").kinds


def test_a_way_the_game_refused_is_no_new_position_though_it_names_the_room():
    """zork1's forest rooms are all called Forest, and a wall there answers `The forest becomes impenetrable to the
    north.`: a new answer naming the room, on a move the game refused."""
    start = view(world([0, 0, 1]), room=7, name="Forest", text="Forest\nTrees all around.")
    novelty = WorldNovelty(start)
    wall = view(world([0, 0, 1]), room=7, name="Forest", text="The forest becomes impenetrable to the north.")
    assert "new_position" not in novelty.observe(start, wall, "north", "blocked_exit").kinds


def test_pushed_objects_in_an_arrangement_never_seen_are_new():
    """Two crates (objects 3 and 4) pushed between rooms 1 and 2: each crate has been in each room, but crate 3 in
    room 2 with crate 4 in room 1 is new. Pushing back to a known arrangement is not; taking and dropping (the
    player, object 5, holding one) never counts, nor a character's doing (an idle turn moves the same, or it
    follows the player's walk)."""
    start = view(world([0, 0, 1, 1, 1, 0]))
    novelty = WorldNovelty(start, player=5)

    def arranged(before, parents, command, idle=None) -> bool:
        after = view(world(parents))
        return "new_arrangement" in novelty.observe(before, after, command, "success", lambda: idle).kinds

    assert arranged(start, [0, 0, 2, 1, 1, 0], "push crate east")  # crate 3 to room 2
    assert not arranged(view(world([0, 0, 2, 1, 1, 0])), [0, 0, 1, 1, 1, 0], "push crate west")  # back: seen
    assert arranged(view(world([0, 0, 1, 1, 1, 0])), [0, 0, 1, 2, 1, 0], "push box east")  # 3 in 1, 4 in 2
    assert arranged(view(world([0, 0, 1, 2, 1, 0])), [0, 0, 2, 2, 1, 0], "push crate east")  # both in 2
    assert not arranged(view(world([0, 0, 2, 2, 1, 0])), [0, 0, 1, 2, 1, 0], "push crate west")  # seen
    walked_off = world([0, 0, 2, 1, 1, 0])  # a character pushes the box back whatever the player does
    assert not arranged(view(world([0, 0, 2, 2, 1, 0])), [0, 0, 2, 1, 1, 0], "wait", idle=walked_off)
    assert not arranged(view(world([0, 0, 1, 1, 1, 0])), [0, 0, 5, 1, 1, 0], "take crate")  # held: juggling
    assert not arranged(view(world([0, 0, 5, 1, 1, 0])), [0, 0, 2, 1, 1, 0], "drop crate")
    assert not arranged(view(world([0, 0, 2, 1, 1, 0])), [0, 0, 2, 1, 2, 0], "east")  # a dog follows the player


def test_situation_ignores_clocks_and_changes_with_the_room_and_inventory():
    start = view(world([0, 0, 1]))
    novelty = WorldNovelty(start)
    a = novelty.observe(start, view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 9])), "wait", "no_effect")
    b = novelty.observe(start, view(world([0, 0, 1], globals_=[0, 0, 0, 0, 0, 0, 0, 10])), "wait", "no_effect")
    assert a.situation == b.situation
    held = view(world([0, 0, 1]), inventory=(GameObject(3, "lamp"),))
    assert novelty.observe(start, held, "take lamp", "success").situation != a.situation
    assert novelty.observe(start, replace(held, room_id=2), "north", "success").situation != a.situation


def test_the_state_of_what_is_held_is_read_apart_from_the_situation():
    """A uniform worn or carried, a canteen open or shut, a lamp lit or dark: the same things in hand in another
    state (planetfall's busy camping wears and removes, opens and shuts what it carries). The situation, which the
    repetition rule compares, stays that of the things held and the room."""
    uniform = (GameObject(3, "uniform"),)
    start = view(world([0, 0, 0]), inventory=uniform)
    novelty = WorldNovelty(start)
    carried = novelty.observe(start, start, "look", "no_effect")
    worn_view = view(world([0, 0, 0], attributes=[[0, 0, 0, 0], [0, 0, 0, 0], [0, 4, 0, 0]]), inventory=uniform)
    worn = novelty.observe(start, worn_view, "wear uniform", "success")
    assert worn.held != carried.held and worn.situation == carried.situation
    assert novelty.observe(worn_view, start, "remove uniform", "success").held == carried.held


# -- repetition and progress ------------------------------------------------------------------------------------
def test_repetition_window_fills_with_repeated_transitions():
    detector = RepetitionWindow(window=4)
    commands = ["north", "south"] * 5
    situations = ["A", "B"] * 5
    results = []
    for turn, (command, situation) in enumerate(zip(commands, situations), start=1):
        detector.observe(turn_record(turn, command=command, situation=situation), progress=False)
        results.append(detector.result())
    assert not results[3].repeating  # the first round trip is new
    assert results[-1].repeating and results[-1].share == 1.0
    assert detector.situation == "B"
    assert detector.repeats_move("north") is True and detector.repeats_move("south") is False


def test_a_window_may_hold_repetition_misses_new_turns():
    """A random walk takes a door it had not taken from there, a character changes the room once: with misses=1 the
    window still counts as repeating with one new turn in it, not with two; the countdown to repeating counts until
    the (misses + 1)-th newest new turn leaves the window."""
    detector = RepetitionWindow(window=4, misses=1)
    commands = ["north", "south"] * 5
    situations = ["A", "B", "A", "B", "A", "B*", "A", "B", "A", "B"]  # a character passes by on turn 6
    repeating = []
    for turn, (command, situation) in enumerate(zip(commands, situations), start=1):
        detector.observe(turn_record(turn, command=command, situation=situation), progress=False)
        repeating.append(detector.result().repeating)
    # New: turns 1-3 (the first round trip, from the start) and 7 (north from the changed room).
    assert repeating == [False] * 5 + [True] * 5
    assert detector.turns_until_repeating() == 0
    strict = RepetitionWindow(window=4)
    for turn, (command, situation) in enumerate(zip(commands, situations), start=1):
        strict.observe(turn_record(turn, command=command, situation=situation), progress=False)
    assert not strict.result().repeating and strict.turns_until_repeating() == 1


def test_a_room_changed_by_the_game_during_an_observation_is_the_same_situation():
    """zork3's camping loop: a character leaves the Cliff while the player takes stock, so the room's objects, and the
    situation, change on an `inventory`. The game did it, not the player: what the player does there next repeats
    what it did before. A change on a wait (the timed event waited for) or on any other command is a new situation."""
    cycle = ["look", "examine amulet", "inventory"]
    for last, repeats in (("inventory", True), ("wait", False), ("push rock", False)):
        detector = RepetitionWindow(window=3)
        commands = cycle * 2 + [last] + cycle
        for turn, command in enumerate(commands, start=1):
            situation = "cliff" if turn < 7 else "cliff, man gone"
            detector.observe(turn_record(turn, command=command, situation=situation), progress=False)
        assert detector.result().repeating is repeats, last


def walk(turn: int, command: str, before: int | None, after: int | None, situation: str):
    return turn_record(turn, command=command, situation=situation, room_id_before=before, room_id_after=after)


def test_a_walk_made_again_repeats_whatever_a_timer_changed_in_the_rooms():
    """balances: a tortoise feather falls at the Crest of Hill in the middle of an A-B loop, so each situation after it
    is new; the walks between the same two rooms with the same things in hand are repeats all the same, and the
    move that would make one again is a repeated move (the steering penalty's test)."""
    detector = RepetitionWindow(window=4)
    ways = {"west": (1, 2), "east": (2, 1)}
    for turn in range(1, 11):
        command = "west" if turn % 2 else "east"
        situation = f"{ways[command][1]}" if turn < 5 else f"{ways[command][1]}-feather-{turn}"  # new from turn 5 on
        detector.observe(walk(turn, command, *ways[command], situation), progress=False)
    assert detector.result().repeating
    assert detector.repeats_move("west") and not detector.repeats_move("north")


def test_the_rooms_since_the_last_progress_are_the_loops_all_of_them():
    """A round longer than the window still has all its rooms in the loop: the way out is never one of them
    (enchanter's Jewel Room, a dead end of the round, drew the looper up and back)."""
    detector = RepetitionWindow(window=4)
    for turn, room in enumerate([1, 2, 3, 4, 5, 6, 1, 2], start=1):
        detector.observe(walk(turn, "east", room - 1 or 6, room, f"s{room}"), progress=turn == 1)
    assert detector.stretch_rooms == {1, 2, 3, 4, 5, 6}
    detector.observe(walk(9, "east", 2, 3, "s3"), progress=True)
    assert detector.stretch_rooms == {3}


def test_a_return_after_progress_is_no_repeat_but_its_walks_are():
    """zork1's noisy walkthrough of seed 5 goes back up the coal mine for the bracelet: looking around and taking
    stock where it stood long before the last progress is new since then, while the ladder it climbs again is a walk
    the episode already made (what a wandering loop repeats from its first round)."""
    detector = RepetitionWindow(window=4)
    before = [
        ("look", 20, 20, "bottom"),
        ("up", 20, 21, "top"),
        ("inventory", 21, 21, "top"),
        ("down", 21, 20, "bottom"),
    ]
    for turn, (command, room_before, room_after, situation) in enumerate(before, start=1):
        detector.observe(walk(turn, command, room_before, room_after, situation), progress=turn == 1)
    detector.observe(walk(5, "take garlic", 20, 20, "bottom"), progress=True)
    flags = []
    for turn, (command, room_before, room_after, situation) in enumerate(before, start=6):
        detector.observe(walk(turn, command, room_before, room_after, situation), progress=False)
        flags.append(detector.recent[-1][0])
    assert flags == [False, True, False, True]
    for turn, (command, room_before, room_after, situation) in enumerate(before, start=10):
        detector.observe(walk(turn, command, room_before, room_after, situation), progress=False)
    assert detector.result().repeating  # going round a second time since the progress: all of it repeats


def test_moves_within_one_room_id_or_none_are_not_walks():
    """A submarine, a maze or a stretch without a room id: a move that keeps (or has no) room id says nothing about
    where it went, so it repeats only as a transition from the same situation."""
    for before, after in ((None, None), (7, 7)):
        detector = RepetitionWindow(window=4)
        for turn in range(1, 11):
            detector.observe(walk(turn, "north", before, after, f"s{turn}"), progress=False)
        assert detector.result().repeats == 0 and not detector.repeats_move("north")


def test_score_progress_needs_a_score_never_reached():
    """Taking and dropping a treasure moves the score back and forth: only the first rise is progress."""
    tracker = ProgressTracker({"score"})
    scores = [(0, 10), (10, 0), (0, 10), (10, 0)]
    fired = [
        tracker.observe(turn_record(t, score_before=b, score_after=a)).progress for t, (b, a) in enumerate(scores, 1)
    ]
    assert fired == [True, False, False, False]


def test_probing_never_touches_the_game():
    """Jericho's restore is not exact on sherlock: a probe run and undone on the live emulator changes its course.
    noisy_globals and idle_world run on the shadow emulator, so the walkthrough plays as in plain Jericho."""
    story = story_file("sherlock.z5")
    plain = JerichoSession(story)
    plain.reset()
    probed = JerichoSession(story)
    probed.reset()
    probed.noisy_globals()
    probed.noise()
    for command in plain.walkthrough()[:60]:
        expected = plain.step(command)
        got = probed.step(command)
        probed.idle_world()
        assert (got.text, got.score, got.room_id) == (expected.text, expected.score, expected.room_id)


def test_bumping_into_a_known_wall_again_repeats_across_progress():
    """A looper that found its way out and wanders back bumps into the walls it bumped into before the progress
    (zork1's Deep Canyon): those are walks the episode made. A refused move in a room id shared by an area, or in
    no room, stays a transition of its situation."""
    detector = RepetitionWindow(window=4)
    bump = turn_record(
        1, command="north", situation="canyon", room_id_before=5, room_id_after=5, result_category="blocked_exit"
    )
    detector.observe(bump, progress=False)
    detector.observe(
        turn_record(2, command="take coin", situation="canyon", room_id_before=5, room_id_after=5), progress=True
    )
    detector.observe(replace(bump, turn=3, situation="canyon-2"), progress=False)
    assert detector.recent[-1][0] is True
    moved_within = replace(bump, turn=4, result_category="success")  # a submarine's move: same room id, somewhere else
    detector.observe(moved_within, progress=True)
    detector.observe(replace(moved_within, turn=5), progress=False)
    assert detector.recent[-1][0] is False


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_examining_what_a_table_holds_is_no_new_object_state_textworld(textworld_kitchen):
    """Inform 7 flags what it lists: `examine table` lists the cookbook on it and leaves the flags otherwise than any
    turn before. A game without Jericho's bindings has them found by probing (Shadow.listing_attributes),
    and they are no change of the world: looking around a kitchen reaches no new object state."""
    session = JerichoSession(textworld_kitchen)
    view = session.reset()
    assert session.noise()[0], "no listing flags found"
    novelty = WorldNovelty.of(view, session)
    walk = session.walkthrough()[: session.walkthrough().index("examine cookbook")]
    reached = []
    for command in walk + ["examine table", "examine counter", "read table", "look under table", "examine oven"]:
        before, view = view, session.step(command)
        kinds = novelty.observe(before, view, command, outcome_between(command, before, view), session.idle_world).kinds
        reached.append((command, kinds))
    assert view.room_name == "Kitchen"
    assert [command for command, kinds in reached[len(walk) :] if "new_object_state" in kinds] == []


def test_things_at_hand_without_a_name_are_in_the_view_yomomma():
    """yomomma, an Inform 7 game, gives some things at hand no short name: the view lists them apart (never shown to
    an agent, but their state is part of the situation), the carried ones as such."""
    session = JerichoSession(story_file("yomomma.z8"))
    view = session.reset()
    named = {obj.num for obj in view.room_objects + view.inventory}
    assert view.unnamed and named.isdisjoint(view.unnamed)
    assert set(view.unnamed_carried) == set(session.world().contents(session.player)) - named
    assert set(view.unnamed_carried) < set(view.unnamed)
