"""Learning curves: N episodes per game, back to back, each learning from the ones before (the knowledge store).

    uv run python -m benchmarks.evaluate --learning ../shared/games [--episodes 5] [--max-turns 300] [--out DIR]
    uv run python -m benchmarks.evaluate --learning ../shared/games/zork1.z5 --seeds 1,2,3,4,5 --out DIR

The offline agent and critic play every story file of the folder (or the one story file given), as `main.py --episodes N
[--seed S]` would, with a fresh knowledge store per game and seed. Writes learning.json, learning.md (best score by
episode, per game and the mean, and the walkthrough progress of the first and the last episode: session.checkpoints)
and, with matplotlib installed, learning.png (best score over episodes, one line per game, as a share of the game's
maximum so that games of 1 and 400 points share an axis).
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
from pathlib import Path

from loguru import logger

from session.config import GameConfiguration
from session.provenance import command, commit
from session.records import read_record_dicts, read_summary
from session.story_file import STORY_SUFFIXES
from session.tables import markdown_table


def learn_game(job: dict) -> dict:
    """`episodes` episodes of one story file; per episode its best score, turns, ending and turns to reach the
    first episode's best score."""
    from orchestration.wiring import RunOptions, build_orchestrator, build_session

    logger.remove()
    story = Path(job["story"])
    with tempfile.TemporaryDirectory() as folder:
        gameplay = {"agent": "offline", "critic": "offline", "max_turns_per_episode": job["max_turns"]}
        config = GameConfiguration.from_toml(
            job["config"],
            {
                "gameplay": gameplay | ({"seed": job["seed"]} if job["seed"] is not None else {}),
                "files": {"episode_dir": folder},
                "knowledge": {"enabled": True, "path": str(Path(folder) / "knowledge.json")},
            },
        )
        args = RunOptions(rom=str(story), quiet=True)
        session = build_session(config, args)
        rows = []
        for _ in range(job["episodes"]):
            played = build_orchestrator(config, args, session=session).play_episode().parent
            summary = read_summary(played)
            scores = [record["score_after"] for record in read_record_dicts(played)]
            target = rows[0]["best_score"] if rows else summary["best_score"]
            reached = next((i + 1 for i, s in enumerate(scores) if s >= target), None) if target > 0 else None
            rows.append(
                {
                    "best_score": summary["best_score"],
                    "progress": summary.get("progress"),
                    "turns": summary["turns"],
                    "termination_reason": summary["termination_reason"],
                    "turns_to_first_best": reached,
                }
            )
    name = session.game_name if job["seed"] is None else f"{session.game_name}, seed {job['seed']}"
    return {"game": name, "max_score": session.max_score, "episodes": rows}


def learning_curves(
    folder: Path, config_path: str, episodes: int, max_turns: int, seeds: list[int | None], jobs: int = 2
) -> list[dict]:
    stories = (
        [folder] if folder.is_file() else sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
    )
    work = [
        {"story": str(s), "config": config_path, "episodes": episodes, "max_turns": max_turns, "seed": seed}
        for s in stories
        for seed in seeds
    ]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        return pool.map(learn_game, work)


def markdown(games: list[dict], episodes: int) -> str:
    columns = [
        "game",
        "max",
        *(f"ep {i + 1}" for i in range(episodes)),
        "turns to ep 1's best: ep 1 → last",
        "progress: ep 1 → last",
    ]
    rows = []
    for game in games:
        first_best = game["episodes"][-1]["turns_to_first_best"]
        first_turns = game["episodes"][0]["turns_to_first_best"]
        shown = f"{first_turns} → {first_best}" if first_turns is not None else "-"
        progress = _progress_span(game["episodes"][0].get("progress"), game["episodes"][-1].get("progress"))
        rows.append(
            [game["game"], game["max_score"], *(row["best_score"] for row in game["episodes"]), shown, progress]
        )
    means = [sum(g["episodes"][i]["best_score"] for g in games) / max(len(games), 1) for i in range(episodes)]
    first, last = (_mean_progress([g["episodes"][i] for g in games]) for i in (0, -1))
    progress = _progress_span(first, last)
    total = ["**mean**", "", *(f"**{m:.1f}**" for m in means), "", f"**{progress}**" if progress != "-" else ""]
    return "\n".join(markdown_table(columns, rows, totals=[total])) + "\n"


def _progress_span(first: float | None, last: float | None) -> str:
    """The walkthrough progress (session.checkpoints) of the first and the last episode, `12 % → 20 %`; `-` for a
    game without a walkthrough, or a row that has no progress."""
    if first is None or last is None:
        return "-"
    return f"{round(100 * first)} % → {round(100 * last)} %"


def _mean_progress(rows: list[dict]) -> float | None:
    """The mean progress of the episodes that have one (games without a walkthrough have none)."""
    shares = [row["progress"] for row in rows if row.get("progress") is not None]
    return sum(shares) / len(shares) if shares else None


def plot(games: list[dict], out: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axis = plt.subplots(figsize=(9, 5))
    for game in games:
        top = max(game["max_score"] or 1, 1)
        best = [row["best_score"] / top for row in game["episodes"]]
        axis.plot(range(1, len(best) + 1), best, marker="o", linewidth=1, label=game["game"])
    axis.set_xlabel("episode")
    axis.set_ylabel("best score / max score")
    axis.set_title("Best score by episode, offline agent with the knowledge store", fontsize=10)
    axis.legend(fontsize=6, ncol=3, loc="upper left")
    figure.tight_layout()
    path = out / "learning.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def run(
    folder: Path, config_path: str, out: Path, episodes: int, max_turns: int, seeds: list[int] | None = None
) -> dict:
    """Learning curves for every story file of `folder` (or the story file it is), under each of `seeds` (the
    game's walkthrough seed when None)."""
    out.mkdir(parents=True, exist_ok=True)
    games = learning_curves(folder, config_path, episodes, max_turns, list(seeds) if seeds else [None])
    made = {"command": command("benchmarks.evaluate"), "commit": commit()}
    result = {**made, "episodes": episodes, "max_turns": max_turns, "games": games}
    (out / "learning.json").write_text(json.dumps(result, indent=2) + "\n")
    heading = f"Command: `{made['command']}`  \nCommit: {made['commit']}\n\n"
    (out / "learning.md").write_text(heading + markdown(games, episodes))
    picture = plot(games, out)
    result["picture"] = str(picture) if picture else None
    return result
