"""Busy camping: changes in place that reach nothing new, counted by managers/loop_break/churn.py. Unit tests feed
records directly (no Jericho); the integration test plays a busy camping loop of the corpus on a real story file through
the orchestrator's game loop."""

from __future__ import annotations

import pytest

from agents.replay_agent import ReplayAgent
from managers.loop_break import LoopBreak
from managers.loop_break.churn import ChurnCount, ChurnTurn
from playthroughs import trajectories
from session.config import LoopBreakConfig
from tests.factories import first_stop, loop_break, turn_record
from tests.helpers import make_config, more_story_file, run_episode, story_file

ROOM = 7
DEFAULTS = LoopBreakConfig()
CHURN_CHANGES, CHURN_WINDOW, CHURN_MIN_TURNS = DEFAULTS.churn.changes, DEFAULTS.churn.window, DEFAULTS.churn.min_turns
CHURN_REPEATS = DEFAULTS.churn.repeats


def play(breaker: LoopBreak, turns: list[tuple]) -> tuple[int | None, str | None]:
    """Feed (command, situation after, room after[, novelty[, response]]) turns starting in ROOM; the turn and rule
    of the stop, or (None, None)."""
    rooms_before = [ROOM, *(after for _, _, after, *_ in turns)]
    return first_stop(
        breaker,
        (
            turn_record(
                turn,
                command=command,
                room_id_before=before,
                room_id_after=after,
                situation=situation,
                novelty=tuple(extra[0]) if extra else (),
                response=extra[1] if len(extra) > 1 else "",
            )
            for turn, ((command, situation, after, *extra), before) in enumerate(zip(turns, rooms_before), start=1)
        ),
    )


def busy(turns: int) -> list[tuple]:
    """Taking and dropping four things in turn: every combination of what is held is a new situation."""
    nouns = ("lamp", "book", "box", "rope")
    commands = [f"{verb} {noun}" for noun in nouns for verb in ("take", "drop")]
    return [(commands[(i * 3) % len(commands)], f"held {i}", ROOM) for i in range(turns)]


def test_the_count_needs_its_changes_in_the_window_and_its_turns_since_strong_progress():
    count = ChurnCount(window=4, changes=3, repeats=0, min_turns=4)
    later = ChurnCount(window=4, changes=3, repeats=0, min_turns=5)
    for churned in (True, True, False, True):
        count.observe(ChurnTurn(ROOM, churned, made_again=False, object_progress=False))
        later.observe(ChurnTurn(ROOM, churned, made_again=False, object_progress=False))
    assert count.changes == 3 and count.turns == 4
    assert count.holds() and not later.holds()
    count.observe(
        ChurnTurn(ROOM, False, made_again=False, object_progress=False)
    )  # the oldest change leaves the window
    assert count.changes == 2 and not count.holds()
    count.restart()
    assert count.changes == 0 and count.turns == 0 and not count.holds()


def test_churning_is_counted_room_by_room():
    """Camping churns in one room; carrying things about and using them a turn or two in each room does not add up
    (adventureland's water and bees, a recipe's ingredients fetched from several rooms)."""
    count = ChurnCount(window=24, changes=3, repeats=3, min_turns=0)
    for room in (1, 2, 3, 1, 2, 3, 4, 5):
        count.observe(ChurnTurn(room, True, made_again=True, object_progress=False))
    assert count.changes == 2 and count.repeats == 2 and not count.holds()
    count.observe(ChurnTurn(1, True, made_again=True, object_progress=False))
    assert count.changes == 3 and count.holds()


def test_a_new_object_state_restarts_the_changes_but_not_the_changes_made_again():
    """A room with many things: each first combination of their states is progress for the first count, but the
    commands that reach them are made again, and the second count goes on across them."""
    count = ChurnCount(window=24, changes=6, repeats=3, min_turns=4)
    for turn in range(5):
        count.observe(ChurnTurn(ROOM, True, made_again=True, object_progress=turn % 2 == 1))
    assert count.changes == 1 and count.turns == 1  # restarted by the last object state
    assert count.repeats == 3 and count.turns_across == 5 and count.holds()


def test_the_churn_rule_is_off_at_zero_changes_and_repeats():
    assert play(loop_break(cycle={"turns": 0}, churn={"changes": 0, "repeats": 0}), busy(100))[1] != "churn"


def test_changes_in_place_that_reach_nothing_new_stop_by_the_churn_rule():
    """Every turn changes what is held, in one room, and the commands never come round in a fixed order that the
    cycle rule could see: no other rule ends it before the churn rule does, CHURN_MIN_TURNS turns in."""
    assert play(loop_break(cycle={"turns": 0}), busy(100)) == (CHURN_MIN_TURNS, "churn")


def test_a_new_combination_in_hand_is_weak_progress_and_keeps_counting():
    """Taking back what was dropped makes a combination of things in hand never held here (`new_room_inventory`):
    weak progress, which restarts the other clocks but not the churn count."""
    turns = [(command, situation, room, ["new_room_inventory"]) for command, situation, room in busy(100)]
    assert play(loop_break(cycle={"turns": 0}), turns) == (CHURN_MIN_TURNS, "churn")


def test_strong_progress_restarts_both_counts():
    """News (or a new room, points...) is progress: both counts start again after it."""
    turns = busy(100)
    turns[7] = (*turns[7], ["new_information"])
    assert play(loop_break(cycle={"turns": 0}), turns) == (8 + CHURN_MIN_TURNS, "churn")


def test_a_game_variable_stepped_again_by_a_command_made_here_is_no_progress():
    """lostpig's pole, taken and dropped, gives a game variable a new value every time. busy() makes each of its
    eight commands once in its first eight turns: a new value from the ninth, made again, is the same act stepping
    the variable, and the count goes on; from the eighth, never made here before, it is progress."""
    again = busy(100)
    again[8] = (*again[8], ["new_game_variable"])
    assert play(loop_break(cycle={"turns": 0}), again) == (CHURN_MIN_TURNS, "churn")
    first = busy(100)
    first[7] = (*first[7], ["new_game_variable"])
    assert play(loop_break(cycle={"turns": 0}), first) == (8 + CHURN_MIN_TURNS, "churn")


def test_a_new_object_state_restarts_the_changes_but_the_commands_made_again_stop_sooner():
    """busy() makes eight commands in turn: from the ninth turn on each is made again. A new object state on the
    eighth restarts the changes, not the count of changes made again, which stops the loop before the changes do."""
    turns = busy(100)
    turns[7] = (*turns[7], ["new_object_state"])
    stop, rule = play(loop_break(cycle={"turns": 0}), turns)
    assert rule == "churn" and stop < 8 + CHURN_MIN_TURNS
    only_changes = loop_break(cycle={"turns": 0}, churn={"repeats": 0})
    assert play(only_changes, turns) == (8 + CHURN_MIN_TURNS, "churn")


def test_looks_wrong_verbs_and_walks_do_not_churn():
    """A clumsy player's detours change nothing in place (a character passing by changes the situation on a look),
    and a step out and back changes the room: none of it churns, and the churn rule never fires."""
    detours = [
        ("look", "a", ROOM),
        ("examine lamp", "a", ROOM),
        ("dance", "a", ROOM),
        ("inventory", "b", ROOM),
        ("north", "c", ROOM + 1),
        ("south", "a", ROOM),
        ("kick lamp", "a", ROOM),
    ]
    turns = [detours[i % len(detours)] for i in range(CHURN_WINDOW * 3)]
    breaker = loop_break(
        cycle={"turns": 0}, repetition={"enabled": False}, fruitless={"turns": 0}, no_progress={"max_turns": 1000}
    )
    assert play(breaker, turns) == (None, None)
    assert breaker.detectors["churn"].count.changes == 0


def test_fewer_changes_than_the_rule_needs_in_its_window_never_stop():
    """CHURN_CHANGES - 1 changes in every window, each by a command not made here before (a player who takes or
    drops another thing now and then between looks), are under the rule."""
    gap = -(-CHURN_WINDOW // (CHURN_CHANGES - 1))  # changes spread so that a window holds CHURN_CHANGES - 1 at most
    turns = [(f"drop thing{i}" if i % gap == 0 else "look", f"s{i // gap}", ROOM) for i in range(CHURN_WINDOW * 4)]
    breaker = loop_break(
        cycle={"turns": 0}, repetition={"enabled": False}, fruitless={"turns": 0}, no_progress={"max_turns": 1000}
    )
    assert play(breaker, turns) == (None, None)


def test_a_thing_dropped_and_taken_back_once_in_a_while_never_stops():
    """CHURN_REPEATS - 1 changes made again in every window (a lamp dropped and taken back between looks) are
    under the rule."""
    gap = -(-CHURN_WINDOW // (CHURN_REPEATS - 1))
    turns = [
        (("take lamp" if (i // gap) % 2 else "drop lamp") if i % gap == 0 else "look", f"s{(i // gap) % 2}", ROOM)
        for i in range(CHURN_WINDOW * 4)
    ]
    breaker = loop_break(
        cycle={"turns": 0}, repetition={"enabled": False}, fruitless={"turns": 0}, no_progress={"max_turns": 1000}
    )
    assert play(breaker, turns) == (None, None)


def quiet_loop_break() -> LoopBreak:
    """Only the churn rule can stop."""
    return loop_break(
        cycle={"turns": 0}, repetition={"enabled": False}, fruitless={"turns": 0}, no_progress={"max_turns": 1000}
    )


DEVICE_TIMES = DEFAULTS.churn.device_times


def test_a_spinner_worked_again_and_again_does_not_churn():
    """The same command on one device, its states coming round and the game answering differently (curses' sceptre
    spun until the wanted word comes up): a gamble, never churn, however long; a loop of one command is the
    repetition rule's."""
    words = ("zal", "huth", "ca", "si", "ahu")
    turns = [("turn sceptre", f"word {i * 7 % 5}", ROOM, [], f"It lands on {words[i * 7 % 5]}.") for i in range(72)]
    breaker = quiet_loop_break()
    assert play(breaker, turns) == (None, None)
    assert breaker.detectors["churn"].count.changes == breaker.detectors["churn"].count.repeats == 0


def lid(times: int) -> list[tuple]:
    """Opening and closing one lid, answered alike every time."""
    return [
        ("open lid", "lid open", ROOM, [], "You open the lid.") if i % 2 else ("close lid", "lid shut", ROOM, [], "")
        for i in range(2 * times)
    ]


def test_a_lid_opened_and_closed_a_few_times_does_not_churn():
    """curses' coffin: its lid opened and closed four times while the magic inside works, between the same two
    situations and answered alike: one device worked, not fiddling with many things."""
    breaker = quiet_loop_break()
    assert play(breaker, lid(DEVICE_TIMES - 1)) == (None, None)
    assert breaker.detectors["churn"].count.changes == 1  # the first change: nothing had been changed here before


def test_one_device_worked_alike_again_and_again_churns():
    """hollywood's busy camping switches its flashlight off and on among fidgets, answered alike every time: from
    the DEVICE_TIMES-th time the same command does it, each such change churns, and the changes made again stop the
    loop a few turns later. At 0 one device never churns."""
    stop, rule = play(quiet_loop_break(), lid(36))
    assert rule == "churn" and 2 * DEVICE_TIMES <= stop <= 2 * DEVICE_TIMES + 2 * CHURN_REPEATS
    never = loop_break(
        cycle={"turns": 0},
        repetition={"enabled": False},
        fruitless={"turns": 0},
        no_progress={"max_turns": 1000},
        churn={"device_times": 0},
    )
    assert play(never, lid(36)) == (None, None)


def _busy_loop_ended_by_churn(story, cut: float, tmp_path) -> list[dict]:
    """Play the busy camping loop cut at `cut` of the walkthrough of `story` through the harness; it must end by the
    churn rule within its 40 turns. The loop's records."""
    built = trajectories.stuck(story, "busy_camping", cut)
    assert built is not None, "no busy loop built: the builders found no nouns"
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(story, config, ReplayAgent(built.commands))
    [stop] = result.events("stuck_termination")
    assert stop["rule"] == "churn"
    assert result.summary["turns"] - built.loop_start + 1 <= 40
    return [r for r in result.records if r["turn"] >= built.loop_start]


@pytest.mark.slow  # a long real episode
def test_a_busy_camping_loop_ends_by_the_churn_rule_within_40_turns_zork1(tmp_path):
    """zork1, a quarter into the walkthrough: taking, dropping, switching the lamp on and off over the things at
    hand, at random, with examinations between. The things held keep making new situations, so the repetition rule
    sees few repeats; the changes, made again in place, end the loop within its 40 turns."""
    story = story_file("zork1.z5")
    loop = _busy_loop_ended_by_churn(story, 0.25, tmp_path)
    assert len({r["situation"] for r in loop}) > CHURN_CHANGES  # the situations keep changing
    assert {r["room_id_after"] for r in loop} == {loop[0]["room_id_before"]}  # in one room


@pytest.mark.slow  # a long real episode
def test_wearing_and_opening_what_is_carried_churns_planetfall(tmp_path):
    """planetfall, a quarter into the walkthrough, in the Elevator Lobby: the uniform worn and removed, the canteen
    opened, shut, dropped and taken, the chronometer taken off and put on. Most of it changes only the state of
    what is in hand, which the situation leaves out (TurnRecord.held): the churn rule counts it, and the loop ends
    within its 40 turns (70 turns when only the situation was read)."""
    story = story_file("planetfall.z3")
    loop = _busy_loop_ended_by_churn(story, 0.25, tmp_path)
    assert any(b["situation"] == a["situation"] and b["held"] != a["held"] for a, b in zip(loop, loop[1:]))


@pytest.mark.slow  # a long real episode
def test_a_variable_stepped_by_the_same_acts_is_no_progress_lostpig(tmp_path):
    """lostpig, three quarters into the walkthrough: Grunk takes and drops his pole, coin, torch and hat among
    fidgets. Each take or drop of the pole gives a game variable a new value, which restarted the churn count every
    few turns, and the loop ran 44 turns; made again, the same act is no progress, and it ends within its 40."""
    story = story_file("lostpig.z8")
    loop = _busy_loop_ended_by_churn(story, 0.75, tmp_path)
    assert any("new_game_variable" in r["novelty"] and "pole" in r["command"] for r in loop[10:])


@pytest.mark.slow  # a long real episode
def test_one_device_worked_alike_ends_a_busy_camping_loop_hollywood(tmp_path):
    """hollywood, a quarter into the walkthrough, in the Upstairs Bathroom: the flashlight switched off and on again
    and again among fidgets, the game answering alike. The only change is the one device, which healthy walkthroughs
    work a few times; worked alike more often, it churns, and the loop ends within its 40 turns (66 turns when one
    device never churned)."""
    story = more_story_file("hollywood.z3")
    _busy_loop_ended_by_churn(story, 0.25, tmp_path)


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_a_busy_loop_among_nameless_things_churns_textworld(textworld_kitchen, tmp_path):
    """A TextWorld kitchen: the oven, fridge and door opened and shut among fidgets. None of them has a name in the
    object table, so the situation once saw none of it and the loop ran 72 turns to the no-progress backstop; the
    things at hand are now part of it (GameView.unnamed) and the loop ends by churn within its 40 turns. Examining
    and pushing them change only the flags the library sets on what it lists, which are not the world's."""
    loop = _busy_loop_ended_by_churn(textworld_kitchen, 0.25, tmp_path)
    assert len({r["situation"] for r in loop}) > 1
    fidgets = [r for r in loop if r["command"].split()[0] in trajectories.FIDGETS]
    assert fidgets and not any("new_object_state" in r["novelty"] for r in fidgets)


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_what_the_player_drops_is_the_players_doing_once_the_player_is_found_textworld(textworld_one_room, tmp_path):
    """A one-room TextWorld game: the player's object is unknown until the first thing moves. From then on, what
    the player drops and takes again moves no other thing (no new arrangement, which is progress), and a busy loop
    of taking, dropping, opening and shutting ends by churn within its 40 turns."""
    loop = _busy_loop_ended_by_churn(textworld_one_room, 0.5, tmp_path)
    handled = [r for r in loop if r["command"].split()[0] in ("take", "drop")]
    assert handled and not any("new_arrangement" in r["novelty"] for r in handled)


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_the_parsers_note_on_a_shared_word_is_no_progress_textworld(textworld_onions, tmp_path):
    """A busy loop in a kitchen of onions: `look under white` is answered "(the white onion) You find nothing of
    interest.", and the parser notes its choice in a global. Neither the note nor that global is the world's, so the
    fidget is no new game variable, and the loop ends by churn within its 40 turns (44 when each such answer counted
    as new)."""
    loop = _busy_loop_ended_by_churn(textworld_onions, 0.75, tmp_path)
    noted = [r for r in loop if r["response"].lstrip().startswith("(the white onion)")]
    assert noted and not any("new_game_variable" in r["novelty"] for r in noted[1:])


@pytest.mark.slow  # TextWorld compiles the game (tw-make)
def test_what_a_look_sets_is_no_progress_for_the_churn_rule_textworld(textworld_quest, tmp_path):
    """A busy loop in a quest's kitchen: `look under bug`, answered `You find nothing of interest.`, sets a global its
    library keeps of what was looked under, a value never seen with an answer never given. Looking changes nothing,
    so it is no new game variable and the loop ends by churn within its 40 turns (58 when it counted)."""
    loop = _busy_loop_ended_by_churn(textworld_quest, 0.25, tmp_path)
    looks = [r for r in loop if r["command"].startswith("look under")]
    assert looks and not any("new_game_variable" in r["novelty"] for r in looks)
