"""How close healthy play comes to every stop rule, ban and gate, per game, on games the rules were chosen on and on
games they were not: the method by which the loop break's thresholds are chosen and checked.

    uv run python -m benchmarks.corpus --games ../shared/games --records R1 --out O1
    uv run python -m benchmarks.corpus --games ../shared/more-games --records R2 --out O2
    uv run python -m benchmarks.generated --records R3 --out O3
    uv run python -m benchmarks.real_play --records R4 --out O4
    uv run python -m benchmarks.margins --runs O1 --runs O2 --runs O3 --runs O4 --out docs/results/margins

**The split.** The corpus's games, in the order of their names, are dealt in turn to the *tuning* half (the 1st,
3rd, 5th...) and the *held-out* half (the 2nd, 4th...); every game outside the corpus (the five more Jericho games,
generated games) is held out. The games of real play (benchmarks.real_play) are dealt the same way among
themselves. A threshold is chosen on the tuning half and reported on both.

Record the runs with the loop break off (`--set loop_break.enabled=false`): every run plays to its end, and each is
replayed here under the configuration given (`--set` for other settings), exactly, since forced runs play the same
commands whatever the loop break says.

**Pressure.** Every detector says, after each turn, how near each of its stops, bans and gates is
(`Detector.pressure`): the count it has reached over the count that sets it off, 1.0 when it does. A healthy run's
records (optimal and noisy walkthroughs up to their last healthy turn, forced) are replayed through a fresh loop break
and the peak of each pressure kept. **A rule is safe when no healthy run of any game reaches 1/1.5 of its threshold**
(pressure below 0.667): a rule tuned to within 1.5x of healthy play on the games at hand fails on others. The bans,
penalties and gates that act only while a stop rule is past that line (`Stretch.steering`: the signature penalty, the
identical-command ban, the failure gate, the final rejection) are judged on the turns on which they could act; their
peak over every turn is reported beside it.

A game of real play is healthy up to its last real progress (a score above the best before, a room not shown
before): its records, played with the loop break off, are replayed up to there. A game that went on
`real_play.LONG_TAIL` turns or more after it counts with the stuck loops, its tail the loop, which must end within
`real_play.STOP_WITHIN` turns of that progress.

Alongside, in the same replay: the warnings a healthy run would be shown, and the penalties on its own steps (each
judged at NOMINAL_SCORE: lowered, and lowered below the rejection threshold); from the walkthrough through the LLM
path as played, the steps not run as written; and the stuck loops cut from the walkthroughs, turns from each loop's
start to its end against its target, per half.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import cli
from benchmarks.corpus import LLM_WALKTHROUGH
from benchmarks.real_play import LONG_TAIL, REAL, STOP_WITHIN
from managers.loop_break import DestinationPredictor, LoopBreak
from managers.map_graph import MapGraph
from playthroughs.trajectories import STUCK_KINDS, stuck_target
from session.config import ConfigError, GameConfiguration
from session.provenance import command, commit
from session.records import LOOP_ENDINGS, GameView, Judgement, TurnRecord, read_record_dicts
from session.tables import markdown_table

SAFE_MARGIN = 1.5
"""Healthy play must stay below 1/SAFE_MARGIN of every threshold."""
HEALTHY_KINDS = ("optimal", "noisy")
CORPUS_GAMES = (
    "advent balances ballyhoo deephome detective enchanter gold hhgg infidel karn lgop lostpig murdac night partyfoul "
    "planetfall seastalker sherlock sorcerer spirit temple tryst205 weapon wishbringer yomomma zork1 zork2 zork3 ztuu"
).split()
"""The corpus's 29 games by file stem, in the order the split deals them."""
TUNING = frozenset(CORPUS_GAMES[0::2])
"""The half of the corpus thresholds are chosen on; every other game is held out."""


REAL_TUNING: set[str] = set()
"""The games of real play thresholds are chosen on (`load` deals them, in the order of their names)."""


def half(stem: str) -> str:
    return "tuning" if stem in TUNING or stem in REAL_TUNING else "held-out"


@dataclass
class Replay:
    """A forced run's records replayed through a fresh loop break (exact: its commands ran whatever it said)."""

    peaks: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    """The peak of every detector's pressure."""
    acting: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    """For the bans, penalties and gates that act only while a stop rule is near (a detector with no stop rule of
    its own: `Stretch.steering`), the peak of their pressure over the turns on which they could act."""
    warned: int = 0
    """Turns that would show a stuck warning."""
    penalised: int = 0
    """Turns whose own command a penalty would lower, judged at NOMINAL_SCORE."""
    turned: int = 0
    """Of those, turns it would lower below the rejection threshold: a player following it would be turned away."""
    stop: int | None = None
    """The turn a stop rule would end the run (None: none would)."""


NOMINAL_SCORE = 0.8
"""The critic's score a step is judged at in a replay: the scripted LLM critic's, a plausible command's."""


def replay(records: list[dict], config: GameConfiguration, through: bool = False) -> Replay:
    """Replay `records` through a fresh LoopBreak under `config`, up to a stop (`through`: to the end, the stop
    kept: how close a healthy run comes to every rule after one fired too)."""
    game_map = MapGraph()
    threshold = config.gameplay.critic_rejection_threshold
    loop_break = LoopBreak(config.loop_break, game_map, DestinationPredictor("map", game_map), threshold)
    replayed = Replay()
    for data in records:
        record = TurnRecord(**{**data, "events": []})
        view = GameView(
            record.room_id_before, record.room_name_before, record.score_before, 0, (), (), record.world_hash_before, ""
        )
        if loop_break.status(record.turn, view, ()).warning:
            replayed.warned += 1
        judged = loop_break.adjust(record.command, Judgement(NOMINAL_SCORE, ""), view, record.turn).judgement
        replayed.penalised += judged.score < NOMINAL_SCORE
        replayed.turned += judged.score < threshold
        game_map.observe(record)
        verdict = loop_break.observe(record)
        steering = loop_break.stretch.steering
        for detector in loop_break.detectors.values():
            for name, value in detector.pressure(verdict.progress.turns_stuck, loop_break.stretch).items():
                replayed.peaks[name] = max(replayed.peaks[name], value)
                if detector.stop_rule is None:
                    replayed.acting[name] = max(replayed.acting[name], value if steering else 0.0)
        if verdict.terminate and verdict.reason in LOOP_ENDINGS and replayed.stop is None:
            replayed.stop = record.turn
            if not through:
                break
    return replayed


def healthy_figures(row: dict, config: GameConfiguration) -> dict | None:
    """What one healthy run shows: its pressures' peaks, warnings, penalties on its own steps, steps turned to
    reject (forced runs), or steps not run as written (the LLM path)."""
    if not row.get("records"):
        return None
    records = read_record_dicts(Path(row["records"]).parent)
    if row["kind"] == LLM_WALKTHROUGH:
        healthy = records
    else:
        healthy = [r for r in records if r["turn"] <= row["healthy_until"]]
    replayed = replay(healthy, config, through=True)
    return {
        "stem": row["stem"],
        "run": f"{row['kind']}/{row['variant']}",
        "stopped": replayed.stop is not None or bool(row.get("stopped")),
        "pressure": dict(replayed.peaks),
        "acting": dict(replayed.acting),
        "warned": replayed.warned,
        "penalised": replayed.penalised,
        "turned_to_reject": replayed.turned,
        "not_run_as_written": row.get("refused_steps", 0),
    }


def stuck_figures(row: dict, config: GameConfiguration) -> dict:
    """When a stuck loop ends under `config`, replayed from its records (the game may end it first: a death)."""
    records = read_record_dicts(Path(row["records"]).parent) if row.get("records") else []
    if records:
        stop = replay(records, config).stop
        if stop is None and (records[-1]["game_over"] or records[-1]["victory"]):
            stop = records[-1]["turn"]
        ended_after = None if stop is None or stop < row["loop_start"] else stop - row["loop_start"] + 1
    else:
        ended_after = row["ended_after"]
    target = STOP_WITHIN if row["kind"] == REAL else stuck_target(row["kind"])
    return {
        "stem": row["stem"],
        "run": f"{row['kind']}/{row['variant']}",
        "kind": row["kind"],
        "target": target,
        "ended_after": ended_after,
        "within_target": ended_after is not None and 0 < ended_after <= target,
    }


def load(folders: list[Path]) -> list[dict]:
    """Every run of the benchmark folders (corpus.json, generated.json or real_play.json), each with its game's file
    stem; the games of real play are dealt to the halves (REAL_TUNING)."""
    rows: list[dict] = []
    for folder in folders:
        for name in ("corpus.json", "generated.json"):
            path = folder / name
            if path.is_file():
                for row in json.loads(path.read_text())["runs"]:
                    stem = Path(row["records"]).parts[-4] if row.get("records") else row["game"]
                    rows.append({**row, "stem": stem})
        path = folder / "real_play.json"
        if path.is_file():
            rows += [_real_row(row) for row in json.loads(path.read_text())["runs"]]
    real = sorted({row["stem"] for row in rows if row["kind"] == REAL})
    REAL_TUNING.clear()
    REAL_TUNING.update(real[0::2])
    return rows


def _real_row(row: dict) -> dict:
    """A game of real play as a run: healthy up to its last real progress, its tail a loop when long."""
    return {
        **row,
        "stem": row["game"],
        "kind": REAL,
        "variant": "real play",
        "mode": "forced",
        "healthy_until": row["last_real_progress"],
        "loop_start": row["last_real_progress"] + 1,
        "ended_after": row["stop_after_progress"],
    }


LEVELS = ("optimal", "noisy 1", "noisy 2", "noisy 3", "llm", REAL)
"""Kinds of healthy play, from the most careful to the clumsiest (`level`)."""


def level(run: str) -> str:
    """`optimal/walkthrough` -> optimal, `noisy/factor 2, seed 1` -> noisy 2, the LLM path's walkthrough -> llm."""
    if run.startswith("noisy/factor "):
        return f"noisy {run.split()[1].rstrip(',')}"
    if run.startswith(REAL):
        return REAL
    return "llm" if run.startswith(LLM_WALKTHROUGH) else "optimal"


def _peak(healthy: list[dict], name: str, key: str = "pressure") -> tuple[float, str]:
    """The highest pressure of rule `name` among these runs, and the run (`key`: "acting", over the turns on which
    it could act)."""
    mine = [h for h in healthy if name in h.get(key, {})]
    top = max(mine, key=lambda h: h[key][name], default=None)
    return (round(top[key][name], 3), f"{top['stem']} {top['run']}") if top else (0.0, "-")


def evaluate(rows: list[dict], config: GameConfiguration) -> dict:
    healthy, stuck = [], []
    for row in rows:
        if row["kind"] in (*HEALTHY_KINDS, LLM_WALKTHROUGH, REAL) and row["mode"] in ("forced", "llm"):
            figures = healthy_figures(row, config)
            if figures is not None:
                healthy.append(figures)
        if (row["kind"] in STUCK_KINDS and row["mode"] == "forced") or (
            row["kind"] == REAL and row["after_last_progress"] >= LONG_TAIL
        ):
            stuck.append(stuck_figures(row, config))
    rules = sorted({name for h in healthy for name in h["pressure"]})
    levels = sorted({level(h["run"]) for h in healthy}, key=LEVELS.index)
    per_rule = {}
    for name in rules:
        entry: dict = {"levels": {}}
        for part in ("tuning", "held-out"):
            entry[part] = _peak([h for h in healthy if half(h["stem"]) == part], name)
        for kind in levels:
            entry["levels"][kind] = _peak([h for h in healthy if level(h["run"]) == kind], name)
        gated = any(name in h.get("acting", {}) for h in healthy)
        entry["acting"] = _peak(healthy, name, "acting") if gated else None
        judged = entry["acting"][0] if gated else max(entry["tuning"][0], entry["held-out"][0])
        entry["safe"] = judged < 1 / SAFE_MARGIN
        per_rule[name] = entry
    per_game: dict[str, dict[str, float]] = {}
    for h in healthy:
        game = per_game.setdefault(h["stem"], {})
        for name, value in h["pressure"].items():
            game[name] = round(max(game.get(name, 0.0), value), 3)
    kinds = {}
    for part in ("tuning", "held-out"):
        for kind in (*STUCK_KINDS, REAL):
            mine = [s for s in stuck if s["kind"] == kind and half(s["stem"]) == part]
            if mine:
                ended = sorted(s["ended_after"] for s in mine if s["ended_after"] is not None)
                kinds[f"{kind} ({part})"] = {
                    "target": mine[0]["target"],
                    "runs": len(mine),
                    "within_target": sum(s["within_target"] for s in mine),
                    "slowest": ended[-1] if len(ended) == len(mine) and ended else "never",
                    "late": [f"{s['stem']} {s['run']}: {s['ended_after']}" for s in mine if not s["within_target"]],
                }
    return {
        "healthy_runs": len(healthy),
        "stopped": [f"{h['stem']} {h['run']}" for h in healthy if h["stopped"]],
        "warned": [f"{h['stem']} {h['run']}: {h['warned']}" for h in healthy if h["warned"]],
        "penalised": [f"{h['stem']} {h['run']}: {h['penalised']}" for h in healthy if h["penalised"]],
        "turned_to_reject": [f"{h['stem']} {h['run']}" for h in healthy if h["turned_to_reject"]],
        "not_run_as_written": [f"{h['stem']} {h['run']}" for h in healthy if h["not_run_as_written"]],
        "rules": per_rule,
        "games": per_game,
        "stuck": kinds,
        "tuning_games": sorted(TUNING | REAL_TUNING),
        "levels": levels,
    }


def markdown(result: dict, argv: list[str] | None) -> str:
    lines = [
        "# How close healthy play comes to each rule (benchmarks/margins.py)",
        "",
        f"Command: `{command('benchmarks.margins', argv)}`  ",
        f"Commit: {commit()}",
        "",
        f"Pressure: the count a rule reached over the count that sets it off (1.0 fires). Safe: every healthy run of "
        f"every game stays below {1 / SAFE_MARGIN:.3f} (1/{SAFE_MARGIN}); for a ban, penalty or gate that acts only "
        f"while a stop rule is that near (steering), over the turns on which it could act. Tuning half: "
        f"{', '.join(result['tuning_games'])}; held out: the rest of the corpus and every other game.",
        "",
        f"- healthy runs: {result['healthy_runs']}; stopped: {len(result['stopped'])}; warned: "
        f"{len(result['warned'])}; a step of their own penalised: {len(result['penalised'])}; turned to reject: "
        f"{len(result['turned_to_reject'])}; LLM path, steps not run as written: {len(result['not_run_as_written'])}",
    ]
    for key in ("stopped", "warned", "penalised", "turned_to_reject", "not_run_as_written"):
        if result[key]:
            lines.append(f"  - {key.replace('_', ' ')}: {_listed(result[key], RUNS_SHOWN)}")
    lines += ["", "## Every rule: the healthy peak, per half", ""]
    per_half = []
    for name, entry in result["rules"].items():
        acting = entry.get("acting")
        worst = acting[0] if acting else max(entry["tuning"][0], entry["held-out"][0])
        per_half.append(
            (
                name,
                f"{entry['tuning'][0]:.3f} ({entry['tuning'][1]})",
                f"{entry['held-out'][0]:.3f} ({entry['held-out'][1]})",
                (f"{acting[0]:.3f} ({acting[1]})" if acting[0] else "0 (never steered)") if acting else "always acts",
                f"{1 / worst:.2f}x" if worst else "-",
                "yes" if entry["safe"] else "**no**",
            )
        )
    header = ("rule", "tuning: peak (run)", "held out: peak (run)", "while steering: peak (run)", "margin", "safe")
    lines += markdown_table(header, per_half)
    levels = result["levels"]
    lines += ["", "## Every rule: the healthy peak by kind of play, every game", ""]
    by_level = []
    for name, entry in result["rules"].items():
        cells = []
        for kind in levels:
            peak, run = entry["levels"][kind]
            cell = f"{peak:.2f} ({run.split()[0]})" if peak else "0"
            cells.append(f"**{cell}**" if peak >= 1 / SAFE_MARGIN else cell)
        by_level.append((name, *cells))
    lines += markdown_table(("rule", *levels), by_level)
    rules = list(result["rules"])
    lines += ["", "## Per game: the peak of every rule over its healthy runs", ""]
    per_game = []
    for stem in sorted(result["games"], key=lambda s: (half(s) != "tuning", s)):
        peaks = result["games"][stem]
        cells = [
            f"**{peaks[r]:.2f}**" if peaks.get(r, 0) >= 1 / SAFE_MARGIN else f"{peaks.get(r, 0):.2f}" for r in rules
        ]
        per_game.append((stem, half(stem), *cells))
    lines += markdown_table(("game", "half", *rules), per_game)
    lines += ["", "## Stuck loops cut from the walkthroughs: turns from the loop's start to its end", ""]
    lines += markdown_table(
        ("kind (half)", "target", "runs", "within target", "slowest", "late"),
        [
            (
                name,
                entry["target"],
                entry["runs"],
                entry["within_target"],
                entry["slowest"],
                _listed(entry["late"], LATE_SHOWN),
            )
            for name, entry in result["stuck"].items()
        ],
    )
    return "\n".join(lines) + "\n"


RUNS_SHOWN = 12
"""Healthy runs named on a line of the summary (stopped, warned...); the rest are counted (margins.json names them
all)."""
LATE_SHOWN = 6
"""Late loops named in a row of the stuck table; the rest are counted."""


def _listed(names: list[str], shown: int) -> str:
    """The first `shown` names and how many more there are ("-" for none)."""
    if not names:
        return "-"
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--runs", action="append", required=True, help="an --out folder of benchmarks.corpus or .generated run"
    )
    cli.add_config(parser)
    cli.add_set(parser)
    cli.add_out(parser, default="benchmarks/results/margins")
    args = parser.parse_args(argv)
    from loguru import logger

    logger.remove()
    try:
        config = GameConfiguration.from_toml(args.config, cli.set_overrides(args.set))
        rows = load([Path(folder) for folder in args.runs])
    except (ConfigError, OSError, KeyError, json.JSONDecodeError) as exc:
        return cli.fail(exc)
    if not any(row.get("records") for row in rows):
        return cli.fail("no run kept its records (run the benchmarks with --records)")
    result = evaluate(rows, config)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    made = {"command": command("benchmarks.margins", argv), "commit": commit()}
    (out / "margins.json").write_text(json.dumps({**made, **result}, indent=1) + "\n")
    (out / "margins.md").write_text(markdown(result, argv))
    print(markdown(result, argv).split("## Per game")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
