"""The episode page's cost curves: points and walkthrough progress against the dollars and the LLM calls spent so far,
turn by turn, in a real browser (headless Chromium) on report.html. An episode played on the LLM path (the scripted
server on 127.0.0.1 plays the model, priced as gpt-4o-mini) gets a chart against $ and one against calls, one point a
turn on each curve, its progress counted as summary.json counts it at the end; an offline episode spent nothing and is
drawn against turns, saying so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from batch.curves import write_curves
from playthroughs.llm_path import play
from session.records import SUMMARY_FILE, read_record_dicts, read_summary
from tests.helpers import PYPROJECT
from tests.local_http import PROXY_VARIABLES
from viewer.report import REPORT_FILE, write_report

LLM_TURNS = 60
"""Walkthrough steps played on the LLM path: a few points and a part of the checkpoints, not all."""


@pytest.fixture(scope="module")
def llm_episode(rom_path, walkthrough, tmp_path_factory) -> Path:
    """The start of zork1's walkthrough played through the LLM path against the scripted server; its folder."""
    episodes = tmp_path_factory.mktemp("llm")
    with pytest.MonkeyPatch.context() as patch:  # 127.0.0.1 reached directly, whatever proxy the machine has
        for name in PROXY_VARIABLES:
            patch.delenv(name, raising=False)
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        summary, _, _ = play(rom_path, list(walkthrough[:LLM_TURNS]), PYPROJECT, episodes)
    (folder,) = [path.parent for path in episodes.rglob(SUMMARY_FILE)]
    assert summary["cost_usd"]["total"] > 0 and 0 < summary["progress"] < 1
    return folder


def expected_progress(folder: Path) -> list[float]:
    """The share of checkpoints reached after each turn, counted from the records and summary.json's marks as
    session.checkpoints counts them at the end: a room once been in, a score the best score came to."""
    marks = read_summary(folder)["checkpoint_marks"]
    total = len(marks["rooms"]) + len(marks["scores"])
    visited: set[int] = set()
    best = 0
    shares = []
    for record in read_record_dicts(folder):
        visited |= {record["room_id_before"], record["room_id_after"]} - {None}
        best = max(best, record["score_after"])
        reached = len(visited & set(marks["rooms"])) + sum(score <= best for score in marks["scores"])
        shares.append(reached / total)
    return shares


def open_report(browser, folder: Path):
    page = browser.new_page(viewport={"width": 1300, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto((folder / REPORT_FILE).as_uri())
    return page, errors


def test_the_summary_names_what_marks_each_checkpoint(walkthrough_episode):
    summary = walkthrough_episode.summary
    marks = summary["checkpoint_marks"]
    assert len(marks["rooms"]) + len(marks["scores"]) == summary["checkpoints"]["total"] > 0
    assert list(marks["scores"]) == sorted(marks["scores"]) and marks["scores"][-1] == summary["max_score"]


@pytest.mark.slow  # a browser
def test_an_llm_episode_is_drawn_against_dollars_and_calls_one_point_a_turn(browser, llm_episode):
    summary = read_summary(llm_episode)
    records = read_record_dicts(llm_episode)
    page, errors = open_report(browser, llm_episode)
    assert page.locator("#cost h2").inner_text() == "Points and progress against $ and against LLM calls"
    charts = page.locator("#costcharts svg.costchart")
    assert [charts.nth(i).get_attribute("data-axis") for i in range(charts.count())] == ["usd", "calls"]
    for axis, label, last_x in (
        ("usd", "dollars spent (so far)", summary["cost_usd"]["total"]),
        ("calls", "LLM calls (so far)", sum(summary["llm_calls"].values())),
    ):
        chart = page.locator(f'#costcharts svg[data-axis="{axis}"]')
        assert chart.locator("text.x-label").text_content() == label
        assert chart.locator("text.y-label").text_content() == "share"
        for series in ("points", "progress"):
            assert chart.locator(f"circle.cost-point.{series}").count() == len(records) == summary["turns"]
        progress = chart.locator("circle.cost-point.progress")
        shares = [float(s) for s in progress.evaluate_all("(cs) => cs.map((c) => c.dataset.share)")]
        assert shares == expected_progress(llm_episode)
        assert shares[-1] == pytest.approx(summary["progress"], abs=5e-5)  # the summary's is rounded
        points = chart.locator("circle.cost-point.points").last
        assert float(points.get_attribute("data-share")) == pytest.approx(summary["best_score"] / summary["max_score"])
        assert float(progress.last.get_attribute("data-x")) == pytest.approx(last_x, rel=1e-3)
    assert page.locator("#costnote").inner_text() == ""
    page.locator('#costcharts svg[data-axis="calls"] circle.cost-point.progress').nth(9).click()
    assert page.locator("#turn-detail").get_attribute("data-turn") == str(records[9]["turn"])
    assert not errors
    page.close()


@pytest.mark.slow  # a browser
def test_an_offline_episode_says_nothing_was_spent_and_is_drawn_against_turns(browser, walkthrough_episode):
    summary = walkthrough_episode.summary
    assert not any(summary["llm_calls"].values())
    page, errors = open_report(browser, walkthrough_episode.folder)
    assert "no LLM calls in this episode" in page.locator("#costnote").inner_text()
    charts = page.locator("#costcharts svg.costchart")
    assert charts.count() == 1 and charts.first.get_attribute("data-axis") == "turns"
    assert charts.first.locator("text.x-label").text_content() == "turns"
    progress = charts.first.locator("circle.cost-point.progress")
    assert progress.count() == charts.first.locator("circle.cost-point.points").count() == summary["turns"]
    assert float(progress.last.get_attribute("data-share")) == summary["progress"] == 1.0
    assert not errors
    page.close()


@pytest.mark.slow  # a browser
def test_a_summary_without_checkpoint_marks_draws_points_and_says_why_progress_is_not_drawn(
    browser, walkthrough_episode, tmp_path
):
    folder = tmp_path / "episode"
    shutil.copytree(walkthrough_episode.folder, folder)
    summary = read_summary(folder)
    del summary["checkpoint_marks"]
    (folder / SUMMARY_FILE).write_text(json.dumps(summary))
    write_report(folder)
    page, errors = open_report(browser, folder)
    assert "summary.json gives no checkpoint_marks: progress is not drawn" in page.locator("#costnote").inner_text()
    assert page.locator("#costcharts circle.cost-point.progress").count() == 0
    assert page.locator("#costcharts circle.cost-point.points").count() == summary["turns"]
    assert not errors
    page.close()


@pytest.mark.slow  # a browser
def test_a_batchs_curves_show_in_the_browser(browser, tmp_path):
    """curves.svg, as a batch writes it beside results.md, opens in Chromium with every episode's dot drawn."""
    rows = [
        {"id": f"{cell}/zork1/{seed}/0", "cell": cell, "game": "zork1", "status": "finished", "turns": 100}
        | {"final_score": 10 * seed, "best_score": 10 * seed, "max_score": 350, "progress": 0.1 * seed}
        | {"cost_usd": 0.01 * seed * (2 if cell == "big" else 1), "llm_calls": 100 * seed}
        for cell in ("mini", "big")
        for seed in (1, 2, 3)
    ]
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(write_curves(rows, tmp_path).as_uri())
    dots = page.locator("circle.episode")
    assert dots.count() == 4 * len(rows)  # four panels: points and progress, against $ and against calls
    assert all((box := dots.nth(i).bounding_box()) and box["width"] > 0 for i in range(dots.count()))
    page.close()
    assert not errors
