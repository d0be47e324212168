"""The stop rules' clock under the default configuration (measured on noisy walkthroughs of seeds 2 and 3): waits up to
`wait_allowance`, and up to `wait_detours` turns between waits with each, stop no clock, those waits never repeat (the
ones after them do), and a stretch that keeps reaching rooms through more than `trek_rooms` of them gets up to
`trek_extra_turns` more. Fed records directly: no Jericho, no LLM. The varied play of the clock's tests (`examine thing
1`, `examine thing 2`...) is a new try every turn, which the fruitless rule ends at `fruitless.turns`; they switch that
rule off to watch the clock alone."""

from __future__ import annotations

from managers.loop_break import LoopBreak
from managers.loop_break.fruitless import FruitlessTries
from managers.loop_break.progress import ProgressTracker
from managers.loop_break.window import RepetitionWindow
from session.commands import tries_something
from session.config import GameConfiguration, LoopBreakConfig
from tests.factories import first_stop, loop_break, turn_record


def play(breaker: LoopBreak, turns: list[tuple]) -> tuple[int | None, str | None]:
    """Feed (command, room[, outcome category]) turns without progress, each command from its own situation unless it
    repeats; the turn and rule of the stop, or (None, None)."""
    rooms_before = [turns[0][1], *(room for _, room, *_ in turns)]
    return first_stop(
        breaker,
        (
            turn_record(
                turn,
                command=command,
                room_id_before=before,
                room_id_after=room,
                situation="here",
                result_category=category[0] if category else "success",
            )
            for turn, ((command, room, *category), before) in enumerate(zip(turns, rooms_before), start=1)
        ),
    )


def repetition_stop(new_turns: int, config: LoopBreakConfig) -> int:
    """The turn the repetition rule fires on when only the first `new_turns` turns are new: once the window holds
    at most repetition_misses of them, and not before repetition_min_turns."""
    return max(config.repetition.min_turns, new_turns + config.repetition.window - config.repetition.misses)


def test_waiting_stops_no_clock_up_to_the_allowance():
    """Only waiting, in one room: the first wait_allowance waits stop no clock and never repeat. The first wait past
    them in a row takes that back: every wait of the window repeats and every turn counts on the repetition rule's
    clock, so it ends there, or once the waits fill the window. With the designs' counting the first two waits are
    new (from the start, then from here) and every one after them repeats."""
    config = LoopBreakConfig()
    first_loop = max(config.wait_allowance + 1, config.repetition.window)
    assert play(loop_break(), [("wait", 1)] * 100) == (first_loop, "repetition")
    assert play(loop_break(wait_allowance=30), [("wait", 1)] * 100) == (31, "repetition")
    assert play(loop_break(repetition={"enabled": False}), [("wait", 1)] * 100) == (
        config.no_progress.max_turns + config.wait_allowance,
        "no_progress",
    )
    assert play(loop_break(wait_allowance=0), [("wait", 1)] * 100) == (repetition_stop(2, config), "repetition")


def test_waits_between_repeats_do_not_make_a_loop():
    """A wait after every observation (as a player does waiting for a sheriff) keeps the window from repeating, up
    to wait_allowance waits; the same observations without the waits are a loop (a cycle of two commands, or, with
    the cycle rule off, a repeating window), and so are they with more waits."""
    config = LoopBreakConfig()
    looking = [("look", 1), ("inventory", 1)]
    assert play(loop_break(), (looking + [("wait", 1)]) * config.wait_allowance) == (None, None)
    assert play(loop_break(), (looking + [("wait", 1)]) * 30)[1] == "repetition"
    assert play(loop_break(), looking * 45) == (config.cycle.turns, "cycle")
    assert play(loop_break(cycle={"turns": 0}), looking * 45) == (repetition_stop(3, config), "repetition")


def test_looking_around_between_waits_is_left_out_with_the_waits():
    """The turns between two waits are left out too, up to wait_detours with each wait (a player looks around while
    the sheriff comes): a loop that mixes in a wait is stopped about wait_allowance × wait_detours turns later than
    one that only waits. Turns before the first wait and after the last one count: a player who looks around and
    then waits, or waits and then loops, gets the waits alone."""
    config = LoopBreakConfig()
    clock_only = loop_break(repetition={"enabled": False})  # the no-progress rule alone reads the clock
    waiting = [("look", 1), ("inventory", 1), ("wait", 1)] * 60
    between = 2  # look and inventory between two waits, each left out up to wait_detours
    credit = config.wait_allowance + (config.wait_allowance - 1) * min(between, config.wait_detours)
    assert play(clock_only, waiting) == (config.no_progress.max_turns + credit, "no_progress")
    assert play(loop_break(repetition={"enabled": False}, wait_detours=0), waiting) == (
        config.no_progress.max_turns + config.wait_allowance,
        "no_progress",
    )
    varied = [(f"examine thing {turn}", 1) for turn in range(100)]
    no_progress_only = loop_break(repetition={"enabled": False}, fruitless={"turns": 0})
    assert play(no_progress_only, varied[:40] + [("wait", 1)] * 100) == (
        config.no_progress.max_turns + config.wait_allowance,
        "no_progress",
    )
    assert play(loop_break(fruitless={"turns": 0}), [("wait", 1)] * 10 + varied) == (
        config.no_progress.max_turns + 10,
        "no_progress",
    )


def trek(turns: int, every: int, until: int | None = None) -> list[tuple[str, int]]:
    """New commands every turn (nothing repeats), reaching a room not seen before every `every` turns (up to turn
    `until`, then staying)."""
    return [(f"examine thing {turn}", 1 + min(turn, until or turns) // every) for turn in range(turns)]


def test_a_trek_through_many_rooms_gets_the_longer_limit():
    """A walk that keeps reaching rooms through more than no_progress.trek_rooms of them gets up to
    no_progress.trek_extra_turns more than no_progress.max_turns; one that stops reaching rooms gets
    no_progress.trek_grace turns after the last one; going round the same rooms, or staying in a few, gets
    no_progress.max_turns."""
    config = LoopBreakConfig()
    clock = {"fruitless": {"turns": 0}}
    assert play(loop_break(**clock), trek(200, every=6)) == (
        config.no_progress.max_turns + config.no_progress.trek_extra_turns,
        "no_progress",
    )
    last_room = 49  # the turn of index 48
    assert last_room + config.no_progress.trek_grace > config.no_progress.max_turns
    assert play(loop_break(**clock), trek(200, every=6, until=48)) == (
        last_room + config.no_progress.trek_grace,
        "no_progress",
    )
    rooms = config.no_progress.trek_rooms + 3
    cycle = [(f"examine thing {turn}", 1 + turn % rooms) for turn in range(200)]
    assert play(loop_break(**clock), cycle) == (config.no_progress.max_turns, "no_progress")
    assert play(loop_break(no_progress={"trek_grace": 0}, **clock), cycle) == (
        config.no_progress.max_turns + config.no_progress.trek_extra_turns,
        "no_progress",
    )
    camp = [(f"examine thing {turn}", 1 + turn % 2) for turn in range(200)]
    assert play(loop_break(**clock), camp) == (config.no_progress.max_turns, "no_progress")


def test_the_warning_counts_down_on_the_same_clock():
    """The warning's countdown (`turns_to_stop`) reads the stop rules' clock: after wait_allowance waits and 8 new
    commands, 8 turns count and the window holds no repeat yet."""
    config = LoopBreakConfig()
    turns = [("wait", 1)] * config.wait_allowance + [(f"examine thing {n}", 1) for n in range(8)]
    breaker = loop_break()
    play(breaker, turns)
    # The earliest: a window of repeats but for repetition_misses turns.
    assert breaker.turns_to_stop(len(turns)) == config.repetition.window - config.repetition.misses
    breaker = loop_break(repetition={"enabled": False})
    play(breaker, turns)
    # 8 new tries in the 8 turns that count: the fruitless rule's share holds (the waits try nothing), so it is next.
    assert breaker.turns_to_stop(len(turns)) == config.fruitless.turns - 8
    breaker = loop_break(repetition={"enabled": False}, fruitless={"turns": 0})
    play(breaker, turns)
    assert breaker.turns_to_stop(len(turns)) == config.no_progress.max_turns - 8


def test_waits_repeat_only_past_the_free_waits():
    """The designs' counting (no free waits): a wait repeats like any command. With free waits, the first ones since
    the last progress never repeat and the ones after them do; progress frees them again."""
    seeds = RepetitionWindow(window=4)
    for turn in range(1, 7):
        seeds.observe(turn_record(turn, command="wait", situation="here"), progress=False)
    assert seeds.result().repeating
    detector = RepetitionWindow(window=4, free_waits=3)
    flags = []
    for turn in range(1, 10):
        detector.observe(turn_record(turn, command="z", situation="here"), progress=turn == 6)
        flags.append(detector.recent[-1][0])
    # Waits 1-3 are free; 4 and 5 repeat; turn 6 made progress (and its wait was the fifth); 7-9 are free again.
    assert flags == [False, False, False, True, True, True, False, False, False]


def test_more_waits_in_a_row_than_the_free_ones_all_repeat():
    """Once the player has waited more times in a row than the free waits, and for a whole window, every wait of the
    window repeats, also one from a situation a thief or a timer changed meanwhile; a look between waits keeps the
    free waits free. Waits never make progress but by score, a new room or an objective."""
    waiting = RepetitionWindow(window=4, free_waits=3)
    for turn in range(1, 5):
        waiting.observe(turn_record(turn, command="wait", situation=f"changed {turn}"), progress=False)
    assert waiting.waited_out and waiting.result().repeats == 4  # 4 waits in a row, every situation new
    looking = RepetitionWindow(window=4, free_waits=3)
    for turn, command in enumerate(["wait", "wait", "wait", "look", "wait", "wait"], start=1):
        looking.observe(turn_record(turn, command=command, situation="here"), progress=False)
    assert not looking.waited_out and looking.result().repeats == 2  # only the waits past the free ones
    tracker = ProgressTracker(set(LoopBreakConfig().progress_signals))
    thief = ["new_object_state", "new_game_variable"]
    assert not tracker.observe(turn_record(1, command="wait", novelty=thief)).signals
    assert tracker.observe(turn_record(2, command="z", novelty=["new_room"])).signals == ("new_room",)
    assert tracker.observe(turn_record(3, command="take feather", novelty=["new_object_state"])).progress


def test_raising_no_progress_max_turns_raises_the_trek_limit_with_it():
    """A user who gives play more time (no_progress.max_turns 100) needs no second key: the trek limit follows."""
    config = GameConfiguration.from_dict(
        {"loop_break": {"no_progress": {"max_turns": 100}, "warning_lead_turns": 10, "fruitless": {"turns": 0}}}
    )
    expected = 100 + config.loop_break.no_progress.trek_extra_turns
    assert play(loop_break(**config.loop_break.model_dump()), trek(300, every=6)) == (expected, "no_progress")


def test_moves_looks_inventories_and_waits_try_nothing():
    """The fruitless rule's count: what a player does to get about, take stock or let time pass is no try."""
    assert all(tries_something(c) for c in ("examine lamp", "look at wall", "look under rug", "xyzzq", "say hello"))
    assert not any(tries_something(c) for c in ("n", "go north", "look", "L", "inventory", "i", "wait", "z", ""))


def test_new_tries_that_get_nowhere_are_fruitless():
    """Semi-novel stuck play: a new command every turn in one room, whatever the game answers (a refusal, a parser
    error, or a world hash a timer changes). It repeats nothing, so only the no-progress rule would end it; the
    fruitless rule ends it fruitless_turns after the last progress, and the warning counts down to it. Walking to
    and fro between tries changes nothing (the share leaves out moves made again). A player who looks round or
    checks the inventory between tries, or who says the same wrong verb between new tries, is not fruitless. Every
    try here is about one thing the game turns down (`frob thing 1`, `frob thing 2`...), which the obstacle rule also
    ends: it is off where the backstop is watched."""
    config = LoopBreakConfig()
    answers = ("parser_failure", "refused", "no_effect", "success")
    no_obstacle = {"obstacle": {"turns": 0}}

    def tries(every: int, between=lambda turn: ("look", "inventory", "north", "south")[turn % 4]) -> list[tuple]:
        return [
            (f"frob thing {turn}", 1, answers[turn % 4]) if turn % every == 0 else (between(turn), 1, "no_effect")
            for turn in range(1, 101)
        ]

    assert play(loop_break(), tries(1)) == (config.fruitless.turns, "fruitless")
    assert play(loop_break(fruitless={"turns": 0}, **no_obstacle), tries(1)) == (
        config.no_progress.max_turns,
        "no_progress",
    )
    walking = tries(2, between=lambda turn: ("north", "south")[turn // 2 % 2])
    turn, rule = play(loop_break(), walking)
    assert rule == "fruitless" and turn < config.fruitless.turns + 5  # its first three moves were new ones
    assert play(loop_break(), tries(2))[1] != "fruitless"
    assert play(loop_break(repetition={"enabled": False}, **no_obstacle), tries(2)) == (
        config.no_progress.max_turns,
        "no_progress",
    )
    assert play(loop_break(**no_obstacle), tries(2, between=lambda turn: "dance")) == (
        config.no_progress.max_turns,
        "no_progress",
    )
    breaker = loop_break(repetition={"enabled": False})
    play(breaker, tries(1)[:24])
    assert breaker.turns_to_stop(24) == config.fruitless.turns - 24


def test_tries_across_first_visits_with_these_things_in_hand_are_one_fruitless_stretch():
    """zork2's carousel: a semi-novel loop whose every few turns a walk reaches a room seen before only with other
    things in hand (`new_room_inventory`). That progress restarts every clock, so the loop ran 66 turns; the fruitless
    rule also counts across it (`fruitless_weak_signals`) and ends the loop fruitless_turns after its last other
    progress. Without the weak signals it never ends here (each first visit comes before any clock runs out)."""
    config = LoopBreakConfig()

    def carousel(breaker: LoopBreak) -> tuple[int | None, str | None]:
        for turn in range(1, 101):
            walks = turn % 8 == 0
            record = turn_record(
                turn,
                command="east" if walks else f"frob thing {turn}",
                room_id_before=turn // 8,
                room_id_after=turn // 8 + walks,
                situation=f"here {turn // 8 + walks}",
                novelty=("new_room_inventory",) if walks else (),
                result_category="success" if walks else "refused",
            )
            verdict = breaker.observe(record)
            if verdict.terminate:
                [event] = [e for e in verdict.events if e["event_type"] == "stuck_termination"]
                assert "no progress but new_room_inventory" in event["why"]
                return turn, event["rule"]
        return None, None

    assert config.weak_signals == ["new_room_inventory"]
    assert carousel(loop_break()) == (config.fruitless.turns, "fruitless")
    assert carousel(loop_break(weak_signals=[])) == (None, None)


def test_fruitless_tries_count_each_try_once_and_leave_out_waits_and_moves_made_again():
    """`x lamp` and `examine lamp` are one try; a move, look or wait is none; waits and moves made again leave the
    share's turns, which are never fewer than half of the turns that could have tried something."""
    tries = FruitlessTries()
    turns = [
        ("frob door", False),
        ("frob door", False),
        ("wait", False),
        ("north", True),
        ("north", False),
        ("look", False),
        ("x lamp", False),
        ("examine lamp", False),
    ]
    for command, again in turns:
        tries.observe(command, again)
    assert (tries.turns, tries.waits, tries.walked_again, tries.tried) == (8, 1, 1, {"frob door", "examine lamp"})
    assert tries.clock == 7
    assert tries.holds(2 / 6) and not tries.holds(2.1 / 6)  # 7 turns less the wait's and the move made again
    for _ in range(6):
        tries.observe("south", True)
    assert tries.holds(2 / 6.5) and not tries.holds(2.1 / 6.5)  # never less than half of the 13 turns
    tries.restart()
    assert (tries.turns, tries.tried) == (0, set()) and not tries.holds(0.1)


def test_waits_before_the_tries_do_not_dilute_the_fruitless_share():
    """zork3: the walkthrough waits nine times for the ship, then a semi-novel loop starts, a new try every other
    turn with a step out and back between. The waits try nothing and count on no clock; counted in the share, they
    kept the loop going to 64 turns. Left out, the rule ends it as for a loop with no waits before it."""
    config = LoopBreakConfig()
    loop = [
        (f"frob thing {turn}", 1, "refused") if turn % 2 else (("north", "south")[turn // 2 % 2], 1, "success")
        for turn in range(1, 81)
    ]
    alone_turn, alone_rule = play(loop_break(), loop)
    waited_turn, waited_rule = play(loop_break(), [("wait", 1, "no_effect")] * 9 + loop)
    assert alone_rule == waited_rule == "fruitless"
    assert waited_turn - 9 <= alone_turn < config.fruitless.turns + 5
