"""benchmarks.studies.replay_rules on records fed from files: the stop turns and how close healthy runs came to a
stop."""

from __future__ import annotations

import json

from benchmarks.studies.replay_rules import evaluate
from session.config import GameConfiguration
from session.records import EVENTS_FILE
from tests.factories import turn_record


def run(tmp_path, name: str, kind: str, variant: str, commands: list[str]) -> dict:
    """A forced corpus row whose records make progress on turn 1 (a new room), then play `commands` in that room."""
    records = [turn_record(1, command="north", room_id_after=1, novelty=("new_room",), new_room=True)]
    records += [turn_record(t, command=c, room_id_before=1, room_id_after=1) for t, c in enumerate(commands, 2)]
    path = tmp_path / name / EVENTS_FILE  # as the corpus keeps a run's records: its episode's folder
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r.to_json()) + "\n" for r in records))
    return {
        "game": name,
        "kind": kind,
        "variant": variant,
        "mode": "forced",
        "records": str(path),
        "healthy_until": 999,
    }


def test_healthy_margins_give_the_longest_stretch_and_the_most_repeats(tmp_path):
    """A walkthrough that examines a new thing every turn for 24 turns: 24 turns without progress, no repeat. A
    noisy run looking around for 30 turns repeats from its second look: once the window holds no more new turns than
    repetition_misses (and the clock passed repetition_min_turns), the repetition rule stops it (a false stop,
    reported as one)."""
    config = GameConfiguration.from_toml("pyproject.toml")
    rows = [
        run(tmp_path, "reader", "optimal", "walkthrough", [f"examine thing {n}" for n in range(24)]),
        run(tmp_path, "looker", "noisy", "factor 3, seed 1", ["look"] * 30),
    ]
    result = evaluate(rows, config)
    rules = config.loop_break
    # Turn 1 (the progress) and 2 (the first look) are new; the clock counts from turn 1.
    stop = max(rules.repetition.min_turns + 1, 2 + rules.repetition.window - rules.repetition.misses)
    assert result["healthy_margins"]["optimal"] == {
        "runs": 1,
        "longest_without_progress": [24, "reader/walkthrough"],
        "most_repeats": [0, ""],
        "most_churn_changes": [0, ""],
        "most_churn_repeats": [0, ""],
    }
    noisy = result["healthy_margins"]["noisy factor 3"]
    assert noisy["longest_without_progress"] == [stop - 1, "looker/factor 3, seed 1"]
    assert noisy["most_repeats"] == [rules.repetition.window - rules.repetition.misses, "looker/factor 3, seed 1"]
    assert result["healthy_false_stops"] == [f"looker/noisy/factor 3, seed 1 @ {stop}"]
