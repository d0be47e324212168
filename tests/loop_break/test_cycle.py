"""The command-cycle rule (managers.loop_break.cycle): the same few commands in the same order, round after round,
whatever rooms or state the game gives them. Fed records directly: no Jericho, no LLM."""

from __future__ import annotations

import math

from managers.loop_break.cycle import CommandCycleCount
from session.config import LoopBreakConfig
from session.records import GameView
from tests.factories import loop_break, turn_record

DEFAULT = LoopBreakConfig()


def detector() -> CommandCycleCount:
    return CommandCycleCount(DEFAULT.cycle.turns, DEFAULT.cycle.rounds, DEFAULT.cycle.max_period)


def feed(cycle: CommandCycleCount, turns: list[tuple], signals: tuple[str, ...] = ()) -> int | None:
    """Feed (command, room before, room after) turns; the first turn (1-based) on which a cycle is found."""
    for turn, (command, before, after) in enumerate(turns, start=1):
        cycle.observe(turn_record(turn, command=command, room_id_before=before, room_id_after=after), signals)
        if cycle.found() is not None:
            return turn
    return None


def ab(rounds: int) -> list[tuple]:
    return [("north", 1, 2), ("south", 2, 1)] * rounds


def test_two_rooms_back_and_forth_is_a_cycle_at_cycle_turns():
    cycle = detector()
    assert feed(cycle, ab(20)) == DEFAULT.cycle.turns
    assert cycle.found() == (2, DEFAULT.cycle.turns)


def test_a_long_round_needs_cycle_rounds_of_it():
    """Seven commands a round: three rounds (21 turns), not cycle_turns; healthy runs come round twice in long
    cycles (seastalker's sonar and course)."""
    round_ = [
        ("look", 1, 1),
        ("examine can", 1, 1),
        ("examine case", 1, 1),
        ("inventory", 1, 1),
        ("east", 1, 2),
        ("smell", 2, 2),
        ("west", 2, 1),
    ]
    assert feed(detector(), round_ * 2) is None
    assert feed(detector(), round_ * 5) == 3 * len(round_)


def test_one_command_again_and_again_is_no_cycle():
    """The same command every turn is the repetition rule's (or a walk down a corridor)."""
    assert feed(detector(), [("east", n, n + 1) for n in range(40)]) is None
    assert feed(detector(), [("push button", 1, 1)] * 40) is None


def test_new_rooms_do_not_break_a_cycle_but_points_and_waits_do():
    """A carousel sends the same moves to other rooms: the cycle goes on. Points, or a wait, start it again."""
    carousel = [("north", 1, 10 + n) if n % 2 == 0 else ("south", 10 + n - 1, 1) for n in range(40)]
    assert feed(detector(), carousel, signals=("new_room", "new_room_inventory")) == DEFAULT.cycle.turns
    assert feed(detector(), ab(20), signals=("score",)) is None
    cycle = detector()
    assert feed(cycle, ab(6)) is None
    feed(cycle, [("wait", 1, 1)])
    assert feed(cycle, ab(20)) == DEFAULT.cycle.turns


def test_a_conversation_with_the_same_detours_learns_something_each_round():
    """weapon: `reply`, `look`, `inventory`, each reply answered with news (new_information): no cycle."""
    cycle = detector()
    for turn in range(1, 40):
        command = ("reply", "look", "inventory")[turn % 3]
        signals = ("new_information",) if command == "reply" else ()
        cycle.observe(turn_record(turn, command=command, room_id_before=1, room_id_after=1), signals)
        assert cycle.found() is None


def test_a_straight_walk_with_a_look_in_every_room_is_no_cycle():
    """`south`, `look` down a long corridor: every move enters a room the others did not."""
    walk = [step for n in range(20) for step in (("south", n, n + 1), ("look", n + 1, n + 1))]
    assert feed(detector(), walk) is None


def test_nearest_counts_down_from_the_second_round():
    cycle = detector()
    feed(cycle, ab(1) + [("north", 1, 2)])
    assert cycle.nearest() is None  # three commands: not two rounds yet
    feed(cycle, [("south", 2, 1)])
    assert cycle.nearest() == (DEFAULT.cycle.turns - 4, 2)


def test_the_cycle_rule_stops_the_episode_and_says_why():
    breaker = loop_break()
    for turn, (command, before, after) in enumerate(ab(20), start=1):
        verdict = breaker.observe(turn_record(turn, command=command, room_id_before=before, room_id_after=after))
        if verdict.terminate:
            break
    assert verdict.reason == "stuck_no_progress" and turn == DEFAULT.cycle.turns
    [stop] = [e for e in verdict.events if e["event_type"] == "stuck_termination"]
    assert stop["rule"] == "cycle"
    assert stop["why"] == "the same 2 commands in the same order for 16 turns"


def test_cycle_turns_zero_turns_the_rule_off():
    breaker = loop_break(cycle={"turns": 0})
    for turn, (command, before, after) in enumerate(ab(20), start=1):
        verdict = breaker.observe(turn_record(turn, command=command, room_id_before=before, room_id_after=after))
        assert not verdict.terminate or verdict.events[-1]["rule"] != "cycle"
    assert breaker.detectors["cycle"].cycle.nearest() is None


def test_the_warning_before_a_cycle_stop_names_the_cycle():
    """The countdown's nearest stop is the cycle: the warning says so (a new room would not help), and counts down to
    the turn the rule fires."""
    breaker = loop_break()
    lead = DEFAULT.warning_lead_turns
    warned = {}
    for turn, (command, before, after) in enumerate(ab(20), start=1):
        view = GameView(before, f"room {before}", 0, turn, (), (), "hash", "")
        warning = breaker.status(turn, view, ()).warning
        if warning:
            warned[turn] = warning
        if breaker.observe(turn_record(turn, command=command, room_id_before=before, room_id_after=after)).terminate:
            break
    assert turn == DEFAULT.cycle.turns
    first = min(warned)
    # shown once the cycle has come steering_pressure of its way (healthy play never does) and its stop is within
    # the lead: "in N turns" before the turn that stops
    steered = math.ceil(DEFAULT.steering_pressure * DEFAULT.cycle.turns) + 1
    assert first == max(DEFAULT.cycle.turns - lead + 1, steered)
    left = DEFAULT.cycle.turns - first + 1
    assert "GOING ROUND IN CIRCLES" in warned[first] and "same 2 commands in the same order" in warned[first]
    commands = warned[first].split("same order (", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(commands) == sorted({command for command, _, _ in ab(2)})  # it says which commands cycle
    assert f"END THIS EPISODE in {left} turns" in warned[first]


def test_rooms_without_an_id_are_told_apart_by_their_descriptions():
    """spirit and curses have rooms without a room id: a walk through them with a look in each is no cycle (every
    description differs), a loop between two of them is (their descriptions come back)."""

    def turns(descriptions):
        cycle = detector()
        for turn, text in enumerate(descriptions, start=1):
            for command, response in (("north", text), ("look", text)):
                cycle.observe(turn_record(turn, command=command, response=response), ())
                if cycle.found() is not None:
                    return turn
        return None

    assert turns([f"Passage {chr(65 + n)}. A long passage." for n in range(20)]) is None
    assert turns(["Hall. A hall.", "Cellar. A cellar."] * 10) is not None
