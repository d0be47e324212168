"""`main.py batch --preset tales`: TALES's protocol (100 steps, seeds 1-5, every story file Jericho supports with a
maximum score) as batch settings, explicit flags winning over it, and its table: the best normalized score over the
seeds per game, the mean over the games, and the published figures beside them, labelled as published."""

from __future__ import annotations

import json

import pytest

from batch import runner
from batch.presets import PRESETS, choose_stories
from batch.tales import PUBLISHED, THIS_RUN, write_table
from tests.helpers import CORPUS, ROOT, story_file

TALES = PRESETS["tales"]


def _job(game: str, seed: int, steps: int = 100) -> dict:
    """A job as runner.plan makes it, with the parts of its configuration the table reads."""
    config = {"gameplay": {"agent": "offline", "max_turns_per_episode": steps}, "llm": {"agent_model": "m"}}
    return {"id": f"default/{game}/seed{seed}/ep1", "cell": "default", "game": game, "seed": seed, "episode": 1,
            "config": config}  # fmt: skip


def _row(game: str, seed: int, best: int, max_score: int, progress: float | None, turns: int = 100) -> dict:
    """A finished job's manifest row, as batch.jobs.run_job writes it from the episode's summary.json."""
    return {
        **{k: v for k, v in _job(game, seed).items() if k != "config"},
        "status": "finished",
        "final_score": best,
        "best_score": best,
        "max_score": max_score,
        "progress": progress,
        "turns": turns,
        "termination_reason": "max_turns" if turns == 100 else "game_over",
        "llm_calls": 2 * turns,
        "tokens": 1000 * turns,
        "cost_usd": 0.001 * turns,
        "wall_seconds": 1.0,
    }


ZORK1_BEST = [0, 35, 70, 10, 0]
"""zork1's best scores over the five seeds (of 350): the best normalized is 70 / 350 = 20 %, the mean 6.6 %."""
ROWS = [_row("zork1", seed, best, 350, 0.1 * seed) for seed, best in zip(TALES.seeds, ZORK1_BEST, strict=True)]
ROWS += [_row("night", seed, 0, 10, None, turns=50) for seed in TALES.seeds]  # ends at 50 steps, no walkthrough
JOBS = [_job(game, seed) for game in ("zork1", "night") for seed in TALES.seeds]


# -- the preset's settings ------------------------------------------------------------------------------------------
def test_the_preset_fixes_100_steps_5_seeds_and_the_shared_games():
    args = runner.parse_args(["--preset", "tales", "--agent", "offline"])
    assert (args.max_turns, args.seeds, args.episodes) == (100, "1,2,3,4,5", 1)
    assert args.games == "../shared/games"
    assert args.command == "uv run python main.py batch --preset tales --agent offline"


def test_explicit_flags_win_over_the_preset():
    args = runner.parse_args(["--preset", "tales", "--seeds", "2", "--max-turns", "7", "--games", "zork1"])
    assert (args.max_turns, args.seeds, args.games) == (7, "2", "zork1")


def test_without_a_preset_the_batch_keeps_its_own_defaults():
    args = runner.parse_args(["--games", "zork1"])
    assert (args.max_turns, args.seeds, args.episodes, args.preset) == (None, "1", 1, None)
    with pytest.raises(SystemExit):
        runner.parse_args([])  # --games is required without a preset


def test_the_preset_plays_only_games_jericho_scores():
    """lgop has no Jericho bindings: no maximum score, no normalized score, so the preset leaves it out and says why."""
    chosen, left_out = choose_stories(TALES, [story_file("zork1.z5"), story_file("lgop.z3")])
    assert chosen == [story_file("zork1.z5")]
    assert left_out == {"lgop": "no Jericho bindings"}


def test_the_planned_jobs_are_the_protocol(tmp_path):
    args = runner.parse_args(["--preset", "tales", "--agent", "offline", "--out", str(tmp_path)])
    args.games = f"{story_file('zork1.z5')},{story_file('lgop.z3')}"
    jobs = runner.plan(args)
    assert {job["game"] for job in jobs} == {"zork1"}
    assert [job["seed"] for job in jobs] == [1, 2, 3, 4, 5]
    assert {job["config"]["gameplay"]["max_turns_per_episode"] for job in jobs} == {100}


def test_a_folder_without_a_game_it_plays_is_one_error_line(tmp_path, capsys):
    flags = ["--preset", "tales", "--games", str(story_file("lgop.z3")), "--out", str(tmp_path), "--quiet"]
    assert runner.main([*flags, "--agent", "offline"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert (
        line == "error: --preset tales: it plays none of the 1 story files of --games (e.g. lgop: no Jericho bindings)"
    )


@pytest.mark.slow
def test_every_corpus_game_but_lgop_is_played():
    stories = [story_file(name) for name in CORPUS]
    chosen, left_out = choose_stories(TALES, stories)
    assert list(left_out) == ["lgop"] and len(chosen) == len(CORPUS) - 1


# -- the table --------------------------------------------------------------------------------------------------
def test_the_table_gives_the_best_and_mean_normalized_score_per_game_and_their_mean(tmp_path):
    result = write_table(tmp_path, TALES, ROWS, JOBS, {"lgop": "no Jericho bindings"}, "cmd", "abc1234")
    [cell] = result["cells"]
    games = {g["game"]: g for g in cell["games"]}
    zork1, night = games["zork1"], games["night"]
    assert zork1["best_normalized"] == 0.2 and zork1["mean_normalized"] == round(115 / 5 / 350, 4)
    assert zork1["best_progress"] == 0.5 and night["best_progress"] is None  # no walkthrough: none, not 0
    assert zork1["tokens_per_step"] == 1000 and zork1["llm_calls_per_step"] == 2 and zork1["cost_per_step_usd"] == 0.001
    assert night["mean_steps"] == 50
    assert cell["mean"]["best_normalized"] == 0.1 and cell["mean"]["games"] == 2
    assert result["differs_from_protocol"] == []
    page = (tmp_path / "tales.md").read_text()
    assert "| zork1 | 350 | 5 | 20.0 % | 6.6 % | 50.0 % | 100.0 | 1000.0 | 2.0 | 0.001000 |" in page
    assert "| **mean of 2 games** |  | 10 | **10.0 %** | **3.3 %** | 50.0 % | 75.0 |" in page
    assert "Command: `cmd`" in page and "Commit: abc1234" in page
    assert "left out: lgop: no Jericho bindings" in page and "Not the TALES protocol" not in page
    assert json.loads((tmp_path / "tales.json").read_text()) == result


def test_the_published_figures_stand_beside_the_run_labelled_as_published(tmp_path):
    write_table(tmp_path, TALES, ROWS, JOBS, {}, "cmd", "abc1234")
    page = (tmp_path / "tales.md").read_text()
    assert f"| {THIS_RUN} (best of seeds) | offline | 20.0 % | 10.0 % (2 games) |" in page
    assert f"| {PUBLISHED} | o3 (medium) | 15.5 % | 15.7 % (TALES's Jericho games) |" in page
    assert f"| {PUBLISHED} | claude-3.5-haiku | 13.1 % | - |" in page
    assert "| published (arXiv 2602.15867, its own protocol) | Claude Opus 4.5 | about 75 / 350 (21.4 %) | - |" in page
    reference = json.loads((tmp_path / "tales.json").read_text())["reference"]
    assert reference["published"] is True and "TALES" in reference["source"]


def test_the_reference_file_holds_the_published_figures():
    reference = json.loads(TALES.reference_path().read_text())
    assert reference["published"] is True and "microsoft/tale-suite" in reference["source"]
    zork1 = {f["model"]: f["zork1"] for f in reference["figures"] if f["zork1"] is not None}
    assert zork1 == {"o3 (medium)": 15.5, "gpt-4o": 14.5, "claude-3.7-sonnet": 13.5, "claude-3.5-haiku": 13.1}
    means = {f["model"]: f["jericho_mean"] for f in reference["figures"] if f["jericho_mean"] is not None}
    assert means == {"o3 (medium)": 15.7, "o3 (high)": 16.1}
    assert all(study["published"] is True for study in reference["other_studies"])


def test_a_run_off_the_protocol_says_so(tmp_path):
    jobs = [_job("zork1", 1, steps=5)]
    rows = [_row("zork1", 1, 0, 350, 0.0, turns=5)]
    result = write_table(tmp_path, TALES, rows, jobs, {}, "cmd", "abc1234")
    assert result["differs_from_protocol"] == ["seeds 1 (protocol: 1,2,3,4,5)", "5 steps an episode (protocol: 100)"]
    assert "**Not the TALES protocol**: seeds 1 (protocol: 1,2,3,4,5); 5 steps" in (tmp_path / "tales.md").read_text()


# -- a real run -------------------------------------------------------------------------------------------------
@pytest.mark.slow  # a spawned worker, an episode and its checkpoints: about 15 s
def test_a_short_run_of_the_preset_writes_its_table_beside_the_results(tmp_path):
    out = tmp_path / "tales"
    flags = ["--preset", "tales", "--games", f"{story_file('zork1.z5')},{story_file('lgop.z3')}", "--seeds", "1"]
    flags += ["--max-turns", "5", "--agent", "offline", "--critic", "offline", "--workers", "1", "--quiet"]
    assert runner.main([*flags, "--out", str(out)]) == 0
    assert (out / "results.md").is_file()
    result = json.loads((out / "tales.json").read_text())
    [cell] = result["cells"]
    [zork1] = cell["games"]
    assert (zork1["game"], zork1["episodes"], zork1["max_score"], zork1["mean_steps"]) == ("zork1", 1, 350, 5)
    assert result["left_out"] == {"lgop": "no Jericho bindings"}
    assert "Not the TALES protocol" in (out / "tales.md").read_text()


def test_the_docs_quote_the_protocol_run_of_the_offline_agent():
    """docs/viewer-and-batches.md quotes tales.md (tests/docs checks every quoted row is in it); the file is a run of
    the protocol itself, at a commit without uncommitted changes."""
    assert "<!-- rows of docs/results/tales/tales.md -->" in (ROOT / "docs" / "viewer-and-batches.md").read_text()
    written = (ROOT / "docs" / "results" / "tales" / "tales.md").read_text()
    assert "Not the TALES protocol" not in written and "uncommitted" not in written
    assert "Command: `uv run python main.py batch --preset tales --agent offline" in written
