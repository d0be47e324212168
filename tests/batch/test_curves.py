"""A batch's curves.svg (batch/curves.py) on crafted manifest rows: written beside the results, well-formed SVG, one
dot per finished episode in every panel, a line per cell to its mean, labelled axes and a legend; a game without a
walkthrough or without LLM calls says so instead of drawing zeros."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from batch.curves import CURVES_FILE, write_curves
from batch.runner import main as batch_main
from tests.helpers import story_file

SVG = "{http://www.w3.org/2000/svg}"


def row(ident: str, cell: str, game: str, cost: float, calls: int, best: int, progress: float | None, **more) -> dict:
    """A finished manifest row with the fields the curves read (batch.jobs.run_job writes more)."""
    fields = {"id": ident, "cell": cell, "game": game, "status": "finished", "turns": 100, "final_score": best}
    fields |= {"cost_usd": cost, "llm_calls": calls, "best_score": best, "max_score": 350, "progress": progress}
    return fields | more


ROWS = [
    row("mini/zork1/1/0", "mini", "zork1", 0.010, 200, 35, 0.10),
    row("mini/zork1/2/0", "mini", "zork1", 0.020, 220, 70, 0.30),
    row("big/zork1/1/0", "big", "zork1", 0.200, 180, 140, 0.50),
    row("big/zork1/2/0", "big", "zork1", 0.400, 190, 105, 0.40),
    {"id": "big/zork1/3/0", "cell": "big", "game": "zork1", "seed": 3, "episode": 0, "status": "crashed", "error": "x"},
    {"id": "big/zork1/4/0", "cell": "big", "game": "zork1", "seed": 4, "episode": 0, "status": "not_run"},
    row("mini/lgop/1/0", "mini", "lgop", 0.015, 150, 2, None, max_score=0),
    row("big/lgop/1/0", "big", "lgop", 0.300, 150, 0, None, max_score=0),
]
OFFLINE = [row(f"offline/zork1/{seed}/0", "offline", "zork1", 0.0, 0, 10 * seed, 0.05 * seed) for seed in (1, 2, 3)]


def panels(svg: ET.Element, game: str) -> dict[tuple[str, str], ET.Element]:
    """(axis, measure) -> the panel of `game`."""
    (row_of_game,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "game" and g.get("data-game") == game]
    return {
        (p.get("data-axis"), p.get("data-measure")): p for p in row_of_game.iter(f"{SVG}g") if p.get("class") == "panel"
    }


def of_class(element: ET.Element, tag: str, name: str) -> list[ET.Element]:
    return [e for e in element.iter(f"{SVG}{tag}") if e.get("class") == name]


def texts(element: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in element.iter(f"{SVG}text")]


def test_the_curves_are_written_beside_the_results_one_dot_per_finished_episode(tmp_path):
    path = write_curves(ROWS, tmp_path)
    assert path == tmp_path / CURVES_FILE and path.is_file()
    svg = ET.parse(path).getroot()  # well-formed: a browser and GitHub show it
    assert svg.tag == f"{SVG}svg"
    zork1 = panels(svg, "zork1")
    assert set(zork1) == {(axis, measure) for axis in ("usd", "calls") for measure in ("points", "progress")}
    for (axis, _), panel in zork1.items():
        assert len(of_class(panel, "circle", "episode")) == 4  # the crashed and the unstarted jobs have no episode
        assert len(of_class(panel, "line", "mean-line")) == len(of_class(panel, "circle", "mean")) == 2
        label = {"usd": "dollars spent per episode", "calls": "LLM calls per episode"}[axis]
        assert ["".join(t.itertext()) for t in of_class(panel, "text", "x-label")] == [label]
        assert ["".join(t.itertext()) for t in of_class(panel, "text", "y-label")] == ["share"]
    legend = [g.get("data-cell") for g in svg.iter(f"{SVG}g") if g.get("class") == "legend-cell"]
    assert legend == ["mini", "big"]


def test_a_cells_mean_is_over_its_episodes(tmp_path):
    svg = ET.parse(write_curves(ROWS, tmp_path)).getroot()
    progress_by_dollars = panels(svg, "zork1")[("usd", "progress")]
    titles = {
        cell.get("data-cell"): "".join(of_class(cell, "circle", "mean")[0].itertext())
        for cell in of_class(progress_by_dollars, "g", "cell")
    }
    assert titles == {
        "mini": "mini, mean of 2 episodes: $0.0150, 20.0 %",
        "big": "big, mean of 2 episodes: $0.300, 45.0 %",
    }


def test_a_game_without_walkthrough_or_maximum_score_says_so_and_draws_no_zeros(tmp_path):
    svg = ET.parse(write_curves(ROWS, tmp_path)).getroot()
    lgop = panels(svg, "lgop")
    for (_, measure), panel in lgop.items():
        assert of_class(panel, "circle", "episode") == []
        missing = {"points": "the game gives no maximum score", "progress": "no walkthrough checkpoints"}[measure]
        assert missing in texts(panel)


def test_episodes_without_llm_calls_are_drawn_against_turns_and_say_so(tmp_path):
    svg = ET.parse(write_curves(OFFLINE, tmp_path)).getroot()
    zork1 = panels(svg, "zork1")
    assert set(zork1) == {("turns", "points"), ("turns", "progress")}
    assert all(len(of_class(panel, "circle", "episode")) == 3 for panel in zork1.values())
    notes = [t for g in svg.iter(f"{SVG}g") if g.get("class") == "game" for t in of_class(g, "text", "note")]
    assert ["".join(n.itertext()) for n in notes] == [
        "no LLM calls (an offline agent and critic): nothing spent, drawn against turns"
    ]


@pytest.mark.parametrize("rows", [[], [ROWS[4]]], ids=["no rows", "only a crash"])
def test_a_batch_without_a_finished_episode_gives_a_picture_that_says_so(tmp_path, rows):
    svg = ET.parse(write_curves(rows, tmp_path)).getroot()
    assert "no finished episode" in texts(svg)


def test_names_are_escaped(tmp_path):
    rows = [row("a<b>/g/1/0", "a<b>&c", "g&<h>", 0.01, 10, 5, 0.5)]
    svg = ET.parse(write_curves(rows, tmp_path)).getroot()
    assert [g.get("data-cell") for g in svg.iter(f"{SVG}g") if g.get("class") == "legend-cell"] == ["a<b>&c"]
    assert set(panels(svg, "g&<h>")) == {
        ("usd", "points"),
        ("usd", "progress"),
        ("calls", "points"),
        ("calls", "progress"),
    }


@pytest.mark.slow  # a real batch: two worker processes
def test_a_batch_writes_its_curves_beside_its_table(tmp_path):
    """`main.py batch` itself draws the picture: one dot per episode it played, in every panel of the game."""
    out = tmp_path / "batch"
    command = ["--games", str(story_file("zork1.z5")), "--seeds", "1,2", "--workers", "2", "--max-turns", "5"]
    assert batch_main([*command, "--agent", "offline", "--critic", "offline", "--out", str(out), "--quiet"]) == 0
    assert (out / "results.md").is_file()
    svg = ET.parse(out / CURVES_FILE).getroot()
    for panel in panels(svg, "zork1").values():
        assert len(of_class(panel, "circle", "episode")) == 2
