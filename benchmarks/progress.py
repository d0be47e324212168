"""Walkthrough progress over a corpus: each game's walkthrough must reach all its own checkpoints, and a random
player shows where the measure starts.

    uv run python -m benchmarks.progress --games ../shared/games --out docs/results/progress.md

For every story file with a walkthrough: its checkpoints are derived (session.checkpoints, timed), its walkthrough is
played as `main.py --agent walkthrough --critic offline` plays it (the wiring, under the game's walkthrough seed,
with as many turns as it has steps), and a seeded random player (`random_commands`: a direction, a verb, or a verb
and a noun, drawn from the game's dictionary) plays up to `--random-steps` turns once per `--random-seeds` seed,
through the same wiring (a death or the loop break may end it sooner). Each episode's progress is what its
summary.json says. A walkthrough below 100 % fails the run (exit status 1): the checkpoints would then not be the
walkthrough's own. Writes the Markdown table to `--out` and every figure as JSON beside it.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import mean
from typing import Any

from loguru import logger

from agents.replay_agent import ReplayAgent
from benchmarks import cli
from session.checkpoints import CheckpointKind, checkpoints_for
from session.commands import DIRECTIONS, why_not_run
from session.config import GameConfiguration
from session.provenance import command, commit
from session.records import read_summary
from session.story_file import STORY_SUFFIXES
from session.tables import markdown_table, percent

RANDOM_KIND = "random"
"""The random player's agent kind, as its summary.json names it."""


def random_commands(dictionary: Sequence[Any], rng: random.Random, steps: int) -> list[str]:
    """`steps` commands a player who knows only the game's words might type: half a direction, a quarter a verb
    alone (the game may then ask what to do it to), a quarter a verb and a noun. The verbs leave out the game's
    meta verbs and anything the harness never runs (`why_not_run`)."""
    verbs = sorted(
        {w.word for w in dictionary if w.is_verb and not w.is_meta and w.word.isalpha() and why_not_run(w.word) is None}
    )
    nouns = sorted({w.word for w in dictionary if w.is_noun and not w.is_dir and w.word.isalpha()})
    commands: list[str] = []
    while len(commands) < steps:
        roll = rng.random()
        if roll < 0.5 or not verbs:
            line = rng.choice(DIRECTIONS)
        elif roll < 0.75 or not nouns:
            line = rng.choice(verbs)
        else:
            line = f"{rng.choice(verbs)} {rng.choice(nouns)}"
        if why_not_run(line) is None:
            commands.append(line)
    return commands


def measure_game(job: dict) -> dict:
    """One story file: its checkpoints, its walkthrough's progress and the random player's, one row."""
    from orchestration.wiring import RunOptions, build_orchestrator, build_session

    logger.remove()
    story = Path(job["story"])
    with tempfile.TemporaryDirectory() as folder:

        def configured(agent: str, turns: int, where: str) -> GameConfiguration:
            gameplay = {"agent": agent, "critic": "offline", "max_turns_per_episode": max(turns, 1)}
            overrides = {"gameplay": gameplay, "files": {"episode_dir": str(Path(folder) / where)}}
            return GameConfiguration.from_toml(job["config"], overrides | {"knowledge": {"enabled": False}})

        options = RunOptions(rom=str(story), quiet=True)
        config = configured("walkthrough", 1, "walkthrough")
        session = build_session(config, options)
        try:
            checkpoints = checkpoints_for(session)  # the first in this process: derived now
            row: dict[str, Any] = {
                "game": session.game_name,
                "walkthrough_steps": checkpoints.walkthrough_steps,
                "rooms": sum(c.kind is CheckpointKind.ROOM for c in checkpoints.checkpoints),
                "scores": sum(c.kind is CheckpointKind.SCORE for c in checkpoints.checkpoints),
                "derive_seconds": checkpoints.seconds,
            }
            if not checkpoints.walkthrough_steps:
                return row | {"walkthrough": None, "random": []}
            config = configured("walkthrough", checkpoints.walkthrough_steps, "walkthrough")
            played = build_orchestrator(config, options, session=session, knowledge=None, after_episode=())
            summary = read_summary(played.play_episode().parent)
            row["walkthrough"] = _figures(summary)
            row["random"] = []
            for seed in job["random_seeds"]:
                rng = random.Random(f"{story.stem}:{seed}")
                commands = random_commands(session.dictionary(), rng, job["random_steps"])
                config = configured("offline", job["random_steps"], f"random-{seed}")  # the agent is given
                agent = ReplayAgent(commands, kind=RANDOM_KIND)
                played = build_orchestrator(
                    config, options, session=session, agent=agent, knowledge=None, after_episode=()
                )
                row["random"].append(_figures(read_summary(played.play_episode().parent)) | {"seed": seed})
            return row
        finally:
            session.close()


def _figures(summary: dict) -> dict:
    return {
        "progress": summary["progress"],
        "checkpoints": summary["checkpoints"],
        "best_score": summary["best_score"],
        "turns": summary["turns"],
        "rooms_visited": summary["rooms_visited"],
        "termination_reason": summary["termination_reason"],
    }


COLUMNS = (
    "game",
    "walkthrough steps",
    "checkpoints (rooms + scores)",
    "walkthrough",
    "random, by seed",
    "random mean",
    "random best score",
    "derive (s)",
)


def markdown(rows: list[dict]) -> list[str]:
    """The table: one line per game, then the means over the games that have a walkthrough."""
    lines = []
    for row in rows:
        walked = row["walkthrough"]
        randoms = row["random"]
        shares = [r["progress"] for r in randoms if r["progress"] is not None]
        lines.append(
            [
                row["game"],
                row["walkthrough_steps"] or "none",
                f"{row['rooms'] + row['scores']} ({row['rooms']} + {row['scores']})",
                percent(walked["progress"]) if walked else "-",
                " / ".join(percent(r["progress"]) for r in randoms) or "-",
                percent(mean(shares)) if shares else "-",
                " / ".join(str(r["best_score"]) for r in randoms) or "-",
                f"{row['derive_seconds']:.2f}",
            ]
        )
    measured = [row for row in rows if row["walkthrough"]]
    walked = [row["walkthrough"]["progress"] for row in measured]
    randoms = [mean(r["progress"] for r in row["random"]) for row in measured if row["random"]]
    total = [
        f"**mean of {len(measured)} games**",
        "",
        "",
        f"**{percent(mean(walked))}**" if walked else "",
        "",
        f"**{percent(mean(randoms))}**" if randoms else "",
        "",
        f"**{mean(row['derive_seconds'] for row in rows):.2f}**" if rows else "",
    ]
    return markdown_table(COLUMNS, lines, totals=[total])


def run(games: Path, config: str, out: Path, random_seeds: list[int], random_steps: int, jobs: int) -> dict:
    stories = [games] if games.is_file() else sorted(p for p in games.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
    work = [
        {"story": str(s), "config": config, "random_seeds": random_seeds, "random_steps": random_steps} for s in stories
    ]
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        rows = pool.map(measure_game, work, chunksize=1)
    seconds = round(time.perf_counter() - started, 1)
    short = [row["game"] for row in rows if row["walkthrough"] and row["walkthrough"]["progress"] != 1.0]
    made = {"command": command("benchmarks.progress"), "commit": commit()}
    result = {**made, "random_seeds": random_seeds, "random_steps": random_steps, "jobs": jobs, "seconds": seconds}
    result |= {"walkthroughs_short_of_100": short, "games": rows}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    without = [row["game"] for row in rows if not row["walkthrough_steps"]]
    text = [
        "# Walkthrough progress",
        "",
        f"Command: `{made['command']}`  ",
        f"Commit: {made['commit']}",
        "",
        f"Each game's walkthrough played through the wiring (`--agent walkthrough --critic offline`, the game's "
        f"walkthrough seed), and a random player (up to {random_steps} turns of directions, verbs and verb-noun pairs "
        f"from the game's dictionary, seeds {', '.join(map(str, random_seeds))}; a death or the loop break may end it "
        "sooner). Progress: the share of the checkpoints "
        "(rooms first entered and new highest scores along the walkthrough) an episode reached. "
        + (f"Without a walkthrough, so without progress: {', '.join(without)}. " if without else "")
        + f"Run time {seconds} s with {jobs} process{'es' if jobs > 1 else ''}; `derive (s)`: the time to derive one "
        "game's checkpoints (the emulator's start included).",
        "",
        *markdown(rows),
        "",
    ]
    out.write_text("\n".join(text))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.progress", description=__doc__.split("\n\n")[0])
    cli.add_games(parser, help="a folder of story files, or one story file")
    cli.add_config(parser)
    cli.add_out(parser, default="docs/results/progress.md", help="the Markdown file (JSON beside it)")
    parser.add_argument("--random-seeds", type=cli.numbers, default=[1, 2, 3], help="comma-separated, one episode each")
    parser.add_argument("--random-steps", type=int, default=100, help="turns of each random episode")
    cli.add_jobs(parser, help="games measured at once")
    args = parser.parse_args(argv)
    result = run(Path(args.games), args.config, Path(args.out), args.random_seeds, args.random_steps, args.jobs)
    print(Path(args.out).read_text())
    if result["walkthroughs_short_of_100"]:
        print(f"walkthroughs short of 100 %: {', '.join(result['walkthroughs_short_of_100'])}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
