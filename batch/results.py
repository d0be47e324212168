"""The results of a batch: one row per cell (and per cell and game), as JSON, CSV and Markdown."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from statistics import mean

from batch.curves import write_curves
from batch.jobs import NOT_RUN, finished_rows, points_share
from session.tables import markdown_table

LOOP_BREAK_SWITCH = ("loop_break", "enabled")
"""The key whose on/off pairs of cells give the turns and cost the loop break saved."""
COLUMNS = (
    "cell",
    "game",
    "episodes",
    "crashed",
    "mean_score",
    "best_score",
    "score_share",
    "progress",
    "mean_turns",
    "rewinds",
    "abandoned_turns",
    "terminations",
    "llm_calls",
    "tokens",
    "cost_usd",
)
BUDGET_COLUMNS = ("cut_by_budget", "not_run")
"""The columns of a batch with a budget (--max-cost-usd): its episodes the budget ended, its jobs it left unstarted."""


def summarise(cell: str, game: str, rows: list[dict]) -> dict:
    finished = finished_rows(rows)
    shares = [share for share in map(points_share, finished) if share is not None]
    # the walkthrough's checkpoints reached (session.checkpoints); a game without a walkthrough has no share
    progress = [r["progress"] for r in finished if r.get("progress") is not None]
    return {
        "cell": cell,
        "game": game,
        "episodes": len(finished),
        "crashed": sum(r["status"] == "crashed" for r in rows),
        "mean_score": round(mean(r["final_score"] for r in finished), 2) if finished else None,
        "best_score": max((r["best_score"] for r in finished), default=None),
        "score_share": round(mean(shares), 4) if shares else None,
        "progress": round(mean(progress), 4) if progress else None,
        "mean_turns": round(mean(r["turns"] for r in finished), 1) if finished else None,
        # all the episodes' (on_stuck = "rewind"); a manifest row from before rewinds counts none
        "rewinds": sum(r.get("rewinds", 0) for r in finished),
        "abandoned_turns": sum(r.get("abandoned_turns", 0) for r in finished),
        "terminations": dict(Counter(r["termination_reason"] for r in finished)),
        "llm_calls": sum(r["llm_calls"] for r in finished),
        "tokens": sum(r["tokens"] for r in finished),
        "cost_usd": round(sum(r["cost_usd"] for r in finished), 6),
    }


def budget_counts(rows: list[dict]) -> dict:
    return {
        "cut_by_budget": sum(bool(r.get("cut_by_budget")) for r in finished_rows(rows)),
        "not_run": sum(r["status"] == NOT_RUN for r in rows),
    }


def loop_break_pairs(grid: dict[str, dict], cells: dict[str, dict]) -> list[dict]:
    """Turns and cost saved, for each pair of cells that differ only in the loop break's master switch."""

    def strip(g: dict) -> dict:
        return {s: {k: v for k, v in keys.items() if (s, k) != LOOP_BREAK_SWITCH} for s, keys in g.items()}

    pairs = []
    for on_name, on in grid.items():
        for off_name, off in grid.items():
            switch_on = on.get(LOOP_BREAK_SWITCH[0], {}).get(LOOP_BREAK_SWITCH[1], True)
            switch_off = off.get(LOOP_BREAK_SWITCH[0], {}).get(LOOP_BREAK_SWITCH[1], True)
            if switch_on and not switch_off and strip(on) == strip(off) and cells[on_name]["episodes"]:
                a, b = cells[on_name], cells[off_name]
                if a["mean_turns"] is None or b["mean_turns"] is None:
                    continue
                pairs.append(
                    {
                        "on": on_name,
                        "off": off_name,
                        "turns_saved_per_episode": round(b["mean_turns"] - a["mean_turns"], 1),
                        "cost_saved_usd": round(b["cost_usd"] - a["cost_usd"], 6),
                    }
                )
    return pairs


def write_results(
    out: Path, rows: list[dict], grid: dict, wall_seconds: float, workers: int, budget: float | None = None
) -> dict:
    """results.json, .csv and .md of the rows; with the batch's `budget`, its columns and the jobs it cut or left
    unstarted."""
    by_cell: dict[str, list[dict]] = {}
    by_cell_game: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        by_cell.setdefault(row["cell"], []).append(row)
        by_cell_game.setdefault((row["cell"], row["game"]), []).append(row)
    extra = budget_counts if budget is not None else lambda group: {}
    cells = {cell: summarise(cell, "all", group) | extra(group) for cell, group in by_cell.items()}
    games = [summarise(cell, game, group) | extra(group) for (cell, game), group in sorted(by_cell_game.items())]
    episode_seconds = sum(r.get("wall_seconds", 0.0) for r in rows if r["status"] == "finished")
    result = {
        "cells": list(cells.values()),
        "games": games,
        "loop_break_saved": loop_break_pairs(grid, cells) if set(grid) == set(cells) else [],
        "episodes": sum(r["status"] != NOT_RUN for r in rows),
        "crashed": sum(r["status"] == "crashed" for r in rows),
        "wall_seconds": round(wall_seconds, 1),
        "episode_seconds": round(episode_seconds, 1),
        "workers": workers,
    }
    if budget is not None:
        result["budget"] = {
            "max_cost_usd": budget,
            "spent_usd": round(sum(r.get("cost_usd", 0.0) for r in rows), 6),
            "cut_by_budget": [r["id"] for r in rows if r.get("cut_by_budget")],
            "not_run": [r["id"] for r in rows if r["status"] == NOT_RUN],
        }
    columns = columns_of(result)
    (out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    with (out / "results.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for line in [*cells.values(), *games]:
            writer.writerow({**line, "terminations": json.dumps(line["terminations"])})
    (out / "results.md").write_text(markdown(result))
    write_curves(rows, out)  # curves.svg beside the table: what each cell's money and calls bought
    return result


def columns_of(result: dict) -> tuple[str, ...]:
    """The columns of a batch's tables: the budget's too when the batch had one."""
    return COLUMNS + BUDGET_COLUMNS if "budget" in result else COLUMNS


def markdown(result: dict) -> str:
    columns = columns_of(result)

    def table(lines: list[dict]) -> list[str]:
        return markdown_table(columns, [[_cell(line, c) for c in columns] for line in lines])

    lines = [
        "# Batch results",
        "",
        f"{result['episodes']} episodes ({result['crashed']} crashed), "
        f"{result['wall_seconds']} s wall with {result['workers']} workers "
        f"({result['episode_seconds']} s of episodes).",
        *_budget_line(result),
        "",
        "## By cell",
        "",
    ]
    lines += table(result["cells"])
    if result["loop_break_saved"]:
        lines += ["", "## Saved by the loop break", ""]
        saved = [
            (pair["on"], pair["off"], pair["turns_saved_per_episode"], pair["cost_saved_usd"])
            for pair in result["loop_break_saved"]
        ]
        lines += markdown_table(("on", "off", "turns saved per episode", "cost saved (USD)"), saved)
    lines += ["", "## By cell and game", ""] + table(result["games"])
    lines += _budget_jobs(result)
    return "\n".join(lines) + "\n"


def _budget_line(result: dict) -> list[str]:
    if "budget" not in result:
        return []
    budget = result["budget"]
    return [
        "",
        f"Budget ${budget['max_cost_usd']:.2f} (--max-cost-usd), ${budget['spent_usd']:.4f} spent: "
        f"{len(budget['cut_by_budget'])} episodes cut by it, {len(budget['not_run'])} jobs not run.",
    ]


def _budget_jobs(result: dict) -> list[str]:
    """The jobs the budget cut (their episodes ended `budget` after a turn), and those it left unstarted."""
    lines = []
    for key, title in (("cut_by_budget", "Cut by the budget"), ("not_run", "Not run: the budget was spent")):
        if result.get("budget", {}).get(key):
            lines += ["", f"## {title}", "", *(f"- {ident}" for ident in result["budget"][key])]
    return lines


def _cell(line: dict, column: str) -> object:
    """A cell of a summary line: the endings as `reason count, ...`, every other figure as it is."""
    if column == "terminations":
        return ", ".join(f"{k} {v}" for k, v in sorted(line["terminations"].items()))
    return line[column]
