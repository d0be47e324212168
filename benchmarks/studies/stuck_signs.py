"""Signs of stuck play read from what the game answered, measured on healthy play and on the stuck tails of real play:
how soon a stop rule built on each could end real models' stuck play without coming near healthy play.

    uv run python -m benchmarks.real_play --records R --out P
    uv run python -m benchmarks.corpus --games ../shared/games --records C1 --out O1
    uv run python -m benchmarks.corpus --games ../shared/more-games --records C2 --out O2
    uv run python -m benchmarks.real_play --set loop_break.cycle.turns=12 --out V1   # (and other settings)
    uv run python -m benchmarks.studies.stuck_signs --real P --corpus O1 --corpus O2 --variant V1 \
        --out docs/results/stuck_signs.md

Every sign counts from the last real progress (a score above the best before it, or a room the game had not shown
before, as benchmarks.real_play has it) and restarts there:

- **echoes**: of the last `ECHO_WINDOW` turns, those that made a command made before from the same room and were
  answered word for word as then: nothing the game said was new;
- **nothing new worked**: turns since something new last worked: a move that reached a place (a room, or a spot the
  game names anew inside one) by an exit not taken before, or a command other than a move, a look or a wait that
  the game took (no refusal, no "nothing happens") and that was never made in that room before; waits left out;
- **few rooms**: the longest run of the latest turns spent in at most `FEW_ROOMS` rooms;
- **refused again**: turns that said again, at once, a command the game had just refused and were answered alike
  with nothing changed, as the refused-again stop rule counts them (managers/loop_break/refused_again.py; the rule
  restarts at any progress, the study at real progress only, so its peaks here are the higher);
- **walls again**: moves the game refused (no way there) from a room it had refused the same way before, word for
  word: a wall already found, bumped into again.

Healthy play is the play of real models up to their last real progress (--real) and the corpus's optimal and noisy
walkthroughs up to the end of their script (--corpus). A rule on a sign is safe when healthy play stays below 1/1.5
of its threshold (docs/loop-break.md), so its soonest safe threshold is 1.5 times the healthy peak; for each stuck
tail of real play the study gives the turn after the last real progress at which that threshold is reached, and what
the loop break would save if it also stopped there. Beside them (--variant), real play under tighter settings of the
rules there are: what each saves, and which games it stops too early.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import cli
from managers.loop_break.refused_again import RefusalsRepeated
from playthroughs.real_play import real_progress
from session.commands import canonical_command, direction_of, is_observation, is_wait
from session.outcomes import BLOCKED_EXIT, SUCCESS
from session.provenance import command, commit
from session.records import TurnRecord, read_record_dicts
from session.tables import markdown_table

ECHO_WINDOW = 20
"""Turns the echo sign looks back over."""
FEW_ROOMS = 3
"""Rooms the few-rooms sign allows."""
MARGIN = 1.5
"""A rule's threshold over the healthy peak for it to be safe (docs/loop-break.md)."""
HEALTHY_KINDS = ("optimal", "noisy")
"""The corpus's runs that are healthy play."""
TAIL = 20
"""Turns after the last real progress from which a game of real play counts as a stuck tail here."""


def _since_progress(records: list[dict]) -> Iterable[tuple[dict, bool]]:
    """Each record, with whether it was real progress."""
    progress = set(real_progress(records))
    return ((record, record["turn"] in progress) for record in records)


def echoes(records: list[dict]) -> list[int]:
    """Per turn, the echoes among the last ECHO_WINDOW turns since the last real progress."""
    said: dict[tuple[object, str], str] = {}
    flags: list[bool] = []
    out = []
    for record, progressed in _since_progress(records):
        if progressed:
            said, flags = {}, []
            out.append(0)
            continue
        key = (record["room_id_before"], canonical_command(record["command"]))
        answer = " ".join(record["response"].split())
        flags.append(said.get(key) == answer)
        said[key] = answer
        out.append(sum(flags[-ECHO_WINDOW:]))
    return out


def nothing_new_worked(records: list[dict]) -> list[int]:
    """Per turn, the turns since something new last worked (or real progress), waits left out."""
    exits: set[tuple[object, str]] = set()
    made: set[tuple[object, str]] = set()
    last, waits, out = 0, 0, []
    for record, progressed in _since_progress(records):
        command_text = record["command"]
        direction = direction_of(command_text)
        worked = progressed
        if direction is not None:
            novelty = record.get("novelty") or ()
            arrived = record["room_id_after"] != record["room_id_before"] or "new_position" in novelty
            if arrived and (record["room_id_before"], direction) not in exits:
                worked = True
            if arrived:
                exits.add((record["room_id_before"], direction))
            worked = worked or "new_position" in novelty
        elif not (is_observation(command_text) or is_wait(command_text)) and record["result_category"] == SUCCESS:
            key = (record["room_id_before"], canonical_command(command_text))
            worked = worked or key not in made
            made.add(key)
        if worked:
            last, waits = record["turn"], 0
        elif is_wait(command_text):
            waits += 1
        out.append(record["turn"] - last - waits)
    return out


def few_rooms(records: list[dict]) -> list[int]:
    """Per turn, the longest run of the latest turns since the last real progress spent in at most FEW_ROOMS
    rooms."""
    rooms: list[object] = []
    out = []
    for record, progressed in _since_progress(records):
        rooms = [] if progressed else rooms
        rooms.append(record["room_id_after"])
        seen: set[object] = set()
        run = 0
        for room in reversed(rooms):
            if room not in seen and len(seen) == FEW_ROOMS:
                break
            seen.add(room)
            run += 1
        out.append(run)
    return out


def refused_again(records: list[dict]) -> list[int]:
    """Per turn, the turns since the last real progress that said a refusal again at once, answered alike."""
    repeated = RefusalsRepeated()
    out = []
    for record, progressed in _since_progress(records):
        if progressed:
            repeated.restart()
        repeated.observe(TurnRecord(**record))
        out.append(repeated.count)
    return out


def walls_again(records: list[dict]) -> list[int]:
    """Per turn, the moves since the last real progress the game refused from a room as it had refused them before."""
    walls: dict[tuple[object, str], str] = {}
    count, out = 0, []
    for record, progressed in _since_progress(records):
        if progressed:
            walls, count = {}, 0
        direction = direction_of(record["command"])
        if direction is not None and record["result_category"] == BLOCKED_EXIT:
            wall, answer = (record["room_id_before"], direction), " ".join(record["response"].split())
            count += walls.get(wall) == answer
            walls[wall] = answer
        out.append(count)
    return out


SIGNS: dict[str, Callable[[list[dict]], list[int]]] = {
    "echoes": echoes,
    "nothing new worked": nothing_new_worked,
    "few rooms": few_rooms,
    "refused again": refused_again,
    "walls again": walls_again,
}


@dataclass(frozen=True)
class Play:
    name: str
    records: list[dict]
    healthy_until: int
    """The last turn of healthy play in it."""
    stuck_from: int | None = None
    """Real play: the last real progress, when a stuck tail of TAIL or more turns follows it."""
    stop: int | None = None
    """Real play: where the loop break stops it under the configuration the real-play run used."""


def real_plays(folder: Path) -> list[Play]:
    plays = []
    for row in json.loads((folder / "real_play.json").read_text())["runs"]:
        records = read_record_dicts(Path(row["records"]).parent)
        last = row["last_real_progress"]
        tail = last if row["after_last_progress"] >= TAIL else None
        plays.append(Play(f"{row['game']} (real)", records, last, tail, row["stop"]))
    return plays


def corpus_plays(folder: Path) -> list[Play]:
    plays = []
    for row in json.loads((folder / "corpus.json").read_text())["runs"]:
        if row["kind"] in HEALTHY_KINDS and row["mode"] == "forced" and row.get("records"):
            records = read_record_dicts(Path(row["records"]).parent)
            name = f"{row['game']} {row['kind']} {row['variant']}".strip()
            plays.append(Play(name, records, row.get("healthy_until") or records[-1]["turn"]))
    return plays


def peak(plays: list[Play], sign: Callable[[list[dict]], list[int]]) -> tuple[int, str]:
    """The highest value of `sign` over the healthy turns of `plays`, and where."""
    best = (0, "-")
    for play in plays:
        for record, value in zip(play.records, sign(play.records)):
            if record["turn"] <= play.healthy_until and value > best[0]:
                best = (value, f"{play.name}, turn {record['turn']}")
    return best


def reached(play: Play, values: list[int], threshold: int) -> int | None:
    """The first turn of the stuck tail on which a sign reaches `threshold`."""
    tail = (record["turn"] for record, value in zip(play.records, values) if value >= threshold)
    return next((turn for turn in tail if turn > play.stuck_from), None)


def study(real: list[Play], corpus: list[Play]) -> dict:
    tails = [play for play in real if play.stuck_from is not None]
    after = {p.name: p.records[-1]["turn"] - p.healthy_until for p in real}
    saved_now = {p.name: max(0, p.records[-1]["turn"] - p.stop) if p.stop else 0 for p in real}
    signs, earliest = {}, {p.name: p.stop for p in real}
    for name, sign in SIGNS.items():
        real_peak, corpus_peak = peak(real, sign), peak(corpus, sign)
        threshold = math.ceil(MARGIN * max(real_peak[0], corpus_peak[0], 1))
        stops = {}
        for play in tails:
            values = sign(play.records)
            turn = reached(play, values, threshold)
            stops[play.name] = {
                "tail_peak": max(v for r, v in zip(play.records, values) if r["turn"] > play.stuck_from),
                "stop_after_progress": None if turn is None else turn - play.stuck_from,
            }
            if turn is not None and (earliest[play.name] is None or turn < earliest[play.name]):
                earliest[play.name] = turn
        signs[name] = {"real_peak": real_peak, "corpus_peak": corpus_peak, "safe_threshold": threshold, "tails": stops}
    total = sum(after.values())
    with_signs = sum(
        min(after[p.name], max(0, p.records[-1]["turn"] - earliest[p.name])) if earliest[p.name] else 0 for p in real
    )
    return {
        "signs": signs,
        "turns_after_last_progress": total,
        "saved_now": round(sum(min(after[n], s) for n, s in saved_now.items()) / total, 3) if total else None,
        "saved_with_the_signs": round(with_signs / total, 3) if total else None,
        "healthy_runs": {"real": len(real), "corpus": len(corpus)},
    }


def markdown(result: dict, argv: list[str] | None, recorded_by: list[str], variants: list[tuple]) -> str:
    lines = [
        "# Signs of stuck play, on healthy play and on real models' stuck tails (benchmarks/studies/stuck_signs.py)",
        "",
        f"Command: `{command('benchmarks.studies.stuck_signs', argv)}`  ",
        f"Commit: {commit()}  ",
        *(f"Records: {line}  " for line in recorded_by),
        "",
        f"Healthy runs: {result['healthy_runs']['real']} games of real play up to their last real progress, "
        f"{result['healthy_runs']['corpus']} optimal and noisy corpus walkthroughs. A safe threshold is {MARGIN} "
        f"times the healthy peak. Stuck tails: games of real play that went on {TAIL} or more turns after their last "
        "real progress.",
        "",
    ]
    columns = ("sign", "healthy peak, real play", "healthy peak, corpus", "safe threshold")
    rows = [
        (
            name,
            f"{s['real_peak'][0]} ({s['real_peak'][1]})",
            f"{s['corpus_peak'][0]} ({s['corpus_peak'][1]})",
            s["safe_threshold"],
        )
        for name, s in result["signs"].items()
    ]
    lines += markdown_table(columns, rows)
    tails = sorted({tail for s in result["signs"].values() for tail in s["tails"]})
    lines += [
        "",
        "Each stuck tail: the sign's peak in the tail / turns after the last real progress at which the safe "
        "threshold is reached (- never):",
        "",
    ]
    columns = ("stuck tail", *result["signs"])
    rows = []
    for tail in tails:
        cells = []
        for s in result["signs"].values():
            seen = s["tails"][tail]
            stop = seen["stop_after_progress"]
            cells.append(f"{seen['tail_peak']} / {'-' if stop is None else stop}")
        rows.append((tail, *cells))
    lines += markdown_table(columns, rows)
    lines += [
        "",
        f"Turns after the last real progress: {result['turns_after_last_progress']}; saved by the loop break now: "
        f"{result['saved_now']:.1%}; with a stop at every sign's safe threshold too: "
        f"{result['saved_with_the_signs']:.1%}.",
        "",
        "Real play under the rules there are, tighter (stops: turns after the last real progress, and the rule):",
        "",
    ]
    lines += markdown_table(("settings", "saved", "false stops", "stops"), variants)
    return "\n".join(lines) + "\n"


def variant(folder: Path) -> tuple[str, str, str, str]:
    """(settings, saved share, false stops, stops) of a benchmarks.real_play run under other settings."""
    run = json.loads((folder / "real_play.json").read_text())
    words = run["command"].split()
    given = [value for flag, value in zip(words, words[1:]) if flag == "--set"]
    given += [word.removeprefix("--set=") for word in words if word.startswith("--set=")]
    settings = " ".join(given) or "defaults"
    summary = run["summary"]
    stops = ", ".join(
        f"{row['game']}: {row['stop_after_progress']} ({row['stop_rule']})" for row in run["runs"] if row["stop"]
    )
    false_stops = ", ".join(summary["false_stops"]) or "none"
    return settings, f"{summary['saved_share']:.1%}", false_stops, stops


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--real", required=True, help="the --out folder of a benchmarks.real_play run with --records")
    parser.add_argument(
        "--corpus", action="append", default=[], help="the --out folder of a benchmarks.corpus run with --records"
    )
    parser.add_argument(
        "--variant", action="append", default=[], help="the --out folder of a benchmarks.real_play run with --set"
    )
    cli.add_out(parser, help="write the tables here (markdown, with this command and the commit)")
    args = parser.parse_args(argv)
    try:
        real = real_plays(Path(args.real))
        variants = [variant(Path(folder)) for folder in [args.real, *args.variant]]
        corpus = [play for folder in args.corpus for play in corpus_plays(Path(folder))]
        recorded_by = []
        for folder, name in [(args.real, "real_play.md"), *((folder, "corpus.md") for folder in args.corpus)]:
            heading = (Path(folder) / name).read_text().splitlines()[:5]
            recorded_by += [line.strip() for line in heading if line.startswith(("Command:", "Commit:"))]
    except (OSError, KeyError, ValueError) as exc:
        return cli.fail(exc)
    result = study(real, corpus)
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(markdown(result, argv, recorded_by, variants))
    return 0


if __name__ == "__main__":
    sys.exit(main())
