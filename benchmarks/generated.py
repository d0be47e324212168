"""Fresh games nobody tuned on: TextWorld makes Z-machine games from seeds, and the corpus benchmark plays them.

    uv run python -m benchmarks.generated --out docs/results/generated        # 20 quests and 20 cooking games
    uv run python -m benchmarks.generated --quests 2 --cooking 2 --seeds 101,102 --kinds optimal --out /tmp/gen

Every rule of the loop break was chosen on the 29 games of the corpus; TextWorld (Microsoft's text-game generator,
the `textworld` dependency group) makes games none of them was chosen on, each with its walkthrough and its maximum
score. Seeds are drawn anew for every run unless `--seeds` gives them, so a run checks games no one has seen; the
results file names them, so any run can be made again.

1. **Make**: `tw-make custom` (quests: a world of rooms and objects, one quest through it) and `tw-make tw-cooking`
   (gather, cook and cut a recipe's ingredients, then eat the meal), at several sizes. Jericho has no bindings for
   these games: the session reads them as a player sees them (session.status). Each game's walkthrough is written
   beside it as `<game>.walkthrough` (JerichoSession.walkthrough reads it). playthroughs/generated_games.py makes
   them.
2. **Walkthroughs as such**: each walkthrough through the harness as `main.py --agent walkthrough` plays it (the
   wiring, the default configuration): it must end in `victory` with the game's full score, and count the rooms
   it walked (the distinct room titles the game printed, read from plain Jericho's text).
3. **The corpus benchmark's runs** (benchmarks/corpus.py) on the same games: optimal and noisy walkthroughs
   (healthy: no stop, no warning), the stuck kinds cut from them (each must end within its target), and the
   walkthrough through the LLM path (every step run as written).

Writes `generated.json` (the games, their seeds and every run) and `generated.md`.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from loguru import logger

from benchmarks import cli, corpus
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.generated_games import MAKE_SECONDS, Generated, made_before, make_all, titles_printed, tw_make
from session.config import ConfigError, GameConfiguration
from session.provenance import command, commit
from session.records import read_summary
from session.tables import markdown_table


def walkthrough_as_such(game: Generated, config_path: str, folder: Path) -> dict:
    """The walkthrough as `main.py --agent walkthrough` plays it, against what the game says it should reach."""
    config = GameConfiguration.from_toml(
        config_path,
        {
            "files": {"episode_dir": str(folder)},
            "gameplay": {"agent": "walkthrough", "critic": "offline"},
            "knowledge": {"enabled": False},
        },
    )
    orchestrator = build_orchestrator(config, RunOptions(rom=game.path, quiet=True))
    summary = read_summary(orchestrator.play_episode().parent)
    orchestrator.session.close()
    walked = titles_printed(Path(game.path))
    return {
        "game": Path(game.path).stem,
        "termination_reason": summary["termination_reason"],
        "final_score": summary["final_score"],
        "max_score": game.max_score,
        "read_max_score": summary["max_score"],
        "rooms_visited": summary["rooms_visited"],
        "rooms_walked": walked,
        "unreadable": summary.get("unreadable", []),
        "as_such": summary["termination_reason"] == "victory"
        and summary["final_score"] == game.max_score
        and summary["rooms_visited"] == walked,
    }


def markdown(games: list[Generated], skipped: list[int], checks: list[dict], rows: list[dict], summary: dict) -> str:
    lines = [
        "# The loop break on fresh generated games (benchmarks/generated.py)",
        "",
        f"Command: `{command('benchmarks.generated')}`  ",
        f"Commit: {commit()}",
        "",
        f"{len(games)} TextWorld games ({sum(g.kind == 'quest' for g in games)} quests, "
        f"{sum(g.kind == 'cooking' for g in games)} cooking games), seeds {', '.join(str(g.seed) for g in games)}"
        + (f"; seeds TextWorld made no game of in {MAKE_SECONDS} s: {', '.join(map(str, skipped))}" if skipped else "")
        + ".",
        "",
        "## Walkthroughs as such (`--agent walkthrough`, the default configuration)",
        "",
        f"- reach the game's own ending with its full score, read as victory, with the rooms they walked counted: "
        f"**{sum(c['as_such'] for c in checks)} of {len(checks)}**",
        "",
    ]
    steps = {Path(g.path).stem: g.steps for g in games}
    columns = ("game", "steps", "end", "score / max (read max)", "rooms counted / walked", "unreadable")
    lines += markdown_table(
        columns,
        [
            (
                c["game"],
                steps[c["game"]],
                f"{c['termination_reason']}{'' if c['as_such'] else ' **NO**'}",
                f"{c['final_score']} / {c['max_score']} ({c['read_max_score']})",
                f"{c['rooms_visited']} / {c['rooms_walked']}",
                ", ".join(c["unreadable"]) or "-",
            )
            for c in checks
        ],
    )
    lines += ["", "## The corpus benchmark's runs", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in summary.items()]
    lines += ["", "### Per stuck kind (forced)", "", corpus.per_kind_table(rows)]
    lines += ["### Per game", "", corpus.per_game_table(rows)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quests", type=int, default=20, help="quest games to make")
    parser.add_argument("--cooking", type=int, default=20, help="cooking games to make")
    parser.add_argument("--seeds", help="comma-separated TextWorld seeds, used in turn (default: drawn anew)")
    parser.add_argument("--games", help="keep the made games in this folder (default: a temporary one)")
    parser.add_argument("--made", help="play the games an earlier run kept (its --games folder) instead of new ones")
    parser.add_argument(
        "--kinds",
        default=corpus.DEFAULT_KINDS,
        type=corpus.kinds_list,
        help="the corpus benchmark's kinds to run on them",
    )
    cli.add_trajectory_options(parser, seeds="--noisy-seeds")
    cli.add_config(parser)
    cli.add_records(parser, help="keep every episode's records in this folder (benchmarks.margins reads them)")
    cli.add_out(parser, default="benchmarks/results/generated")
    cli.add_jobs(parser)
    args = parser.parse_args(argv)
    try:
        GameConfiguration.from_toml(args.config)
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else []
        tw_make()
    except (ConfigError, ValueError) as exc:
        return cli.fail(exc)
    wanted = args.quests + args.cooking
    seeds += [secrets.randbelow(90_000) + 10_000 for _ in range(4 * wanted)]  # fresh ones after any given
    logger.remove()
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(args.games or temporary)
        folder.mkdir(parents=True, exist_ok=True)
        if args.made:
            games, skipped = made_before(Path(args.made)), []
        else:
            games, skipped = make_all(args.quests, args.cooking, seeds, folder)
        checks = [walkthrough_as_such(game, args.config, Path(temporary) / "episodes") for game in games]
        runs = argparse.Namespace(
            kinds=args.kinds,
            factors=[int(f) for f in args.factors.split(",")],
            seeds=[int(s) for s in args.noisy_seeds.split(",")],
            cuts=[float(c) for c in args.cuts.split(",")],
            config=args.config,
            records=str(args.records) if args.records else None,
            cache=str(Path(temporary) / "cache"),
            jobs=args.jobs,
            out=out,
        )
        rows = corpus.run([Path(g.path) for g in games], runs, {})
    summary = corpus.summarize(rows)
    summary["walkthroughs_as_such"] = f"{sum(c['as_such'] for c in checks)} of {len(checks)}"
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    payload = {
        "summary": summary,
        "games": [asdict(g) for g in games],
        "skipped_seeds": skipped,
        "walkthroughs": checks,
        "runs": rows,
    }
    (out / "generated.json").write_text(json.dumps(payload, indent=1) + "\n")
    (out / "generated.md").write_text(markdown(games, skipped, checks, rows, summary))
    print(json.dumps(summary, indent=1))
    print(f"wrote {out / 'generated.json'} and {out / 'generated.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
