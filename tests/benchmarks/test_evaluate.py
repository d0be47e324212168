"""The evaluation runner end to end on two small scenarios: its figures are those of the events it recorded."""

from __future__ import annotations

import importlib

import pytest

from benchmarks.evaluate import evaluate, main
from session.records import EVENTS_FILE, read_record_dicts

STUCK = """
description = "test: three walkthrough steps, then looking around forever"
game = "zork1"
kind = "stuck"
[prefix]
walkthrough_steps = 3
[loop]
commands = ["look", "examine tree"]
length = 60
"""
UNPARSEABLE = """
description = "test: an LLM that answers with lists of options"
game = "zork1"
kind = "stuck"
driver = "unparseable_llm"
[loop]
commands = ["Options: north or east."]
length = 45
"""


def _episode_records(episodes, scenario, mode, state):
    [events] = (episodes / scenario / mode / state).glob(f"*/{EVENTS_FILE}")
    return read_record_dicts(events.parent)


@pytest.mark.slow  # two scenario episodes in subprocesses
def test_runner_reports_what_the_events_say(rom_path, tmp_path):
    for name, text in (("small_stuck", STUCK), ("small_unparseable", UNPARSEABLE)):
        (tmp_path / f"{name}.toml").write_text(text)
    episodes = tmp_path / "episodes"
    result = evaluate(
        rom_path,
        [str(tmp_path / "small_stuck.toml"), str(tmp_path / "small_unparseable.toml")],
        "pyproject.toml",
        tmp_path / "out",
        with_overhead=False,
        episodes=episodes,
    )
    reports = {r["scenario"]: r for r in result["scenarios"]}
    assert (tmp_path / "out" / "results.json").is_file() and (tmp_path / "out" / "results.md").is_file()

    for scenario, mode in (("small_stuck", "forced"), ("small_stuck", "looper"), ("small_unparseable", "llm")):
        for state in ("on", "off"):
            figures = reports[scenario][f"{mode}_{state}"]
            records = _episode_records(episodes, scenario, mode, state)
            events = [(r["turn"], e) for r in records for e in r["events"]]
            assert figures["turns"] == len(records) == records[-1]["turn"]
            assert figures["penalties_applied"] == sum(e["event_type"] == "loop_penalty_applied" for _, e in events)
            assert figures["warnings_shown"] == sum(e["event_type"] == "loop_break_warning" for _, e in events)
            detections = {}
            for turn, event in events:
                if event["event_type"] == "loop_detected":
                    detections.setdefault(event["kind"], turn)
            for kind, turn in detections.items():
                assert figures["first_detection"][kind] == turn
            termination = [t for t, e in events if e["event_type"] == "stuck_termination"]
            stuck = figures["termination_reason"] == "stuck_no_progress"
            assert termination == ([figures["turns"]] if stuck else [])
            if mode != "looper":  # scripted commands: on ends stuck, off runs to the end
                assert stuck == (state == "on")
                assert state == "on" or figures["termination_reason"] == "max_turns"
        on, off = reports[scenario][f"{mode}_on"], reports[scenario][f"{mode}_off"]
        assert on["turns_saved"] == off["turns"] - on["turns"]
        turn = result["llm_turn"]  # the measured cost of a stuck LLM turn prices what was saved
        assert on["usd_saved"] == round(on["turns_saved"] * turn["cost_per_turn_usd"], 4)
        assert on["llm_calls_saved"] == round(on["turns_saved"] * turn["total_calls_per_turn"])
        if mode != "looper":
            assert on["turns_saved"] > 0 and on["usd_saved"] > 0

    assert "Money: a stuck LLM turn costs" in (tmp_path / "out" / "results.md").read_text()
    unparseable = reports["small_unparseable"]["llm_on"]
    assert unparseable["first_detection"]["parse_failure"] == 2


def test_unknown_scenario_is_a_clear_error(rom_path, tmp_path, capsys):
    assert main(["--rom", str(rom_path), "--scenario", "no_such_scenario", "--out", str(tmp_path)]) == 2
    assert "unknown scenario 'no_such_scenario'" in capsys.readouterr().err


def test_scenario_for_another_game_is_a_clear_error(rom_path, tmp_path, capsys):
    (tmp_path / "other.toml").write_text(STUCK.replace('game = "zork1"', 'game = "zork2"'))
    assert main(["--rom", str(rom_path), "--scenario", str(tmp_path / "other.toml"), "--out", str(tmp_path)]) == 2
    assert "is for zork2" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("module", "args"),
    [
        ("benchmarks.throughput", ["--rom", "{missing}"]),
        ("benchmarks.studies.signals", ["--rom", "{missing}"]),
        ("benchmarks.studies.critic_rejections", ["--games", "{missing}"]),
        ("benchmarks.corpus", ["--games", "{missing}", "--out", "{tmp}"]),
        ("benchmarks.evaluate", ["--rom", "{missing}", "--scenario", "all", "--out", "{tmp}"]),
        ("benchmarks.llm_calls", ["--rom", "{missing}"]),
        ("benchmarks.studies.replay_rules", ["--corpus", "{missing}"]),
    ],
)
def test_benchmark_with_a_missing_input_says_so_in_one_line(module, args, tmp_path, capsys):
    """Every benchmark command-line: one error line and exit 2 for a story file or folder that is not there."""
    main_of = importlib.import_module(module).main
    missing = str(tmp_path / "missing.z5")
    assert main_of([a.format(missing=missing, tmp=tmp_path) for a in args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "Traceback" not in err[0]


def test_memory_probe_plays_every_turn_it_is_asked_for(rom_path):
    """The memory figure is only worth its turn count: a loop that ends early measures nothing (the stop rules, or a
    grue once the looper is steered into the dark, could end the probe long before its 1,000 and 10,000 turns), so a
    short episode is an error."""
    from benchmarks.evaluate import play_memory_probe

    probe = play_memory_probe(str(rom_path), 150)
    assert (probe["turns"], probe["termination_reason"]) == (150, "max_turns")


def test_overhead_lines_name_every_figure_they_print():
    from benchmarks.evaluate import overhead_lines

    walk = {
        "orchestrator_ms": 1.2,
        "raw_step_ms": 0.03,
        "overhead_ms": 1.17,
        "ratio": 40.0,
        "loop_break_ms": 0.2,
        "progress_facts_ms": 0.3,
    }
    loop = {"turns": 1000, "orchestrator_ms": 2.0, "loop_break_ms": 0.5, "progress_facts_ms": 0.2}
    memory = {
        "1000": {"peak_rss_mb": 72.7, "turns": 1000},
        "10000": {"peak_rss_mb": 72.5, "turns": 10000},
        "growth_1k_to_10k": -0.0028,
    }
    text = overhead_lines({"overhead": walk, "overhead_looping": loop, "memory": memory})
    assert "the loop break 0.5 ms/turn" in text and "72.5 MB after 10,000 turns (-0.3%)" in text
    assert overhead_lines({}) == ""
