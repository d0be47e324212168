"""benchmarks.margins' report: every late loop and every healthy run it lists is named or counted, none dropped; a
rule that acts only while steering is judged on the turns on which it could act."""

from __future__ import annotations

from agents.replay_agent import ReplayAgent
from benchmarks.margins import evaluate, markdown
from session.config import GameConfiguration
from tests.helpers import PYPROJECT, make_config, run_episode


def test_the_report_counts_the_late_loops_and_runs_it_does_not_name():
    late = [f"game{i} busy_camping/cut 0.25: {50 + i}" for i in range(9)]
    warned = [f"game{i} noisy/factor 3, seed 1: 2" for i in range(14)]
    result = {
        "healthy_runs": 14,
        "stopped": [],
        "warned": warned,
        "penalised": [],
        "turned_to_reject": [],
        "not_run_as_written": [],
        "rules": {},
        "games": {},
        "stuck": {
            "busy_camping (held-out)": {"target": 40, "runs": 20, "within_target": 11, "slowest": 58, "late": late}
        },
        "tuning_games": [],
        "levels": [],
    }
    text = markdown(result, [])
    assert "game5 busy_camping/cut 0.25: 55 and 3 more |" in text and "game6 busy" not in text
    assert "game11 noisy/factor 3, seed 1: 2 and 2 more" in text
    assert "warned: 14;" in text


def test_a_rule_that_acts_only_while_steering_is_judged_where_it_could_act(rom_path, tmp_path):
    """zork1: `take house` said five times in ten turns and refused at least three times is a signature loop by
    count, but no stop rule comes near in so few turns, so the signature penalty could never act: safe, with the raw
    peak beside it."""
    commands = ["look"] + [
        step for detour in ("look", "inventory", "examine mailbox", "score") for step in ("take house", detour)
    ]
    commands.append("take house")
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": len(commands)})
    played = run_episode(rom_path, config, ReplayAgent(commands))
    row = {
        "kind": "noisy",
        "variant": "factor 1, seed 1",
        "mode": "forced",
        "records": str(played.folder / "events.jsonl"),
        "healthy_until": len(commands),
        "stem": "zork1",
    }
    result = evaluate([row], GameConfiguration.from_toml(PYPROJECT))
    signature = result["rules"]["signature"]
    assert signature["held-out"][0] >= 1.0
    assert signature["acting"][0] == 0.0
    assert signature["safe"]
    assert result["rules"]["no_progress"]["acting"] is None
    assert "0 (never steered)" in markdown(result, [])
