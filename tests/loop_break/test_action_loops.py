"""The action-loop detectors one at a time, fed synthetic records: each test fails when its rule is broken.

No Jericho and no LLM: a detector is a small class with typed state fed one record per turn, and every rule has a
test that fails when it is removed or moved. The designs the sections cite are described in docs/design.md.
"""

from __future__ import annotations

import pytest

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.loop_break.action_loops import (
    ActionLoopsConfig,
    CollaborationLoopCount,
    FailureGate,
    IdenticalActionCount,
    ParseFailureCount,
    action_key,
)
from managers.loop_break.progress import ProgressResult
from managers.map_graph import MapGraph
from session.commands import DIRECTIONS, canonical_command, command_similarity
from session.config import LoopBreakConfig
from session.records import GameView
from tests.factories import turn_record
from tests.helpers import raised

NO_PROGRESS = ProgressResult(turn=0, signals=(), turns_stuck=1, last_progress_turn=0)
PROGRESS = ProgressResult(turn=0, signals=("score",), turns_stuck=0, last_progress_turn=0)


def gate_step(gate: FailureGate, record, progress, events: list[dict], clock: int | None = None):
    """One turn of the failure gate: the request it opens; its events added to `events`."""
    request, raised = gate.observe(record, progress, clock=clock)
    events.extend(raised)
    return request


def kinds(events: list[dict]) -> list[str]:
    return [event["event_type"] for event in events]


# -- one normalisation for every detector ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("n", "north"),
        ("go north", "N"),
        ("walk ne", "northeast"),
        ("take the lamp", "take lamp"),
        ("open a door", "open door"),
        ("eat some lunch", "eat lunch"),
        ("  Take   LAMP. ", "take lamp"),
        ("x the lamp", "examine lamp"),
        ("look at the lamp", "x lamp"),
        ("l", "look"),
        ("I", "inventory"),
        ("z", "wait"),
        ("get lamp", "take lamp"),
        ("pick up the lamp", "take lamp"),
        ("get it", "take it"),
    ],
)
def test_canonical_command_merges_spellings_of_one_command(a, b):
    assert canonical_command(a) == canonical_command(b)
    assert command_similarity(a, b) == 1.0
    assert action_key(a) == action_key(b)


@pytest.mark.parametrize("command", ["give sword to troll", "look under rug", "put coin in box", "get in boat"])
def test_canonical_command_keeps_prepositions(command):
    """Only articles are dropped: `to`, `under` and `in` change what a command means (`get in boat` is no take)."""
    assert canonical_command(command) == command


def test_similarity_is_word_by_word():
    assert command_similarity("examine troll", "examine trolls") > 0.9
    assert 0.85 < command_similarity("take lamp", "take lamps") < 0.9
    assert command_similarity("turn on lamp", "turn off lamp") < 0.5  # one word decides
    assert command_similarity("attack troll with sword", "attack troll with knife") < 0.5
    assert command_similarity("troll attack", "attack troll") < 0.5  # the same words in another order differ
    assert command_similarity("take lamp", "take brass lamp") == 0.0


@pytest.mark.parametrize(("a", "b"), [("northeast", "northwest"), ("ne", "go nw"), ("s", "e"), ("in", "out")])
def test_different_moves_are_never_alike(a, b):
    assert command_similarity(a, b) == 0.0


# -- collaboration loops: the similarity threshold decides --------------------------------------------------------
def reproposals(detector: CollaborationLoopCount, first: str, again: str, times: int) -> list[dict]:
    events: list[dict] = []
    events.extend(detector.note_rejection(1, 7, first))
    for turn in range(2, 2 + times):
        events.extend(detector.note_rejection(turn, 7, again))
    return events


def test_reproposing_a_near_copy_makes_the_rejection_final():
    detector = CollaborationLoopCount(similarity=0.85, window=20, threshold=3)
    events = reproposals(detector, "examine troll", "examine trolls", 3)
    assert kinds(events) == ["collaboration_loop"] * 3 + ["rejection_final"]
    assert detector.is_final(7, "examine the troll") == "examine troll"
    assert detector.is_final(8, "examine troll") is None  # final in that room only


def test_n_and_north_are_one_rejected_command():
    detector = CollaborationLoopCount(similarity=1.0, window=20, threshold=2)
    reproposals(detector, "n", "go north", 2)
    assert detector.is_final(7, "north") == "north"


@pytest.mark.parametrize(("similarity", "final"), [(0.85, True), (0.9, False)])
def test_the_similarity_threshold_decides(similarity, final):
    """`take lamps` after `take lamp` was rejected (0.89): the same command at 0.85, another one at 0.9."""
    detector = CollaborationLoopCount(similarity=similarity, window=20, threshold=2)
    events = reproposals(detector, "take lamp", "take lamps", 2)
    assert ("rejection_final" in kinds(events)) is final


def test_another_object_is_another_command():
    detector = CollaborationLoopCount(similarity=0.5, window=20, threshold=1)
    assert reproposals(detector, "attack troll with sword", "attack troll with knife", 1) == []


def test_reproposals_count_up_to_the_threshold_exactly():
    detector = CollaborationLoopCount(similarity=0.85, window=20, threshold=3)
    assert "rejection_final" not in kinds(reproposals(detector, "open door", "open door", 2))
    detector = CollaborationLoopCount(similarity=0.85, window=20, threshold=3)
    assert "rejection_final" in kinds(reproposals(detector, "open door", "open door", 3))


def test_rejections_older_than_the_window_are_forgotten():
    detector = CollaborationLoopCount(similarity=0.85, window=5, threshold=1)
    events: list[dict] = []
    events.extend(detector.note_rejection(1, 7, "open door"))
    events.extend(detector.note_rejection(7, 7, "open door"))
    assert events == []


# -- unparseable replies (design 003): both triggers, the streak reset and the memory ----------------------------------
def unparseable_turn(turn: int, replies: list[str], valid_at_end: bool) -> object:
    failures = [{"kind": "prose", "reply": reply} for reply in replies]
    fallback = None if valid_at_end else "unparseable_reply:prose"
    return turn_record(turn, parse_failures=failures, fallback=fallback)


def test_streak_of_unparseable_replies_triggers_at_the_limit():
    detector = ParseFailureCount(threshold=100, streak_limit=5, memory=50)
    events: list[dict] = []
    for turn in range(1, 5):
        events.extend(detector.observe(unparseable_turn(turn, [f"reply {turn}"], valid_at_end=False)))
    assert events == [] and not detector.guidance_active
    events.extend(detector.observe(unparseable_turn(5, ["reply 5"], valid_at_end=False)))
    assert kinds(events) == ["parse_failure_recovery"] and detector.guidance_active
    assert events[0]["streak"] == 5


def test_a_valid_reply_ends_the_streak():
    """Two bad replies then a good one, every turn: never five in a row, so never recovery."""
    detector = ParseFailureCount(threshold=100, streak_limit=3, memory=50)
    events: list[dict] = []
    for turn in range(1, 20):
        events.extend(detector.observe(unparseable_turn(turn, [f"a{turn}", f"b{turn}"], valid_at_end=True)))
    assert events == [] and detector.streak == 0


def test_a_streak_within_one_turn_counts():
    detector = ParseFailureCount(threshold=100, streak_limit=3, memory=50)
    events: list[dict] = []
    events.extend(detector.observe(unparseable_turn(1, ["x", "y", "z"], valid_at_end=True)))
    assert kinds(events) == ["parse_failure_recovery"]


def test_the_same_reply_again_and_again_triggers_at_the_threshold():
    """Mixed with valid replies (no streak), the same unparseable text `threshold` times still triggers."""
    detector = ParseFailureCount(threshold=4, streak_limit=100, memory=50)
    events: list[dict] = []
    for turn in range(1, 4):
        events.extend(detector.observe(unparseable_turn(turn, ["### Action: north"], valid_at_end=True)))
    assert events == []
    events.extend(detector.observe(unparseable_turn(4, ["###  ACTION: north"], valid_at_end=True)))
    assert kinds(events) == ["parse_failure_recovery"] and events[0]["same_reply_count"] == 4


def test_identical_replies_beyond_the_memory_are_forgotten():
    detector = ParseFailureCount(threshold=3, streak_limit=100, memory=4)
    events: list[dict] = []
    for turn in range(1, 10):
        replies = ["same"] if turn % 3 == 1 else [f"other {turn}"]
        events.extend(detector.observe(unparseable_turn(turn, replies, valid_at_end=True)))
    assert events == []  # "same" 3x in 9 failures, never 3x among the last 4


def test_guidance_ends_after_a_clean_turn():
    detector = ParseFailureCount(threshold=100, streak_limit=2, memory=50)
    events: list[dict] = []
    events.extend(detector.observe(unparseable_turn(1, ["x", "y"], valid_at_end=True)))
    assert detector.guidance_active
    events.extend(detector.observe(unparseable_turn(2, ["z"], valid_at_end=True)))
    assert detector.guidance_active  # still struggling: the guidance stays
    events.extend(detector.observe(turn_record(3)))
    assert not detector.guidance_active


def test_parse_failure_memory_is_configuration():
    assert ActionLoopsConfig(parse_failure_memory=7).parse_failure_memory == 7


# -- failure gate (design 002): reset on progress or a human only ------------------------------------------------------
def failure(turn: int, command: str = "open grating", response: str = "The grating is locked.") -> object:
    return turn_record(turn, command=command, response=response, room_id_before=4, result_category="refused")


def test_gate_opens_at_the_third_repeat_of_one_failure():
    gate = FailureGate(gate_after=3, action="terminate", memory=50)
    events: list[dict] = []
    requests = [gate_step(gate, failure(turn), NO_PROGRESS, events) for turn in range(1, 5)]
    assert requests[:3] == [None, None, None]
    assert requests[3] is not None and requests[3].loop_count == 3


def test_gate_waits_for_turns_without_progress():
    """Three identical slips right after progress are clumsy play: the gate opens only once the episode has gone
    gate_min_turns_stuck turns without progress (the next multiple of gate_after)."""
    gate = FailureGate(gate_after=3, action="terminate", memory=50, min_turns_stuck=12)
    events: list[dict] = []
    soon = [gate_step(gate, failure(t), ProgressResult(t, (), t, 0), events) for t in range(1, 5)]
    assert soon == [None] * 4 and gate.loop_count == 3
    later = [gate_step(gate, failure(t), ProgressResult(t, (), t + 10, 0), events) for t in range(5, 8)]
    assert later[:2] == [None, None] and later[2] is not None and later[2].loop_count == 6


def test_a_failure_typed_now_and_then_while_waiting_opens_no_gate():
    """advent's noisy walkthrough waits for the cave to close and types `dance` every five to nine turns among the
    waits: a slip now and then, not a loop. The same failure every other turn opens the gate at its third repeat."""
    gate = FailureGate(gate_after=3, action="terminate", memory=50, max_gap=5)
    events: list[dict] = []
    assert [gate_step(gate, failure(turn), NO_PROGRESS, events) for turn in (376, 382, 391, 397)] == [None] * 4
    assert gate.loop_count == 3
    dense = FailureGate(gate_after=3, action="terminate", memory=50, max_gap=5)
    requests = [gate_step(dense, failure(turn), NO_PROGRESS, events) for turn in (1, 3, 5, 7)]
    assert requests[:3] == [None] * 3 and requests[3] is not None


def test_the_gate_counts_turns_without_progress_on_the_stop_rules_clock():
    """A player waiting for a timed event who types the same wrong verb between waits (advent's noisy walkthrough at
    Y2: `dance` six times among twelve waits) has waited, not been stuck: the stop rules leave those turns out of
    their clock, and so does the gate."""
    waiting = FailureGate(gate_after=3, action="terminate", memory=50, min_turns_stuck=14, max_gap=4)
    counted = FailureGate(gate_after=3, action="terminate", memory=50, min_turns_stuck=14, max_gap=4)
    for turn in range(20, 27, 2):
        progress = ProgressResult(turn, (), turn, 0)
        assert gate_step(waiting, failure(turn), progress, [], clock=2) is None
        request = gate_step(counted, failure(turn), progress, [])
    assert waiting.loop_count == counted.loop_count == 3
    assert request is not None


def test_the_gate_forgets_the_turns_of_failures_gone_from_its_memory():
    gate = FailureGate(gate_after=3, action="terminate", memory=5, max_gap=5)
    for turn in range(1, 200):
        gate_step(gate, failure(turn, command=f"xyzzy{turn}"), NO_PROGRESS, [])
    assert len(gate.seen_at) <= 6


def test_progress_clears_the_failure_history():
    """Two repeats, then progress: the same failure after it starts afresh, as if never seen."""
    gate = FailureGate(gate_after=3, action="terminate", memory=50)
    events: list[dict] = []
    for turn in range(1, 4):
        assert gate_step(gate, failure(turn), NO_PROGRESS, events) is None
    assert gate.loop_count == 2
    gate_step(gate, turn_record(4), PROGRESS, events)
    assert gate.loop_count == 0 and "loop_counter_reset" in kinds(events)
    assert gate_step(gate, failure(5), NO_PROGRESS, events) is None
    assert gate.loop_count == 0  # first sight since progress: not yet a repeat
    for turn in range(6, 8):
        assert gate_step(gate, failure(turn), NO_PROGRESS, events) is None
    assert gate_step(gate, failure(8), NO_PROGRESS, events) is not None


def test_a_human_answer_resets_the_gate():
    gate = FailureGate(gate_after=2, action="human", memory=50)
    events: list[dict] = []
    for turn in range(1, 4):
        request = gate_step(gate, failure(turn), NO_PROGRESS, events)
    assert request is not None
    events.append(gate.accept_guidance("try the keys", 3))
    assert gate.loop_count == 0 and gate.guidance == "try the keys"
    assert gate_step(gate, failure(4), NO_PROGRESS, events) is None
    assert gate.loop_count == 0


def test_different_slips_are_no_loop():
    gate = FailureGate(gate_after=2, action="terminate", memory=50)
    events: list[dict] = []
    for turn, command in enumerate(["open grating", "unlock grating", "pull grating", "kick grating"], start=1):
        assert gate_step(gate, failure(turn, command), NO_PROGRESS, events) is None
    assert gate.loop_count == 0


# -- identical actions (design 003): reset on progress, and the ban's exact length ---------------------------------
def test_progress_resets_the_identical_action_count():
    detector = IdenticalActionCount(warning=5, recovery=10, ban_turns=10)
    events: list[dict] = []
    for turn in range(1, 10):
        events.extend(detector.observe(turn_record(turn, command="push button"), NO_PROGRESS))
    events.extend(detector.observe(turn_record(10, command="push button"), PROGRESS))
    assert "identical_action_recovery" not in kinds(events) and detector.count == 0
    for turn in range(11, 20):
        events.extend(detector.observe(turn_record(turn, command="push button"), NO_PROGRESS))
    assert "identical_action_recovery" not in kinds(events)
    events.extend(detector.observe(turn_record(20, command="push button"), NO_PROGRESS))
    assert kinds(events).count("identical_action_recovery") == 1


def test_the_ban_lasts_exactly_ban_turns():
    detector = IdenticalActionCount(warning=2, recovery=3, ban_turns=4)
    events: list[dict] = []
    for turn in range(1, 4):
        events.extend(detector.observe(turn_record(turn, command="n"), NO_PROGRESS))
    assert detector.bans == {"north": 7}  # recovered on turn 3: forbidden on turns 4, 5, 6 and 7
    for turn in range(4, 7):
        events.extend(detector.observe(turn_record(turn, command="look"), NO_PROGRESS))
        assert "north" in detector.bans, f"forbidden on turn {turn + 1}"
    events.extend(detector.observe(turn_record(7, command="look"), NO_PROGRESS))
    assert "north" not in detector.bans  # turn 8 is free


def test_identical_counts_spellings_of_one_command_together():
    detector = IdenticalActionCount(warning=3, recovery=100, ban_turns=4)
    events: list[dict] = []
    for turn, command in enumerate(["n", "north", "go north"], start=1):
        events.extend(detector.observe(turn_record(turn, command=command), NO_PROGRESS))
    assert kinds(events) == ["identical_action_warning"]


# -- a final rejection never shuts the player in -----------------------------------------------------------------
def test_a_move_rejected_for_good_opens_again_once_every_other_way_is_a_wall():
    """night's Hall: its two exits were rejected for good while the repeat penalty steered the agent to the ten
    directions it had not tried, and those were all walls. Kept, the rejections shut it in for good; they hold only
    while another way out is open (an untried direction, an exit not rejected)."""
    game_map = MapGraph()
    breaker = LoopBreak(LoopBreakConfig(), game_map, DestinationPredictor("map", game_map))
    hall = GameView(1, "Hall", 0, 0, (), (), "h", "")
    game_map.observe(turn_record(1, command="west", room_id_before=1, room_id_after=2))
    game_map.observe(turn_record(2, command="east", room_id_before=2, room_id_after=1))
    game_map.observe(turn_record(3, command="south", room_id_before=1, room_id_after=3))
    events: list[dict] = []
    for turn in range(4, 8):
        events.extend(breaker.note_rejection(turn, 1, "west"))
        events.extend(breaker.note_rejection(turn, 1, "south"))
    walls = [d for d in DIRECTIONS if d not in ("west", "south")]
    for turn, wall in enumerate(walls[:-1], start=10):
        game_map.observe(turn_record(turn, command=wall, room_id_before=1, room_id_after=1))
    assert breaker.blocked("west", hall, 30) is not None  # one direction still untried
    assert "west" in raised(events, breaker.status(30, hall, ())).banned
    game_map.observe(turn_record(31, command=walls[-1], room_id_before=1, room_id_after=1))
    assert breaker.blocked("w", hall, 32) is None and breaker.blocked("south", hall, 32) is None
    assert not {"west", "south"} & set(raised(events, breaker.status(32, hall, ())).banned)


def test_a_move_the_game_took_is_never_rejected_for_good_there():
    """Curses' maze: the walkthrough walks `south` again and again inside one room id. A move the game took from a
    room (it moved the player, or changed the world without refusing the way) stays possible there however often it
    is re-proposed after rejections; one the game refused (a wall) is rejected for good as before."""
    game_map = MapGraph()
    breaker = LoopBreak(LoopBreakConfig(), game_map, DestinationPredictor("map", game_map))
    maze = GameView(1, "Maze", 0, 0, (), (), "h", "")
    taken = turn_record(1, command="s", room_id_before=1, room_id_after=1, world_hash_after="moved")
    wall = turn_record(2, command="w", room_id_before=1, room_id_after=1, result_category="blocked_exit")
    for record in (taken, wall):
        game_map.observe(record)
        breaker.observe(record)
    events: list[dict] = []
    for turn in range(3, 8):
        events.extend(breaker.note_rejection(turn, 1, "south"))
        events.extend(breaker.note_rejection(turn, 1, "west"))
    assert breaker.blocked("south", maze, 9) is None
    assert breaker.blocked("west", maze, 9) is not None
    assert "south" not in raised(events, breaker.status(9, maze, ())).banned
