"""Replay recorded corpus episodes through the real LoopBreak under other settings, without playing them again.

    uv run python -m benchmarks.corpus --games ../shared/games --records R --out O \
        --set loop_break.enabled=false           # play every trajectory to its end, once
    uv run python -m benchmarks.studies.replay_rules --corpus O --set loop_break.no_progress.max_turns=40 [--set ...]

Forced episodes run the same commands whatever the loop break says, so feeding their records to a fresh LoopBreak
(the real ProgressTracker, detectors and stop rules) gives exactly the turn at which those settings would stop them,
and the turns a stuck warning would show. This is how the defaults were chosen (README "Results"). Steered (looper)
runs depend on penalties and are not replayed.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks import cli
from managers.loop_break import DestinationPredictor, LoopBreak
from managers.map_graph import MapGraph
from playthroughs.trajectories import stuck_target
from session.config import ConfigError, GameConfiguration
from session.provenance import command, commit
from session.records import LOOP_ENDINGS, GameView, TurnRecord, read_record_dicts

HEALTHY = ("optimal", "noisy")


@dataclass
class Replayed:
    stop: int | None = None
    """The turn the loop break stops the episode (None: never)."""
    warned: int = 0
    """Turns that would show a stuck warning."""
    longest: int = 0
    """The most turns without progress the no-progress rule counted (its clock: waits left out)."""
    repeats: int = 0
    """The most repeats in the repetition window once the clock reached repetition_min_turns (a stop at the window's
    size less repetition_misses)."""
    churn_changes: int = 0
    """The most churning turns in the churn window, once churn_min_turns had passed (churn_changes stops)."""
    churn_repeats: int = 0
    """The most churning turns by commands made again in the churn window, once churn_min_turns had passed
    (churn_repeats stops)."""


def replay(records: list[dict], config: GameConfiguration) -> Replayed:
    """Feed the records to a fresh LoopBreak until a stop rule fires."""
    game_map = MapGraph()
    loop_break = LoopBreak(config.loop_break, game_map, DestinationPredictor("map", game_map), 0.5)
    replayed = Replayed()
    for data in records:
        record = TurnRecord(**{**data, "events": []})
        view = GameView(record.room_id_before, record.room_name_before, record.score_before, 0, (), (), "", "")
        if loop_break.status(record.turn, view, ()).warning:
            replayed.warned += 1
        game_map.observe(record)
        verdict = loop_break.observe(record)
        clock = loop_break.clock(verdict.progress.turns_stuck)
        replayed.longest = max(replayed.longest, clock)
        if clock >= config.loop_break.repetition.min_turns:
            replayed.repeats = max(replayed.repeats, loop_break.stretch.repeating.repeats)
        churn = loop_break.detectors["churn"].count
        if churn.turns >= churn.min_turns:
            replayed.churn_changes = max(replayed.churn_changes, churn.changes)
        if churn.turns_across >= churn.min_turns:
            replayed.churn_repeats = max(replayed.churn_repeats, churn.repeats)
        if verdict.terminate and verdict.reason in LOOP_ENDINGS:
            replayed.stop = record.turn
            break
    return replayed


def evaluate(rows: list[dict], config: GameConfiguration) -> dict:
    false_stops, within, late, never, ended = [], 0, [], [], []
    healthy_turns = warned_turns = optimal_turns = optimal_warned = 0
    margins: dict[str, dict] = {}
    for row in rows:
        if row["mode"] != "forced" or not row.get("records"):
            continue
        records = read_record_dicts(Path(row["records"]).parent)
        name = f"{row['game']}/{row['kind']}/{row['variant']}"
        if row["kind"] in HEALTHY:
            healthy = [r for r in records if r["turn"] <= row["healthy_until"]]
            replayed = replay(healthy, config)
            healthy_turns += len(healthy)
            warned_turns += replayed.warned
            if row["kind"] == "optimal":
                optimal_turns += len(healthy)
                optimal_warned += replayed.warned
            if replayed.stop is not None:
                false_stops.append(f"{name} @ {replayed.stop}")
            _widen(margins, row, replayed)
            continue
        stop = replay(records, config).stop
        if stop is None and records and (records[-1]["game_over"] or records[-1]["victory"]):
            stop = records[-1]["turn"]  # the game ended it (a death by hunger, time, a fall) before any stop rule
        after = None if stop is None else stop - row["loop_start"] + 1
        if after is None:
            never.append(name)
        elif 0 < after <= stuck_target(row["kind"]):
            within += 1
            ended.append(after)
        else:
            late.append(f"{name}: {after}")
            ended.append(after)
    stuck = within + len(late) + len(never)
    return {
        "healthy_false_stops": false_stops,
        "optimal_warning_share": round(optimal_warned / max(1, optimal_turns), 4),
        "healthy_warning_share": round(warned_turns / max(1, healthy_turns), 4),
        "stuck_runs": stuck,
        "stuck_within_target": within,
        "stuck_late": late,
        "stuck_never_ended": never,
        "stuck_ended_after_median": sorted(ended)[len(ended) // 2] if ended else None,
        "stuck_ended_after_mean": round(sum(ended) / len(ended), 2) if ended else None,
        "healthy_margins": margins,
    }


def _widen(margins: dict[str, dict], row: dict, replayed: Replayed) -> None:
    """How close healthy runs came to each stop rule, per kind of run (optimal, noisy at each factor): the longest
    stretch without progress against max_turns_stuck, the most repeats in the window once past
    repetition_min_turns against the repetition_window - repetition_misses a stop needs, the most churning turns
    and churning turns made again in the churn window against churn_changes and churn_repeats, each with the run
    that reached it."""
    kind = row["kind"] if row["kind"] == "optimal" else f"{row['kind']} {row['variant'].split(',')[0]}"
    figures = {
        "longest_without_progress": replayed.longest,
        "most_repeats": replayed.repeats,
        "most_churn_changes": replayed.churn_changes,
        "most_churn_repeats": replayed.churn_repeats,
    }
    margin = margins.setdefault(kind, {"runs": 0, **{key: [0, ""] for key in figures}})
    margin["runs"] += 1
    name = f"{row['game']}/{row['variant']}"
    for key, value in figures.items():
        if value > margin[key][0]:
            margin[key] = [value, name]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True, help="the --out folder of a benchmarks.corpus run with --records")
    cli.add_config(parser)
    cli.add_set(parser)
    parser.add_argument("--brief", action="store_true", help="counts only, no lists")
    cli.add_out(parser, help="also write the result here (JSON, with this command, the commit and the corpus's)")
    args = parser.parse_args(argv)
    from loguru import logger

    logger.remove()
    try:
        config = GameConfiguration.from_toml(args.config, cli.set_overrides(args.set))
        corpus = json.loads((Path(args.corpus) / "corpus.json").read_text())
        rows = corpus["runs"]
    except (ConfigError, OSError, KeyError, json.JSONDecodeError) as exc:
        return cli.fail(exc)
    result = evaluate(rows, config)
    brief = {k: len(v) if isinstance(v, list) else v for k, v in result.items()}
    print(json.dumps(brief if args.brief else result, indent=1))
    if args.out:
        made = {"command": command("benchmarks.studies.replay_rules", argv), "commit": commit()}
        heading = (Path(args.corpus) / "corpus.md").read_text().splitlines()[:4]  # its Command: and Commit: lines
        recorded = {"recorded_by": [line.strip() for line in heading if line.startswith(("Command:", "Commit:"))]}
        Path(args.out).write_text(json.dumps({**made, **recorded, **result}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
