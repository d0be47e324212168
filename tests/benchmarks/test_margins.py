"""benchmarks.margins' report: every late loop and every healthy run it lists is named or counted, none dropped."""

from __future__ import annotations

from benchmarks.margins import markdown


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
