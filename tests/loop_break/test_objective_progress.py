"""Design 001's unit tests (docs/design.md): progress = score change OR a verified objective completion.

Mapping: the design's "stuck timer" is `ProgressResult.turns_stuck` (turns since the last progress, after a turn),
`score_increased` / `objective_completed` are the fired `signals` ("score", "objective"), and completions come
from the real `ObjectiveManager` (state mode) exactly as the orchestrator wires it: map.observe, then
objectives.observe -> record.objectives_completed, then LoopBreak.observe, then ObjectiveManager.prune.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from loguru import logger

from managers.loop_break import DestinationPredictor, LoopBreak
from managers.map_graph import MapGraph
from managers.objectives import ObjectiveManager
from session.config import LoopBreakConfig
from session.records import GameObject, GameView, TurnRecord
from tests.factories import seed_loop_break, turn_record

KITCHEN = 7
LANTERN = GameObject(40, "brass lantern")
BOTTLE = GameObject(41, "glass bottle")


def make_record(
    turn: int,
    *,
    command: str = "wait",
    score_before: int = 0,
    score_after: int | None = None,
    inventory_before: tuple[str, ...] = (),
    inventory_after: tuple[str, ...] | None = None,
    room_before: int = KITCHEN,
    room_after: int | None = None,
) -> TurnRecord:
    return turn_record(
        turn,
        command=command,
        room_id_before=room_before,
        room_name_before="Kitchen",
        room_id_after=room_before if room_after is None else room_after,
        room_name_after="Kitchen",
        score_before=score_before,
        score_after=score_after,
        inventory_before=inventory_before,
        inventory_after=inventory_after,
        response="Taken." if command.startswith("take") else "Time passes.",
    )


def kitchen_view(objects=(LANTERN, BOTTLE), inventory=()) -> GameView:
    return GameView(KITCHEN, "Kitchen", 0, 0, tuple(inventory), tuple(objects), "h", "")


class Episode:
    """The orchestrator's per-turn wiring of map, objectives and loop break, on synthetic records."""

    def __init__(self, **config):
        self.config = LoopBreakConfig(**seed_loop_break(config))
        self.map = MapGraph()
        self.map.visit(KITCHEN, "Kitchen", 0)
        self.objectives = ObjectiveManager(self.config)
        self.loop_break = LoopBreak(self.config, self.map, DestinationPredictor("map", self.map))

    def discover(self, turn: int, view: GameView | None = None) -> None:
        self.objectives.discover(turn, view or kitchen_view(), self.map)

    def turn(self, record: TurnRecord):
        self.map.observe(record)
        record = replace(record, objectives_completed=self.objectives.observe(record))
        verdict = self.loop_break.observe(record)
        self.objectives.prune(record.turn, verdict.progress.last_progress_turn)
        return verdict

    def idle(self, first: int, last: int, score: int = 0):
        return {t: self.turn(make_record(t, score_before=score)) for t in range(first, last + 1)}


def take_lantern(turn: int, **kwargs) -> TurnRecord:
    return make_record(turn, command="take lantern", inventory_after=("brass lantern",), **kwargs)


def test_score_increase_resets_timer():
    episode = Episode()
    stuck = episode.idle(1, 12)
    assert stuck[12].progress.turns_stuck == 12
    verdict = episode.turn(make_record(13, score_before=0, score_after=10))
    assert verdict.progress.signals == ("score",)
    assert verdict.progress.turns_stuck == 0 and verdict.progress.last_progress_turn == 13
    assert episode.loop_break.progress.turns_stuck(13) == 0


def test_objective_completion_resets_timer():
    episode = Episode()
    episode.discover(1)
    assert "Take the brass lantern" in episode.objectives.current()
    stuck = episode.idle(1, 15)
    assert stuck[15].progress.turns_stuck == 15
    verdict = episode.turn(take_lantern(16))
    assert [c["objective"] for c in episode.objectives.completed_objectives] == ["Take the brass lantern"]
    assert verdict.progress.signals == ("objective",)
    assert verdict.progress.turns_stuck == 0 and verdict.progress.last_progress_turn == 16
    assert not verdict.terminate


def test_both_score_and_objective_reset_timer():
    episode = Episode()
    episode.discover(1)
    episode.idle(1, 9)
    verdict = episode.turn(take_lantern(10, score_before=0, score_after=5))
    assert set(verdict.progress.signals) == {"score", "objective"}
    assert verdict.progress.turns_stuck == 0 and verdict.progress.last_progress_turn == 10


def test_no_progress_increments_timer():
    episode = Episode()
    episode.discover(1)
    verdicts = episode.idle(1, 10)
    assert [v.progress.turns_stuck for v in verdicts.values()] == list(range(1, 11))
    assert all(v.progress.signals == () for v in verdicts.values())
    assert episode.objectives.completed_objectives == []


def test_fallback_to_score_only_when_no_objectives():
    """No objectives discovered: taking an item completes nothing; only the score moves the timer."""
    episode = Episode()
    episode.idle(1, 5)
    verdict = episode.turn(take_lantern(6))
    assert verdict.progress.signals == () and verdict.progress.turns_stuck == 6
    verdict = episode.turn(make_record(7, score_before=0, score_after=5))
    assert verdict.progress.signals == ("score",) and verdict.progress.turns_stuck == 0


def test_feature_flag_disabled_ignores_objectives():
    episode = Episode(enable_objective_based_progress=False)
    assert "objective" not in episode.loop_break.signals
    episode.discover(1)
    episode.idle(1, 5)
    verdict = episode.turn(take_lantern(6))
    assert len(episode.objectives.completed_objectives) == 1  # the completion is recorded ...
    assert verdict.progress.signals == () and verdict.progress.turns_stuck == 6  # ... but is not progress
    verdict = episode.turn(make_record(7, score_before=0, score_after=5))
    assert verdict.progress.signals == ("score",) and verdict.progress.turns_stuck == 0

    # The same with "objective" missing from progress_signals, and the flag on: same behaviour.
    by_signals = Episode(progress_signals=["score", "new_room"])
    by_signals.discover(1)
    assert by_signals.turn(take_lantern(1)).progress.signals == ()


def test_objective_removal_does_not_count_as_progress():
    """Objectives dropped by staleness (prune) or by a failed take are no progress: the timer keeps counting."""
    episode = Episode(objective_staleness_turns=5)
    episode.discover(1)
    assert len(episode.objectives.current()) == 4  # two exits, two items
    verdicts = episode.idle(1, 5)
    assert len(episode.objectives.current()) == 4  # discovered on turn 1: 4 turns old at turn 5
    verdicts.update(episode.idle(6, 6))
    assert episode.objectives.current() == ()  # 5 turns without progress: all stale, pruned
    verdicts.update(episode.idle(7, 10))
    assert [v.progress.turns_stuck for v in verdicts.values()] == list(range(1, 11))
    assert episode.objectives.completed_objectives == []

    failed = Episode()
    failed.discover(1)
    verdict = failed.turn(make_record(1, command="take bottle"))  # nothing taken
    assert "Take the glass bottle" not in failed.objectives.current()
    assert verdict.progress.signals == () and verdict.progress.turns_stuck == 1
    verdict = failed.turn(make_record(2, command="east"))  # exit does not exist: dropped, not completed
    assert "Explore east from Kitchen" not in failed.objectives.current()
    assert verdict.progress.signals == () and verdict.progress.turns_stuck == 2
    assert failed.objectives.completed_objectives == []


@pytest.mark.parametrize(
    "checked_at, terminated",
    [(31, False), (40, False), (41, True)],
    ids=["30-turns-after", "39-turns-after-edge", "40-turns-after-outside"],
)
def test_objective_completion_within_window(checked_at, terminated):
    """Completion at turn 1, no_progress.max_turns 40: still within the window at turn 40 (39 turns stuck), outside
    at turn 41 (40 turns stuck -> terminated). The episode ends when turns_stuck reaches no_progress.max_turns."""
    episode = Episode(no_progress={"max_turns": 40})
    episode.discover(1)
    first = episode.turn(take_lantern(1))
    assert first.progress.signals == ("objective",)
    verdicts = episode.idle(2, checked_at)
    assert verdicts[checked_at].progress.turns_stuck == checked_at - 1
    assert verdicts[checked_at].terminate is terminated
    assert not any(v.terminate for t, v in verdicts.items() if t < checked_at)
    if terminated:
        assert verdicts[checked_at].reason == "stuck_no_progress"


def test_logging_includes_both_metrics():
    episode = Episode()
    episode.discover(1)
    captured: list[dict] = []
    sink = logger.add(lambda message: captured.append(dict(message.record["extra"])), level="DEBUG")
    try:
        idle = episode.idle(1, 6)
        verdict = episode.turn(take_lantern(7, score_before=0, score_after=5))
    finally:
        logger.remove(sink)

    check = [e for e in idle[6].events if e["event_type"] == "progress_check"]
    assert check == [
        {"event_type": "progress_check", "turn": 6, "signals": [], "turns_stuck": 6, "last_progress_turn": 0}
    ]
    by_type = {e["event_type"]: e for e in verdict.events}
    assert by_type["progress_check"]["signals"] == ["score", "objective"]
    assert by_type["progress_check"]["turns_stuck"] == 0
    detected = by_type["progress_detected"]
    assert detected["signals"] == ["score", "objective"]
    assert detected["turns_stuck_before_reset"] == 6 and detected["turn"] == 7
    # The same fields reach the log (loguru, bound as extra fields).
    logged = [e for e in captured if e.get("event_type") == "progress_detected"]
    assert logged and logged[-1]["signals"] == ["score", "objective"] and logged[-1]["turns_stuck_before_reset"] == 6
    assert any(e.get("event_type") == "progress_check" and e.get("turns_stuck") == 6 for e in captured)
