"""The loop break on what real language models typed: every recorded game of a folder of real play, replayed with
the loop break off (what the model went on to do, left alone) and under a configuration (what the loop break does).

    uv run python -m benchmarks.real_play --out docs/results/real_play
    uv run python -m benchmarks.real_play --set loop_break.no_progress.max_turns=40 --out /tmp/real

A game is a text file of commands, one a line, as the model typed them (`../shared/real-play`, whose README names
the sources); a blank line is an empty command the model sent. Its story file is found by name: the first part of
the file name, split on `_`, that names a story file of `--games`. Each game is played twice through the real
orchestrator with the offline critic, forced (every command runs whatever the loop break says), so both plays are
the same game: the replay diverges from the recorded one at the first random event the original interpreter
resolved otherwise (a fight, the thief), and what follows is still a real model typing into a game. Reading the
games and playing one: playthroughs/real_play.py.

What each game shows, read from the records:
- **real progress**: a turn that reached a score above every score before it, or a room the game had not shown
  before. The last one is where the model stopped getting anywhere;
- **the stop**: the turn and the rule by which the loop break ends the play under the configuration;
- **turns saved**: of the turns after the last real progress, those the stop spares;
- **a false stop**: the model, left alone, scored again or reached `FALSE_STOP_ROOMS` new rooms after the stop;
- **warned before a later score**: turns the model was warned of being stuck on which it went on to score later;
- **rejected but progressing**: commands the loop break would have turned away that scored or reached a new room;
- **the longest quiet stretch**: the most turns the model went without real progress before it progressed again.
  Beside it, in the summary, what a stop exactly N turns after every game's last real progress would save: no rule
  can stop stuck play sooner after its last progress than healthy play goes quiet without a false stop somewhere.

Writes `real_play.json` (every game, and a summary) and `real_play.md`; with `--records DIR` the records of the plays
with the loop break off, which `benchmarks.margins` replays as healthy play up to the last real progress.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from loguru import logger

from benchmarks import cli
from playthroughs.real_play import (
    DEFAULT_GAMES,
    DEFAULT_PLAY,
    FALSE_STOP_ROOMS,
    RealPlayError,
    RecordedGame,
    default_story_folders,
    false_stop,
    load_games,
    play_game,
    real_progress,
)
from session.config import ConfigError, GameConfiguration, layered
from session.provenance import command, commit
from session.records import EVENTS_FILE, LOOP_ENDINGS
from session.story_file import StoryFileError
from session.tables import markdown_table

REAL = "real"
"""The kind of a run of real play, as benchmarks.margins names runs."""
LONG_TAIL = 60
"""Turns after the last real progress from which a game must be stopped ..."""
STOP_WITHIN = 50
"""... within this many turns of that progress."""
SPARE_AFTER = (50, 40, 30, 20)
"""Turns after the last real progress at which `saved_by_a_stop_after` stops every game: what a rule that knew which
play is stuck, and waited that long, would save; beside the longest stretch healthy play went without progress."""


def figures(game: RecordedGame, alone: tuple[dict, list[dict]], judged: tuple[dict, list[dict]]) -> dict:
    """What one game shows (the module's docstring), from its play left alone and its play under the configuration."""
    alone_summary, alone_records = alone
    summary, records = judged
    progress = real_progress(alone_records)
    end = alone_records[-1]["turn"] if alone_records else 0
    last = progress[-1] if progress else 0
    reason = summary["termination_reason"]
    stop = records[-1]["turn"] if reason in LOOP_ENDINGS and records else None
    tail = end - last
    quiet = max(((after - before, before, after) for before, after in zip([0, *progress], progress)), default=(0, 0, 0))
    scores = [r["turn"] for r in alone_records if r["turn"] in progress and r["score_after"] > r["score_before"]]
    warned = sorted({r["turn"] for r in records for e in r["events"] if e["event_type"] == "loop_break_warning"})
    rule = next((e["rule"] for r in records for e in r["events"] if e["event_type"] == "stuck_termination"), None)
    return {
        "game": game.name,
        "story": game.story.stem,
        "commands": len(game.commands),
        "turns": end,
        "ending": alone_summary["termination_reason"],
        "score": alone_records[-1]["score_after"] if alone_records else 0,
        "best_score": alone_summary.get("best_score"),
        "real_progress": len(progress),
        "last_real_progress": last,
        "after_last_progress": tail,
        "longest_quiet": {"turns": quiet[0], "from": quiet[1], "to": quiet[2]},
        "stop": stop,
        "stop_rule": rule or (reason if stop else None),
        "stop_after_progress": stop - last if stop is not None else None,
        "saved": min(end - stop, tail) if stop is not None else 0,
        "false_stop": stop is not None and false_stop(alone_records, stop),
        "long_tail": tail >= LONG_TAIL,
        "stopped_in_time": stop is not None and stop - last <= STOP_WITHIN,
        "warned_before_score": sum(1 for t in warned if any(s > t for s in scores)),
        "warned": len(warned),
        "rejected_progress": sum(1 for r in records if r["would_reject"] and r["ran"] and r["turn"] in progress),
        "rejected": sum(1 for r in records if r["would_reject"] and r["ran"]),
    }


def run(games: list[RecordedGame], config_path: str, overrides: dict, records: Path | None) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        for game in games:
            plays = []
            for label, extra in (("alone", {"loop_break": {"enabled": False}}), ("judged", {})):
                folder = (records if records is not None and label == "alone" else Path(temporary)) / game.name / label
                merged = layered(
                    overrides,
                    extra,
                    {
                        "files": {"episode_dir": str(folder)},
                        "gameplay": {"max_turns_per_episode": len(game.commands)},
                        "knowledge": {"enabled": False},
                    },
                )
                plays.append(play_game(game, GameConfiguration.from_toml(config_path, merged), folder))
            row = figures(game, plays[0], plays[1])
            if records is not None:
                row["records"] = str(next((records / game.name / "alone").iterdir()) / EVENTS_FILE)
            rows.append(row)
            print(f"  {game.name}: {row['turns']} turns, stop {row['stop']}", file=sys.stderr, flush=True)
    return rows


def summarize(rows: list[dict]) -> dict:
    after = sum(r["after_last_progress"] for r in rows)
    saved = sum(r["saved"] for r in rows)
    long_tails = [r for r in rows if r["long_tail"]]
    quietest = max(rows, key=lambda r: r["longest_quiet"]["turns"], default=None)
    return {
        "games": len(rows),
        "commands": sum(r["commands"] for r in rows),
        "turns": sum(r["turns"] for r in rows),
        "stopped": sum(r["stop"] is not None for r in rows),
        "false_stops": [r["game"] for r in rows if r["false_stop"]],
        "turns_after_last_progress": after,
        "turns_saved": saved,
        "saved_share": round(saved / after, 3) if after else None,
        "saved_by_a_stop_after": {
            turns: round(sum(max(0, r["after_last_progress"] - turns) for r in rows) / after, 3) if after else None
            for turns in SPARE_AFTER
        },
        "longest_quiet_before_progress": (
            f"{quietest['longest_quiet']['turns']} ({quietest['game']}, turns {quietest['longest_quiet']['from']}"
            f"-{quietest['longest_quiet']['to']})"
            if quietest is not None
            else None
        ),
        "long_tails": len(long_tails),
        "long_tails_stopped_in_time": sum(r["stopped_in_time"] for r in long_tails),
        "long_tails_late": [
            f"{r['game']}: {r['stop_after_progress'] if r['stop'] is not None else 'never'}"
            for r in long_tails
            if not r["stopped_in_time"]
        ],
        "warned": sum(r["warned"] for r in rows),
        "warned_before_score": sum(r["warned_before_score"] for r in rows),
        "rejected": sum(r["rejected"] for r in rows),
        "rejected_progress": sum(r["rejected_progress"] for r in rows),
    }


COLUMNS = (
    "game",
    "story",
    "turns (commands)",
    "ending",
    "score",
    "last real progress",
    "after it",
    "stop (rule)",
    "stop - progress",
    "saved",
    "false stop",
    "warned (before a later score)",
    "rejected (progressing)",
)


def markdown(rows: list[dict], summary: dict, argv: list[str] | None) -> str:
    lines = [
        "# The loop break on real play (benchmarks/real_play.py)",
        "",
        f"Command: `{command('benchmarks.real_play', argv)}`  ",
        f"Commit: {commit()}",
        "",
        f"Real progress: a score above the best before it, or a room not shown before. A false stop: the model, left "
        f"alone, scored again or reached {FALSE_STOP_ROOMS} or more new rooms after it. A game that went on "
        f"{LONG_TAIL} or more turns after its last real progress must be stopped within {STOP_WITHIN} turns of it.",
        "",
        "## Summary",
        "",
    ]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in summary.items()]
    lines += ["", "## Per game", ""]
    table = []
    for r in rows:
        stop = f"{r['stop']} ({r['stop_rule']})" if r["stop"] is not None else "-"
        late = " **LATE**" if r["long_tail"] and not r["stopped_in_time"] else ""
        table.append(
            (
                r["game"],
                r["story"],
                f"{r['turns']} ({r['commands']})",
                r["ending"],
                r["score"],
                r["last_real_progress"],
                r["after_last_progress"],
                stop,
                f"{r['stop_after_progress']}{late}" if r["stop"] is not None else f"-{late}",
                r["saved"],
                "**yes**" if r["false_stop"] else "no",
                f"{r['warned']} ({r['warned_before_score']})",
                f"{r['rejected']} ({r['rejected_progress']})",
            )
        )
    totals = [
        (
            "**all**",
            "",
            f"{summary['turns']} ({summary['commands']})",
            "",
            "",
            "",
            summary["turns_after_last_progress"],
            summary["stopped"],
            "",
            f"{summary['turns_saved']} ({summary['saved_share']:.0%})" if summary["saved_share"] is not None else "-",
            len(summary["false_stops"]),
            f"{summary['warned']} ({summary['warned_before_score']})",
            f"{summary['rejected']} ({summary['rejected_progress']})",
        )
    ]
    lines += markdown_table(COLUMNS, table, totals)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--play", default=str(DEFAULT_PLAY), help="a folder of real play: one game's commands a file")
    parser.add_argument(
        "--games", action="append", help="a folder of story files (default: ../shared/games and ../shared/more-games)"
    )
    cli.add_only(parser, help="comma-separated game names (file stems) to run")
    cli.add_config(parser)
    cli.add_set(parser)
    cli.add_records(parser, help="keep the records of the plays with the loop break off in this folder")
    cli.add_out(parser, default="benchmarks/results/real_play")
    args = parser.parse_args(argv)
    folders = [Path(g) for g in args.games] if args.games else default_story_folders()
    try:
        if not folders:
            raise RealPlayError(f"no folder of story files at {' or '.join(map(str, DEFAULT_GAMES))}: give --games")
        overrides = cli.set_overrides(args.set)
        GameConfiguration.from_toml(args.config, overrides)
        play_folder = Path(args.play)
        if not play_folder.is_dir():
            raise RealPlayError(f"--play {play_folder}: not a folder of real play")
        games = load_games(play_folder, folders, args.only)
    except (ConfigError, StoryFileError, RealPlayError) as exc:
        return cli.fail(exc)
    logger.remove()
    started = time.perf_counter()
    rows = run(games, args.config, overrides, Path(args.records) if args.records else None)
    summary = summarize(rows)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    made = {"command": command("benchmarks.real_play", argv), "commit": commit()}
    (out / "real_play.json").write_text(json.dumps({**made, "summary": summary, "runs": rows}, indent=1) + "\n")
    (out / "real_play.md").write_text(markdown(rows, summary, argv))
    print(json.dumps(summary, indent=1))
    print(f"wrote {out / 'real_play.json'} and {out / 'real_play.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
