"""A batch's results carry walkthrough progress beside the score: the mean share of checkpoints per cell and per
cell and game, in results.json, results.csv and results.md; a game without a walkthrough has none, not 0."""

from __future__ import annotations

import csv
import json

from batch.results import COLUMNS, write_results


def _row(game: str, best: int, progress: float | None, episode: int = 1) -> dict:
    """A finished job's manifest row, as batch.jobs.run_job writes it."""
    return {
        "id": f"default/{game}/seed1/ep{episode}",
        "cell": "default",
        "game": game,
        "seed": 1,
        "episode": episode,
        "status": "finished",
        "final_score": best,
        "best_score": best,
        "max_score": 350 if game == "zork1" else None,
        "progress": progress,
        "turns": 100,
        "termination_reason": "max_turns",
        "llm_calls": 0,
        "tokens": 0,
        "cost_usd": 0.0,
        "wall_seconds": 1.0,
    }


ROWS = [_row("zork1", 0, 0.05), _row("zork1", 10, 0.15, episode=2), _row("lgop", 0, None)]
"""Two zork1 episodes that both scored nothing much but went different distances, and lgop (no walkthrough)."""


def test_progress_stands_beside_the_score_and_every_column_stays(tmp_path):
    assert COLUMNS.index("progress") == COLUMNS.index("score_share") + 1
    assert {"mean_score", "best_score", "score_share", "mean_turns", "terminations"} <= set(COLUMNS)
    write_results(tmp_path, ROWS, {"default": {}}, 1.0, 1)
    header = (tmp_path / "results.md").read_text().splitlines()[6]
    assert "| best_score | score_share | progress | mean_turns |" in header


def test_the_mean_progress_leaves_out_games_without_a_walkthrough(tmp_path):
    result = write_results(tmp_path, ROWS, {"default": {}}, 1.0, 1)
    [cell] = result["cells"]
    games = {line["game"]: line for line in result["games"]}
    assert cell["progress"] == 0.1 and games["zork1"]["progress"] == 0.1
    assert games["lgop"]["progress"] is None
    assert json.loads((tmp_path / "results.json").read_text())["cells"][0]["progress"] == 0.1
    with (tmp_path / "results.csv").open(newline="") as handle:
        written = {line["game"]: line["progress"] for line in csv.DictReader(handle)}
    assert written == {"all": "0.1", "zork1": "0.1", "lgop": ""}


def test_a_manifest_row_without_progress_reads_as_none(tmp_path):
    """A row whose summary had no `progress`: no share, as a row without rewinds counts none."""
    rows = [{k: v for k, v in _row("zork1", 5, 0.2).items() if k != "progress"}]
    result = write_results(tmp_path, rows, {"default": {}}, 1.0, 1)
    assert result["cells"][0]["progress"] is None
