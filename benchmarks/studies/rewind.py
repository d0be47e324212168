"""End against rewind: what putting a stuck episode back to its last progress (`on_stuck = "rewind"`) buys over
ending it (`on_stuck = "end"`), and whether healthy play ever rewinds.

    uv run python -m benchmarks.studies.rewind --games ../shared/games --out docs/results
    uv run python -m benchmarks.studies.rewind --games ../shared/games --parts offline --seeds 1,2,3 --max-turns 300
    uv run python -m benchmarks.studies.rewind --parts healthy --noisy-seeds 1,2,3   # builds the missing noisy walks

Parts (`--parts`, all by default; a part run alone replaces only its own section of rewind.json):
- `offline`: the offline agent and critic on every story file of `--games`, under each of `--seeds` (gameplay.seed),
  `--max-turns` turns an episode, the knowledge store off (episodes independent), end and rewind. Per game and in
  total: best score, rooms visited, turns, endings; for rewind runs the rewinds, the turns abandoned and, for each
  rewind, whether new progress (a turn after it whose progress signals fired: its `progress_check` event) came within
  WINDOW turns, how many turns it took, and what the turns after it did (`rewind_outcomes`).
- `healthy`: the corpus's optimal and noisy walkthroughs (benchmarks/corpus.py, from its trajectory cache: `--cache`,
  building those missing there), forced, with `rewind`: none may rewind.
- `looper`: the corpus's stuck trajectories, played by the steerable looper, end and rewind.
- `scenarios`: the zork1 scenarios (playthroughs/scenarios), as benchmarks.evaluate plays them (stuck ones by the
  steerable looper), end and rewind.
- `llm`: stuck zork1 scenarios through the LLM agent and critic against the scripted server's stubborn model
  (playthroughs/llm_path.py), end and rewind: LLM calls, best score, calls per point.

Every figure is read from the records the episodes wrote. Writes rewind.json and rewind.md.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from loguru import logger

from benchmarks import cli, evaluate
from managers.loop_break.rewind import RewindBans
from playthroughs import llm_path
from playthroughs.episodes import play_trajectory
from playthroughs.scenarios import ScenarioError, build_scenario, scenario_names
from playthroughs.trajectory_cache import build
from session.commands import canonical_command
from session.config import ConfigError, GameConfiguration
from session.events import EventType
from session.provenance import command, commit
from session.records import LOOP_ENDINGS, TurnRecord, read_record_dicts, read_summary
from session.story_file import STORY_SUFFIXES, StoryFileError
from session.tables import markdown_table

MODES = ("end", "rewind")
"""The two `on_stuck` settings compared."""
WINDOW = 40
"""Turns after a rewind within which new progress counts as reached (the issue's acceptance)."""
PARTS = ("offline", "healthy", "looper", "scenarios", "llm")
LLM_SCENARIOS = ("dam_back_and_forth", "camp_in_room")
"""The stuck zork1 scenarios benchmarks.llm_calls measures: a back-and-forth between rooms and an in-room loop."""
ZORK1 = "zork1.z5"


# -- reading the records (pure) ------------------------------------------------------------------------------
def signals_of(record: dict) -> list[str]:
    """The progress signals that fired in this turn (its `progress_check` event; none when it has none)."""
    for event in record["events"]:
        if event["event_type"] == EventType.PROGRESS_CHECK:
            return list(event["signals"])
    return []


def rewind_outcomes(records: list[dict], ending: str, window: int = WINDOW) -> list[dict]:
    """Each rewind of an episode (records in order; `ending` its termination reason) and what followed it.

    `to_progress`: turns from the rewind to the first later turn whose progress signals fired, before the next
    rewind (None: none did; progress after the next rewind is that one's); `reached`: that within `window` turns.
    The turns after it (up to that progress, the next rewind, `window` turns or the end) are described: `repeated`
    is the share of their commands the abandoned turns had made too, `revisited` the share of the rooms they ended
    in that the abandoned turns had been in, `bans` the commands the rewind refused (situation and command pairs, as
    managers.loop_break.rewind works them out), `met_bans` how many of the turns began in a situation where one was
    refused, `banned` the proposals refused outright by a ban (an agent that reads the banned list never proposes
    one), `same_point` whether the previous rewind went back to the same turn, and `fate` how the stretch ended
    without progress (`rewound again`, the episode's ending, or `no progress`)."""
    rewinds = [(r["turn"], e) for r in records for e in r["events"] if e["event_type"] == EventType.REWIND]
    progress_turns = [r["turn"] for r in records if signals_of(r)]
    last_turn = records[-1]["turn"] if records else 0
    outcomes = []
    for index, (turn, event) in enumerate(rewinds):
        next_rewind = rewinds[index + 1][0] if index + 1 < len(rewinds) else None
        branch_end = next_rewind if next_rewind is not None else last_turn
        progress = next((t for t in progress_turns if turn < t <= branch_end), None)
        horizon = min(t for t in (turn + window, next_rewind, progress, last_turn) if t is not None)
        abandoned = [r for r in records if turn - event["abandoned"] < r["turn"] <= turn]
        after = [r for r in records if turn < r["turn"] <= horizon]
        reached = progress is not None and progress - turn <= window
        if reached:
            fate = "progress"
        elif next_rewind is not None and next_rewind - turn <= window:
            fate = "rewound again"
        elif last_turn - turn <= window:
            fate = ending
        else:
            fate = "no progress"
        start = next((r["situation"] for r in records if r["turn"] == event["to_turn"]), "")
        bans = RewindBans()
        bans.start(turn, window, start, [TurnRecord(**r) for r in abandoned], "")
        before = [start] + [r["situation"] for r in after[:-1]]
        tried = {canonical_command(r["command"]) for r in abandoned if r.get("ran", True)}
        rooms = {r["room_id_after"] for r in abandoned} | {r["room_id_before"] for r in abandoned}
        outcomes.append(
            {
                "turn": turn,
                "to_turn": event["to_turn"],
                "abandoned": event["abandoned"],
                "rule": event.get("rule") or event.get("reason"),
                "restored": event.get("restored"),
                "to_progress": progress - turn if progress is not None else None,
                "reached": reached,
                "signals": signals_of(next(r for r in records if r["turn"] == progress)) if reached else [],
                "fate": fate,
                "same_point": index > 0 and rewinds[index - 1][1]["to_turn"] == event["to_turn"],
                "repeated": _share(canonical_command(r["command"]) in tried for r in after),
                "revisited": _share(r["room_id_after"] in rooms for r in after),
                "bans": sum(len(commands) for commands in bans.by_situation.values()),
                "met_bans": sum(situation in bans.by_situation for situation in before),
                "banned": sum(c["source"] == "ban" for r in after for c in r["candidates"]),
                "new_best": max((r["score_after"] for r in records if r["turn"] > turn), default=0)
                > max((r["score_after"] for r in records if r["turn"] <= turn), default=0),
            }
        )
    return outcomes


def _share(flags) -> float | None:
    flags = list(flags)
    return round(sum(flags) / len(flags), 3) if flags else None


def episode_row(summary: dict, records: list[dict]) -> dict:
    """The figures of one episode, from its summary and records."""
    return {
        "turns": summary["turns"],
        "best_score": summary["best_score"],
        "final_score": summary["final_score"],
        "max_score": summary["max_score"],
        "rooms_visited": summary["rooms_visited"],
        "termination_reason": summary["termination_reason"],
        "rewinds": summary.get("rewinds", 0),
        "abandoned_turns": summary.get("abandoned_turns", 0),
        "llm_calls": sum(summary["llm_calls"].values()),
        "rewind_outcomes": rewind_outcomes(records, summary["termination_reason"]),
    }


def rewind_totals(outcomes: list[dict]) -> dict:
    """How many rewinds reached new progress within WINDOW turns, and how soon (median turns)."""
    reached = [o["to_progress"] for o in outcomes if o["reached"]]
    return {
        "rewinds": len(outcomes),
        "reached": len(reached),
        "share_reached": round(len(reached) / len(outcomes), 3) if outcomes else None,
        "median_turns_to_progress": statistics.median(reached) if reached else None,
    }


def _read(summary_path: Path) -> tuple[dict, list[dict]]:
    return read_summary(summary_path.parent), read_record_dicts(summary_path.parent)


def _mode_overrides(mode: str, folder: Path, max_turns: int) -> dict:
    return {
        "files": {"episode_dir": str(folder)},
        "gameplay": {"max_turns_per_episode": max_turns},
        "loop_break": {"on_stuck": mode},
    }


# -- part 1: the offline agent on the corpus -----------------------------------------------------------------
def offline_episode(job: dict) -> dict:
    """One episode of the offline agent and critic: a story file, a seed, an `on_stuck` mode."""
    from orchestration.wiring import RunOptions, build_orchestrator

    logger.remove()
    with tempfile.TemporaryDirectory() as folder:
        overrides = _mode_overrides(job["mode"], Path(folder), job["max_turns"])
        overrides["gameplay"] |= {"agent": "offline", "critic": "offline", "seed": job["seed"]}
        overrides["knowledge"] = {"enabled": False}
        config = GameConfiguration.from_toml(job["config"], overrides)
        orchestrator = build_orchestrator(config, RunOptions(rom=job["story"], quiet=True))
        summary, records = _read(orchestrator.play_episode())
        orchestrator.session.close()
    return {"game": summary["game"], "seed": job["seed"], "mode": job["mode"], **episode_row(summary, records)}


def offline_part(stories: list[Path], config: str, seeds: list[int], max_turns: int, jobs: int) -> dict:
    work = [
        {"story": str(s), "config": config, "seed": seed, "mode": mode, "max_turns": max_turns}
        for s in stories
        for seed in seeds
        for mode in MODES
    ]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        runs = pool.map(offline_episode, work)
    runs.sort(key=lambda r: (r["game"], r["seed"], r["mode"]))
    return {"seeds": seeds, "max_turns": max_turns, "window": WINDOW, "runs": runs, **offline_summary(runs)}


def offline_summary(runs: list[dict]) -> dict:
    """Per game (means over seeds) and over every run: end against rewind."""
    games: dict[str, dict] = {}
    for game in sorted({r["game"] for r in runs}):
        row: dict = {"game": game}
        for mode in MODES:
            mine = [r for r in runs if r["game"] == game and r["mode"] == mode]
            row[mode] = _mode_means(mine)
        row["rewind"] |= rewind_totals([o for r in runs if r["game"] == game for o in r["rewind_outcomes"]])
        games[game] = row
    overall = {mode: _mode_means([r for r in runs if r["mode"] == mode]) for mode in MODES}
    outcomes = [o for r in runs for o in r["rewind_outcomes"]]
    overall["rewind"] |= rewind_totals(outcomes)
    overall["fates"] = dict(Counter(o["fate"] for o in outcomes).most_common())
    overall["rules"] = dict(Counter(o["rule"] for o in outcomes).most_common())
    failed = [o for o in outcomes if not o["reached"]]
    overall["failed"] = {
        "rewinds": len(failed),
        "same_point": sum(o["same_point"] for o in failed),
        "mean_repeated": _mean(o["repeated"] for o in failed),
        "mean_revisited": _mean(o["revisited"] for o in failed),
        "banned_proposals": sum(o["banned"] for o in failed),
        "mean_bans": _mean(o["bans"] for o in failed),
        "no_bans": sum(o["bans"] == 0 for o in failed),
        "met_no_ban": sum(o["met_bans"] == 0 for o in failed),
    }
    reached = [o for o in outcomes if o["reached"]]
    overall["reached_signals"] = dict(Counter(s for o in reached for s in o["signals"]).most_common())
    overall["reached_new_best"] = sum(o["new_best"] for o in reached)
    better = sum(g["rewind"]["best_score"] > g["end"]["best_score"] for g in games.values())
    worse = sum(g["rewind"]["best_score"] < g["end"]["best_score"] for g in games.values())
    overall["games_better_worse_same"] = [better, worse, len(games) - better - worse]
    overall["acceptance"] = {
        "half_reached": (overall["rewind"]["share_reached"] or 0) >= 0.5,
        "mean_best_higher": overall["rewind"]["best_score"] > overall["end"]["best_score"],
    }
    return {"games": list(games.values()), "overall": overall}


def _mode_means(runs: list[dict]) -> dict:
    return {
        "runs": len(runs),
        "best_score": _mean(r["best_score"] for r in runs),
        "rooms_visited": _mean(r["rooms_visited"] for r in runs),
        "turns": _mean(r["turns"] for r in runs),
        "endings": dict(Counter(r["termination_reason"] for r in runs).most_common()),
        "rewinds_made": sum(r["rewinds"] for r in runs),
        "abandoned_turns": sum(r["abandoned_turns"] for r in runs),
    }


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return round(statistics.fmean(values), 3) if values else None


# -- part 2: healthy walkthroughs never rewind ---------------------------------------------------------------
def healthy_game(job: dict) -> list[dict]:
    """The optimal and noisy walkthroughs of one story file (playthroughs.trajectory_cache.build, from the corpus's
    cache), forced, with rewind."""
    logger.remove()
    story = Path(job["story"])
    built = build(story, {"optimal", "noisy"}, job["factors"], job["seeds"], [], Path(job["cache"]))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for index, trajectory in enumerate(built):
            overrides = _mode_overrides("rewind", Path(folder) / str(index), len(trajectory.commands))
            config = GameConfiguration.from_toml(job["config"], overrides)
            summary, records = play_trajectory(story, trajectory, config, "forced")
            rewind_turns = [r["turn"] for r in records for e in r["events"] if e["event_type"] == EventType.REWIND]
            rows.append(
                {
                    "game": trajectory.game,
                    "kind": trajectory.kind,
                    "variant": trajectory.variant,
                    "turns": summary["turns"],
                    "script_turns": len(trajectory.commands),
                    "healthy_until": trajectory.healthy_until,
                    "termination_reason": summary["termination_reason"],
                    "final_score": summary["final_score"],
                    "script_score": trajectory.script_score,
                    "clean_score": trajectory.clean_score,
                    "rewinds": summary["rewinds"],
                    "rewind_turns": rewind_turns,
                    "rewinds_while_healthy": sum(t <= trajectory.healthy_until for t in rewind_turns),
                    "abandoned_turns": summary["abandoned_turns"],
                }
            )
    return rows


def healthy_part(stories: list[Path], config: str, factors: list[int], seeds: list[int], cache: Path, jobs: int):
    work = [
        {"story": str(s), "config": config, "factors": factors, "seeds": seeds, "cache": str(cache)} for s in stories
    ]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        runs = sorted((row for rows in pool.map(healthy_game, work) for row in rows), key=lambda r: r["game"])
    return {
        "factors": factors,
        "seeds": seeds,
        "runs": runs,
        "summary": {
            "runs": len(runs),
            "games": len({r["game"] for r in runs}),
            "turns": sum(r["turns"] for r in runs),
            "by_kind": dict(Counter(r["kind"] for r in runs)),
            "rewinds": sum(r["rewinds"] for r in runs),
            "rewinds_while_healthy": sum(r["rewinds_while_healthy"] for r in runs),
            "rewound": [_healthy_name(r) for r in runs if r["rewinds"]],
            "rewound_while_healthy": [_healthy_name(r) for r in runs if r["rewinds_while_healthy"]],
            "derailed_then_rewound": [
                f"{_healthy_name(r)}: healthy until turn {r['healthy_until']} (script score {r['script_score']} of "
                f"{r['clean_score']}), rewinds at turns {', '.join(map(str, r['rewind_turns']))}"
                for r in runs
                if r["rewinds"] and not r["rewinds_while_healthy"]
            ],
            "loop_endings": [_healthy_name(r) for r in runs if r["termination_reason"] in LOOP_ENDINGS],
            "score_mismatches": [_healthy_name(r) for r in runs if r["final_score"] != r["script_score"]],
        },
    }


def _healthy_name(row: dict) -> str:
    return f"{row['game']}/{row['kind']}/{row['variant']}"


# -- part 2b: the steerable looper on the corpus's stuck trajectories ---------------------------------------
def looper_game(job: dict) -> list[dict]:
    """Every stuck trajectory of one story file, steered by the looper, end and rewind."""
    logger.remove()
    story = Path(job["story"])
    built = build(story, {"stuck"}, [], [], job["cuts"], Path(job["cache"]))
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for index, trajectory in enumerate(built):
            for mode in MODES:
                overrides = _mode_overrides(mode, Path(folder) / f"{index}-{mode}", len(trajectory.commands))
                config = GameConfiguration.from_toml(job["config"], overrides)
                summary, records = play_trajectory(story, trajectory, config, "looper")
                row = episode_row(summary, records)
                row |= {"game": trajectory.game, "kind": trajectory.kind, "variant": trajectory.variant, "mode": mode}
                row["loop_start"] = trajectory.loop_start
                row["score_at_loop"] = next(
                    (r["score_after"] for r in records if r["turn"] == trajectory.prefix_turns), 0
                )
                rows.append(row)
    return rows


def looper_part(stories: list[Path], config: str, cuts: list[float], cache: Path, jobs: int) -> dict:
    work = [{"story": str(s), "config": config, "cuts": cuts, "cache": str(cache)} for s in stories]
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        runs = [row for rows in pool.map(looper_game, work) for row in rows]
    runs.sort(key=lambda r: (r["game"], r["kind"], r["variant"], r["mode"]))
    kinds = {}
    for kind in sorted({r["kind"] for r in runs}):
        mine = [r for r in runs if r["kind"] == kind]
        kinds[kind] = {mode: _mode_means([r for r in mine if r["mode"] == mode]) for mode in MODES} | {
            "outcomes": rewind_totals([o for r in mine for o in r["rewind_outcomes"]])
        }
    outcomes = [o for r in runs for o in r["rewind_outcomes"]]
    overall = {mode: _mode_means([r for r in runs if r["mode"] == mode]) for mode in MODES}
    overall["outcomes"] = rewind_totals(outcomes)
    overall["fates"] = dict(Counter(o["fate"] for o in outcomes).most_common())
    return {"cuts": cuts, "runs": runs, "kinds": kinds, "overall": overall}


# -- part 3: the zork1 scenarios ----------------------------------------------------------------------------
def scenarios_part(rom: Path, config_path: str) -> list[dict]:
    """Every scenario as benchmarks.evaluate plays it (healthy forced, stuck by the looper, the unparseable LLM
    scripted), end and rewind."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in scenario_names():
            built = build_scenario(name, rom)
            if built.spec.driver == "unparseable_llm":
                mode_of_play, length = "llm", len(built.loop)
            else:
                mode_of_play, length = ("forced" if built.spec.kind == "healthy" else "looper"), len(built.commands)
            row = {
                "scenario": name,
                "kind": built.spec.kind,
                "played_by": mode_of_play,
                "prefix_turns": len(built.prefix),
            }
            for mode in MODES:
                config = GameConfiguration.from_toml(
                    config_path, _mode_overrides(mode, Path(folder) / name / mode, length)
                )
                agent, client = evaluate.scenario_agents(built, mode_of_play, config)
                summary, records = evaluate.run_episode(rom, config, agent, client)
                row[mode] = episode_row(summary, records)
            rows.append(row)
    return rows


# -- part 4: the LLM path against the stubborn scripted model ----------------------------------------------
def llm_part(rom: Path, config_path: str, names: tuple[str, ...] = LLM_SCENARIOS) -> list[dict]:
    """Each stuck scenario's commands as the scripted model's plan (it proposes step N at turn N, and the same step
    again when rejected), through the LLM agent and critic, end and rewind."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            built = build_scenario(name, rom)
            row = {"scenario": name, "prefix_turns": len(built.prefix), "script_turns": len(built.commands)}
            for mode in MODES:
                summary, records, _ = llm_path.play(
                    rom,
                    built.commands,
                    Path(config_path),
                    Path(folder) / name / mode,
                    more_overrides={"loop_break": {"on_stuck": mode}},
                )
                figures = episode_row(summary, records)
                figures["cost_usd"] = summary["cost_usd"]["total"]
                figures["calls_per_point"] = (
                    round(figures["llm_calls"] / figures["best_score"], 2) if figures["best_score"] else None
                )
                row[mode] = figures
            rows.append(row)
    return rows


# -- outputs ------------------------------------------------------------------------------------------------
def _endings(endings: dict) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in endings.items())


def _number(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def offline_markdown(part: dict) -> str:
    overall = part["overall"]
    end, rewind = overall["end"], overall["rewind"]
    lines = [
        f"### The offline agent on {len(part['games'])} games, seeds {','.join(map(str, part['seeds']))}, "
        f"{part['max_turns']} turns an episode, knowledge store off",
        "",
        f"- mean best score: end **{end['best_score']}**, rewind **{rewind['best_score']}** "
        f"(higher with rewind: {overall['acceptance']['mean_best_higher']}); games better / worse / same with rewind: "
        + " / ".join(map(str, overall["games_better_worse_same"])),
        f"- rewinds: **{rewind['rewinds']}**, followed by new progress within {part['window']} turns: "
        f"**{rewind['reached']}** ({_number(rewind['share_reached'], 3)}; at least half: "
        f"{overall['acceptance']['half_reached']}), median turns to it {_number(rewind['median_turns_to_progress'])}; "
        f"abandoned turns {rewind['abandoned_turns']}",
        f"- mean rooms visited: end {end['rooms_visited']}, rewind {rewind['rooms_visited']}; mean turns: end "
        f"{end['turns']}, rewind {rewind['turns']}",
        f"- endings: end: {_endings(end['endings'])}; rewind: {_endings(rewind['endings'])}",
        f"- what followed each rewind within {part['window']} turns: {_endings(overall['fates'])}",
        f"- the stop rules behind the rewinds: {_endings(overall['rules'])}",
        f"- rewinds without progress ({overall['failed']['rewinds']}): {overall['failed']['same_point']} went back to "
        f"the same turn as the rewind before; of the turns after them, a mean {overall['failed']['mean_repeated']} "
        f"made a command the abandoned turns had made, a mean {overall['failed']['mean_revisited']} ended in a room "
        f"the abandoned turns had been in; a mean {overall['failed']['mean_bans']} commands banned by the rewind "
        f"(none: {overall['failed']['no_bans']}), after {overall['failed']['met_no_ban']} of them no turn began "
        f"where a ban held; {overall['failed']['banned_proposals']} proposals refused by a ban",
        f"- progress after a rewind, by signal: {_endings(overall['reached_signals'])}; "
        f"{overall['reached_new_best']} of those rewinds were followed by a new best score later in the episode",
        "",
    ]
    games = []
    for game in part["games"]:
        end, rewind = game["end"], game["rewind"]
        games.append(
            (
                game["game"],
                _number(end["best_score"]),
                _number(rewind["best_score"]),
                _number(end["rooms_visited"]),
                _number(rewind["rooms_visited"]),
                _number(end["turns"]),
                _number(rewind["turns"]),
                _endings(end["endings"]),
                _endings(rewind["endings"]),
                rewind["rewinds"],
                rewind["abandoned_turns"],
                f"{rewind['reached']}/{rewind['rewinds']}",
                _number(rewind["median_turns_to_progress"]),
            )
        )
    end, rewind = overall["end"], overall["rewind"]
    summed = (
        "**all**",
        f"**{end['best_score']}**",
        f"**{rewind['best_score']}**",
        end["rooms_visited"],
        rewind["rooms_visited"],
        end["turns"],
        rewind["turns"],
        "",
        "",
        rewind["rewinds"],
        rewind["abandoned_turns"],
        f"{rewind['reached']}/{rewind['rewinds']}",
        _number(rewind["median_turns_to_progress"]),
    )
    lines += markdown_table(OFFLINE_COLUMNS, games, totals=[summed])
    lines += ["", "Every rewind (rewind runs):", ""]
    lines += markdown_table(
        REWIND_COLUMNS,
        [_rewind_row(f"{run['game']}, seed {run['seed']}", o) for run in part["runs"] for o in run["rewind_outcomes"]],
    )
    return "\n".join(lines) + "\n"


OFFLINE_COLUMNS = (
    "game",
    "best: end",
    "best: rewind",
    "rooms: end",
    "rooms: rewind",
    "turns: end",
    "turns: rewind",
    "endings: end",
    "endings: rewind",
    "rewinds",
    "abandoned",
    "progress ≤40",
    "median turns to it",
)
REWIND_COLUMNS = (
    "episode",
    "at turn",
    "back to",
    "abandoned",
    "rule",
    "progress after (turns)",
    "what followed",
    "same point",
    "repeated",
    "revisited",
    "bans",
    "met bans",
    "banned",
)


def _rewind_row(name: str, o: dict) -> tuple:
    return (
        name,
        o["turn"],
        o["to_turn"],
        o["abandoned"],
        o["rule"],
        _number(o["to_progress"]),
        o["fate"],
        "yes" if o["same_point"] else "",
        _number(o["repeated"], 2),
        _number(o["revisited"], 2),
        o["bans"],
        o["met_bans"],
        o["banned"],
    )


def healthy_markdown(part: dict) -> str:
    s = part["summary"]
    return (
        f"### Healthy walkthroughs with `rewind` (forced)\n\n"
        f"- runs: {s['runs']} on {s['games']} games ({', '.join(f'{k} {n}' for k, n in s['by_kind'].items())}; "
        f"noisy factors {','.join(map(str, part['factors']))}, seeds {','.join(map(str, part['seeds']))}), "
        f"{s['turns']:,} turns\n"
        f"- rewinds while the walkthrough is healthy (up to its `healthy_until`, as the corpus measures false stops): "
        f"**{s['rewinds_while_healthy']}** {s['rewound_while_healthy'] or ''}\n"
        f"- rewinds in all: {s['rewinds']}; after a noisy script had left the walkthrough (its detours changed the "
        f"game, plain Jericho's score falls short of the clean one; `end` stops these too): "
        f"{'; '.join(s['derailed_then_rewound']) or 'none'}\n"
        f"- loop endings: {s['loop_endings'] or 'none'}; final score differing from the script's: "
        f"{s['score_mismatches'] or 'none'}\n"
    )


def looper_markdown(part: dict) -> str:
    overall = part["overall"]
    lines = [
        f"### The steerable looper on the corpus's stuck trajectories (cuts {','.join(map(str, part['cuts']))})",
        "",
        f"- runs per mode: {overall['end']['runs']}; mean best score: end {overall['end']['best_score']}, rewind "
        f"{overall['rewind']['best_score']}; mean rooms: end {overall['end']['rooms_visited']}, rewind "
        f"{overall['rewind']['rooms_visited']}; mean turns: end {overall['end']['turns']}, rewind "
        f"{overall['rewind']['turns']}",
        f"- rewinds {overall['outcomes']['rewinds']}, followed by new progress within {WINDOW} turns "
        f"{overall['outcomes']['reached']} ({_number(overall['outcomes']['share_reached'], 3)}), median turns to it "
        f"{_number(overall['outcomes']['median_turns_to_progress'])}; what followed: {_endings(overall['fates'])}",
        "",
    ]
    columns = (
        "kind",
        "best: end",
        "best: rewind",
        "rooms: end",
        "rooms: rewind",
        "turns: end",
        "turns: rewind",
        "rewinds",
        "progress ≤40",
        "median turns to it",
    )
    kinds = []
    for kind, row in part["kinds"].items():
        end, rewind, o = row["end"], row["rewind"], row["outcomes"]
        kinds.append(
            (
                kind,
                end["best_score"],
                rewind["best_score"],
                end["rooms_visited"],
                rewind["rooms_visited"],
                end["turns"],
                rewind["turns"],
                o["rewinds"],
                f"{o['reached']}/{o['rewinds']}",
                _number(o["median_turns_to_progress"]),
            )
        )
    return "\n".join(lines + markdown_table(columns, kinds)) + "\n"


def scenarios_markdown(rows: list[dict]) -> str:
    lines = ["### The zork1 scenarios (stuck ones by the steerable looper)", ""]
    columns = (
        "scenario",
        "played by",
        "end: turns (ending)",
        "end: best",
        "rewind: turns (ending)",
        "rewind: best",
        "rewinds",
        "abandoned",
        "progress after a rewind (turns)",
    )
    lines += markdown_table(
        columns,
        [
            (
                row["scenario"],
                row["played_by"],
                f"{row['end']['turns']} ({row['end']['termination_reason']})",
                row["end"]["best_score"],
                f"{row['rewind']['turns']} ({row['rewind']['termination_reason']})",
                row["rewind"]["best_score"],
                row["rewind"]["rewinds"],
                row["rewind"]["abandoned_turns"],
                _progress_after(row["rewind"]),
            )
            for row in rows
        ],
    )
    return "\n".join(lines) + "\n" + _rewind_table([(r["scenario"], r["rewind"]) for r in rows])


def llm_markdown(rows: list[dict]) -> str:
    lines = ["### The LLM path: the scripted server's stubborn model (zork1 stuck scenarios)", ""]
    columns = (
        "scenario",
        "mode",
        "turns (ending)",
        "LLM calls",
        "best score",
        "calls per point",
        "cost USD",
        "rewinds",
        "progress after a rewind (turns)",
    )
    runs = []
    for row in rows:
        for mode in MODES:
            f = row[mode]
            runs.append(
                (
                    row["scenario"],
                    mode,
                    f"{f['turns']} ({f['termination_reason']})",
                    f["llm_calls"],
                    f["best_score"],
                    _number(f["calls_per_point"], 2),
                    f"{f['cost_usd']:.4f}",
                    f["rewinds"],
                    _progress_after(f),
                )
            )
    lines += markdown_table(columns, runs)
    return "\n".join(lines) + "\n" + _rewind_table([(r["scenario"], r["rewind"]) for r in rows])


def _progress_after(figures: dict) -> str:
    """The turns from each rewind of an episode to the progress after it ("-": none before the next rewind)."""
    return ", ".join(_number(o["to_progress"]) for o in figures["rewind_outcomes"]) or "-"


def _rewind_table(episodes: list[tuple[str, dict]]) -> str:
    rows = [_rewind_row(name, o) for name, figures in episodes for o in figures["rewind_outcomes"]]
    if not rows:
        return ""
    return "\nEvery rewind:\n\n" + "\n".join(markdown_table(REWIND_COLUMNS, rows)) + "\n"


MARKDOWN = {
    "offline": offline_markdown,
    "healthy": healthy_markdown,
    "looper": looper_markdown,
    "scenarios": scenarios_markdown,
    "llm": llm_markdown,
}
LEGEND = (
    "`progress after`: turns from the rewind to the first turn whose progress signals fired (a `progress_check` "
    f"event with signals); counted as reached within {WINDOW} turns. `what followed`: `progress`, `rewound again` "
    f"(the next rewind came within {WINDOW} turns, no progress before), the episode's ending (it ended within "
    f"{WINDOW} turns), or `no progress`. `same point`: the rewind before went back to the same turn. `repeated` / "
    "`revisited`: shares of the turns after the rewind (up to progress, the next rewind or the window) whose command "
    "the abandoned turns had made / whose room they had been in. `bans`: the commands the rewind refused (a command "
    "the abandoned turns made more than once in one situation, refused there); `met bans`: turns after the rewind that "
    "began in such a situation; `banned`: proposals refused by a ban in those turns.\n"
)


def markdown(result: dict) -> str:
    parts = [
        f"## {name}\n\nCommand: `{result[name]['command']}`  \nCommit: {result[name]['commit']}  \n"
        f"Wall time: {result[name]['wall_seconds']} s\n\n" + MARKDOWN[name](result[name]["result"])
        for name in PARTS
        if name in result
    ]
    heading = (
        "# End against rewind (benchmarks/studies/rewind.py)\n\n"
        f"Command: `{result['command']}`  \nCommit: {result['commit']}\n\n" + LEGEND
    )
    return heading + "\n" + "\n".join(parts)


# -- entry point ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_games(parser)
    cli.add_only(parser)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated among {', '.join(PARTS)}")
    cli.add_config(parser)
    cli.add_out(parser, default="benchmarks/results")
    parser.add_argument("--seeds", type=cli.numbers, default=[1, 2, 3], help="offline: emulator seeds (gameplay.seed)")
    parser.add_argument("--max-turns", type=int, default=300, help="offline: turns an episode")
    parser.add_argument("--noisy-factors", type=cli.numbers, default=[1, 2, 3], help="healthy: detours per step")
    parser.add_argument("--noisy-seeds", type=cli.numbers, default=[1], help="healthy: noisy walkthrough seeds")
    parser.add_argument("--cuts", type=cli.fractions, default=[0.25, 0.5, 0.75], help="looper")
    cli.add_cache(parser, help="the corpus's trajectory cache")
    cli.add_jobs(parser, help="processes")
    args = parser.parse_args(argv)
    parts = args.parts.split(",")
    out = Path(args.out)
    folder = Path(args.games)
    try:
        if unknown := set(parts) - set(PARTS):
            raise ConfigError(f"--parts: unknown {sorted(unknown)}; known: {', '.join(PARTS)}")
        GameConfiguration.from_toml(args.config)
        stories = sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES) if folder.is_dir() else []
        if args.only:
            stories = [p for p in stories if p.stem in set(args.only.split(","))]
        if not stories:
            raise StoryFileError(f"no story files (.z1-.z8) in {folder}")
        rom = folder / ZORK1
        runners = {
            "offline": lambda: offline_part(stories, args.config, args.seeds, args.max_turns, args.jobs),
            "healthy": lambda: healthy_part(
                stories, args.config, args.noisy_factors, args.noisy_seeds, Path(args.cache), args.jobs
            ),
            "looper": lambda: looper_part(stories, args.config, args.cuts, Path(args.cache), args.jobs),
            "scenarios": lambda: scenarios_part(rom, args.config),
            "llm": lambda: llm_part(rom, args.config),
        }
        logger.remove()
        out.mkdir(parents=True, exist_ok=True)
        path = out / "rewind.json"
        result = json.loads(path.read_text()) if path.is_file() else {}
        made = {"command": command("benchmarks.studies.rewind"), "commit": commit()}
        for name in dict.fromkeys(parts):  # in the order asked (rewind.md keeps PARTS' order)
            started = time.perf_counter()
            figures = runners[name]()
            result[name] = {**made, "wall_seconds": round(time.perf_counter() - started, 1), "result": figures}
            result |= made
            path.write_text(json.dumps(result, indent=1) + "\n")  # each part kept as soon as it is measured
            (out / "rewind.md").write_text(markdown(result))
            print(f"{name}: {result[name]['wall_seconds']} s", file=sys.stderr, flush=True)
    except (ConfigError, StoryFileError, ScenarioError) as exc:
        return cli.fail(exc)
    print((out / "rewind.md").read_text())
    print(f"wrote {out / 'rewind.json'} and {out / 'rewind.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
