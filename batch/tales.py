"""The table of `main.py batch --preset tales`: per game the best normalized score over the seeds (best score / max
score, TALES's figure), its mean over the seeds, the best walkthrough progress, and the tokens, LLM calls and cost
per step; the mean over the games; and, beside it, the published figures of batch/data/tales_reference.json, each
labelled with its source. Written as `OUT/tales.md` and `OUT/tales.json`, from the batch's manifest rows (which
carry each episode's summary.json figures).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import TYPE_CHECKING

from batch.jobs import NOT_RUN, finished_rows, points_share
from session.provenance import commit
from session.tables import markdown_table, percent

if TYPE_CHECKING:
    from batch.presets import Preset

PUBLISHED = "published (TALES website table)"
THIS_RUN = "this run"
GAME_COLUMNS = (
    "game",
    "max score",
    "episodes",
    "best normalized (best of seeds)",
    "mean normalized (over seeds)",
    "best progress",
    "mean steps",
    "tokens / step",
    "LLM calls / step",
    "cost / step (USD)",
)
COMPARISON_COLUMNS = ("figures", "agent", "zork1", "mean over games")


# -- the figures ------------------------------------------------------------------------------------------------
def game_line(game: str, rows: list[dict]) -> dict:
    """One game's figures over its episodes (the finished ones; crashed and unstarted ones are counted)."""
    finished = [r for r in finished_rows(rows) if r.get("max_score")]
    normalized = [points_share(r) for r in finished]
    progress = [r["progress"] for r in finished if r.get("progress") is not None]
    steps = sum(r["turns"] for r in finished)
    return {
        "game": game,
        "max_score": max((r["max_score"] for r in finished), default=None),
        "episodes": len(finished),
        "crashed": sum(r["status"] == "crashed" for r in rows),
        "not_run": sum(r["status"] == NOT_RUN for r in rows),
        "cut_by_budget": sum(bool(r.get("cut_by_budget")) for r in finished),
        "best_normalized": round(max(normalized), 4) if normalized else None,
        "mean_normalized": round(mean(normalized), 4) if normalized else None,
        # a game without a walkthrough has no progress, not 0
        "best_progress": round(max(progress), 4) if progress else None,
        "mean_steps": round(steps / len(finished), 1) if finished else None,
        "steps": steps,
        "tokens": sum(r["tokens"] for r in finished),
        "llm_calls": sum(r["llm_calls"] for r in finished),
        "cost_usd": round(sum(r["cost_usd"] for r in finished), 6),
        **per_step(finished),
    }


def per_step(rows: list[dict]) -> dict:
    steps = sum(r["turns"] for r in rows)
    if not steps:
        return {"tokens_per_step": None, "llm_calls_per_step": None, "cost_per_step_usd": None}
    return {
        "tokens_per_step": round(sum(r["tokens"] for r in rows) / steps, 1),
        "llm_calls_per_step": round(sum(r["llm_calls"] for r in rows) / steps, 3),
        "cost_per_step_usd": round(sum(r["cost_usd"] for r in rows) / steps, 6),
    }


def mean_line(games: list[dict], rows: list[dict]) -> dict:
    """The mean over the games that have a finished episode; tokens, calls and cost per step over all their steps."""
    scored = [g for g in games if g["best_normalized"] is not None]
    with_progress = [g["best_progress"] for g in scored if g["best_progress"] is not None]
    finished = [r for r in finished_rows(rows) if r.get("max_score")]
    return {
        "games": len(scored),
        "episodes": len(finished),
        "best_normalized": round(mean(g["best_normalized"] for g in scored), 4) if scored else None,
        "mean_normalized": round(mean(g["mean_normalized"] for g in scored), 4) if scored else None,
        "best_progress": round(mean(with_progress), 4) if with_progress else None,
        "mean_steps": round(mean(r["turns"] for r in finished), 1) if finished else None,
        "endings": dict(sorted(Counter(r["termination_reason"] for r in finished).items())),
        **per_step(finished),
    }


def agent_of(config: dict) -> str:
    """The agent as the cell's configuration names it, with its model when it may call one."""
    agent = config["gameplay"]["agent"]
    return agent if agent in {"offline", "walkthrough"} else f"{agent} ({config['llm']['agent_model']})"


def how_it_differs(preset: Preset, jobs: list[dict]) -> list[str]:
    """How the batch's settings differ from the preset's protocol (explicit flags and grid cells win over it)."""
    seeds = sorted({job["seed"] for job in jobs})
    steps = sorted({job["config"]["gameplay"]["max_turns_per_episode"] for job in jobs})
    episodes = max((job["episode"] for job in jobs), default=1)
    differs = []
    if seeds != sorted(preset.seeds):
        differs.append(f"seeds {_listed(seeds)} (protocol: {_listed(preset.seeds)})")
    if steps != [preset.max_turns]:
        differs.append(f"{_listed(steps)} steps an episode (protocol: {preset.max_turns})")
    if episodes != preset.episodes:
        differs.append(f"{episodes} episodes per seed (protocol: {preset.episodes})")
    return differs


def tales_result(
    preset: Preset, rows: list[dict], jobs: list[dict], left_out: dict[str, str], command: str, code_commit: str
) -> dict:
    reference = json.loads(preset.reference_path().read_text(encoding="utf-8"))
    cells = []
    for cell in dict.fromkeys(job["cell"] for job in jobs):
        cell_rows = [r for r in rows if r["cell"] == cell]
        games = [
            game_line(game, [r for r in cell_rows if r["game"] == game])
            for game in dict.fromkeys(job["game"] for job in jobs if job["cell"] == cell)
        ]
        config = next(job["config"] for job in jobs if job["cell"] == cell)
        cells.append({"cell": cell, "agent": agent_of(config), "games": games, "mean": mean_line(games, cell_rows)})
    return {
        "preset": preset.name,
        "command": command,
        "commit": code_commit,
        "protocol": {
            "steps": preset.max_turns,
            "seeds": list(preset.seeds),
            "episodes_per_seed": preset.episodes,
            "games": "every story file of the folder Jericho supports with a maximum score",
        },
        "differs_from_protocol": how_it_differs(preset, jobs),
        "left_out": left_out,
        "cells": cells,
        "reference": reference,
    }


# -- the files --------------------------------------------------------------------------------------------------
def write_table(
    out: Path,
    preset: Preset,
    rows: list[dict],
    jobs: list[dict],
    left_out: dict[str, str],
    command: str,
    code_commit: str | None = None,
) -> dict:
    """`OUT/<preset>.json` and `.md` of the batch's rows; `code_commit` defaults to the checkout's."""
    result = tales_result(preset, rows, jobs, left_out, command, code_commit or commit())
    (out / f"{preset.name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / f"{preset.name}.md").write_text(markdown(preset, result), encoding="utf-8")
    return result


def markdown(preset: Preset, result: dict) -> str:
    differs = result["differs_from_protocol"]
    played = len(result["cells"][0]["games"]) if result["cells"] else 0
    left_out = ", ".join(f"{game}: {why}" for game, why in result["left_out"].items())
    lines = [
        f"# {preset.title}: this run beside the published figures",
        "",
        f"Command: `{result['command']}`",
        f"Commit: {result['commit']}",
        "",
        f"Protocol: {preset.max_turns} steps an episode, seeds {_listed(preset.seeds)}, "
        f"{_count(preset.episodes, 'episode')} per seed, every story file Jericho supports with a maximum score; "
        f"the figure is the best normalized score (best score / max score). This run: {_count(played, 'game')}"
        + (f" (left out: {left_out})." if left_out else "."),
    ]
    if differs:
        lines += ["", f"**Not the {preset.name.upper()} protocol**: " + "; ".join(differs) + "."]
    for cell in result["cells"]:
        heading = f"## This run, by game: agent {cell['agent']}"
        lines += ["", heading + (f", cell {cell['cell']}" if len(result["cells"]) > 1 else ""), ""]
        lines += markdown_table(GAME_COLUMNS, [_game_row(g) for g in cell["games"]] + [_mean_row(cell["mean"])])
        lines += _notes(cell)
    lines += ["", "## Beside the published figures", ""]
    lines += markdown_table(COMPARISON_COLUMNS, _comparison_rows(result))
    reference = result["reference"]
    lines += [
        "",
        f"- {THIS_RUN}: figures of this batch; {PUBLISHED}: {reference['source']}, "
        f"copied from batch/data/{preset.reference} (`published: true`), not run here. {reference['note']}",
        *(
            f"- published ({study['source']}): {study['what']}; {study['protocol']}."
            for study in reference.get("other_studies", [])
        ),
    ]
    return "\n".join(lines) + "\n"


def _notes(cell: dict) -> list[str]:
    games = cell["games"]
    endings = ", ".join(f"{reason} {count}" for reason, count in cell["mean"]["endings"].items())
    # the game (a death, a win) or the loop break may end an episode before its last step
    notes = [f"Endings: {endings}." if endings else "No finished episode."]
    crashed = sum(g["crashed"] for g in games)
    not_run = sum(g["not_run"] for g in games)
    cut = sum(g["cut_by_budget"] for g in games)
    if crashed or not_run or cut:
        notes.append(
            f"{crashed} episodes crashed, {not_run} not run (the budget was spent), {cut} cut by the budget: "
            "the figures are over the finished episodes."
        )
    missing = [g["game"] for g in games if g["best_normalized"] is None]
    if missing:
        notes.append(f"No finished episode, left out of the mean: {', '.join(missing)}.")
    return ["", *notes]


def _comparison_rows(result: dict) -> list[list[str]]:
    rows = []
    many = len(result["cells"]) > 1
    for cell in result["cells"]:
        [zork1] = [g for g in cell["games"] if g["game"] == "zork1"] or [None]
        games = cell["mean"]["games"]
        for kind, key in (("best of seeds", "best_normalized"), ("mean over seeds", "mean_normalized")):
            label = f"{THIS_RUN} ({kind}" + (f", cell {cell['cell']})" if many else ")")
            mean_value = cell["mean"][key]
            rows.append(
                [
                    label,
                    cell["agent"],
                    percent(zork1[key] if zork1 else None),
                    f"{percent(mean_value)} ({_count(games, 'game')})" if mean_value is not None else "-",
                ]
            )
    for figure in result["reference"]["figures"]:
        mean_value = figure.get("jericho_mean")
        rows.append(
            [
                PUBLISHED,
                figure["model"],
                _published(figure.get("zork1")),
                f"{_published(mean_value)} (TALES's Jericho games)" if mean_value is not None else "-",
            ]
        )
    for study in result["reference"].get("other_studies", []):
        zork1 = _study_figure(study) if study["game"] == "zork1" else "-"
        rows.append([f"published ({study['source']}, its own protocol)", study["model"], zork1, "-"])
    return rows


def _game_row(game: dict) -> list[object]:
    episodes = str(game["episodes"])
    if game["crashed"] or game["not_run"]:
        episodes += f" ({game['crashed']} crashed, {game['not_run']} not run)"
    return [
        game["game"],
        game["max_score"] if game["max_score"] is not None else "-",
        episodes,
        percent(game["best_normalized"]),
        percent(game["mean_normalized"]),
        percent(game["best_progress"]),
        _figure(game["mean_steps"]),
        _figure(game["tokens_per_step"]),
        _figure(game["llm_calls_per_step"]),
        _figure(game["cost_per_step_usd"], 6),
    ]


def _mean_row(line: dict) -> list[object]:
    return [
        f"**mean of {_count(line['games'], 'game')}**",
        "",
        line["episodes"],
        f"**{percent(line['best_normalized'])}**",
        f"**{percent(line['mean_normalized'])}**",
        percent(line["best_progress"]),
        _figure(line["mean_steps"]),
        _figure(line["tokens_per_step"]),
        _figure(line["llm_calls_per_step"]),
        _figure(line["cost_per_step_usd"], 6),
    ]


def _study_figure(study: dict) -> str:
    about = "about " if study.get("approximate") else ""
    return f"{about}{study['score']} / {study['max_score']} ({percent(study['score'] / study['max_score'])})"


def _published(percent: float | None) -> str:
    """A published figure, given in percent."""
    return "-" if percent is None else f"{percent:.1f} %"


def _figure(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _listed(values) -> str:
    return ",".join(str(v) for v in values)
