"""The episode header shows walkthrough progress beside the score: the share of checkpoints reached and how many, and
for a game without a walkthrough that there is none (never 0 %). In a real browser, on the report.html of zork1's
walkthrough episode."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from session.records import SUMMARY_FILE, read_summary
from viewer.report import REPORT_FILE, write_report


@pytest.fixture(scope="module")
def page_of(browser):
    """Open a report.html in headless Chromium; its header's text."""

    def header(report: Path) -> str:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(report.as_uri())
        text = page.inner_text("header")
        page.close()
        assert not errors
        return text

    return header


@pytest.mark.slow  # a browser
def test_the_header_shows_the_walkthroughs_progress(walkthrough_episode, page_of):
    total = walkthrough_episode.summary["checkpoints"]["total"]
    header = page_of(walkthrough_episode.folder / REPORT_FILE)
    assert f"progress 100 % ({total} of {total} checkpoints)" in header


@pytest.mark.slow  # a browser
def test_the_header_of_a_game_without_a_walkthrough_says_none(walkthrough_episode, page_of, tmp_path):
    folder = tmp_path / "episode"
    shutil.copytree(walkthrough_episode.folder, folder)
    summary = read_summary(folder)
    summary |= {"progress": None, "checkpoints": {"reached": 0, "total": 0}}
    (folder / SUMMARY_FILE).write_text(json.dumps(summary))
    write_report(folder)
    header = page_of(folder / REPORT_FILE)
    assert "progress none (no walkthrough checkpoints)" in header and "0 %" not in header
