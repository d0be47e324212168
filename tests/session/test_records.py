"""session.records reads back what an episode leaves (EVENTS_FILE, SUMMARY_FILE): the records as the recorder
wrote them, and one clear error for a line that is not a record."""

from __future__ import annotations

import json

import pytest

import main
from orchestration.recorder import EpisodeRecorder
from session.records import (
    EVENTS_FILE,
    SUMMARY_FILE,
    NotATurnRecord,
    read_record_dicts,
    read_records,
    read_summary,
    salvage_record_dicts,
)
from tests.factories import turn_record


def recorded(folder, count: int = 3) -> list:
    recorder = EpisodeRecorder(folder, quiet=True)
    records = [
        turn_record(turn=n, command=f"look {n}", response="Here — “quoted”\u2028on two lines")
        for n in range(1, count + 1)
    ]
    for record in records:
        recorder.write(record)
    recorder.close({"termination_reason": "max_turns"})
    return records


def test_the_records_read_back_are_the_records_written(tmp_path):
    written = recorded(tmp_path)
    assert [r.to_json() for r in read_records(tmp_path)] == [json.loads(json.dumps(r.to_json())) for r in written]
    assert [r["turn"] for r in read_record_dicts(tmp_path)] == [1, 2, 3]
    assert read_summary(tmp_path)["termination_reason"] == "max_turns"
    assert (tmp_path / EVENTS_FILE).is_file() and (tmp_path / SUMMARY_FILE).is_file()


@pytest.mark.parametrize(
    "line", ['{"turn": 2, "command": "look"', "[1, 2]", '{"command": "look"}', '{"turn": 2, "x": 1}']
)
def test_a_line_that_is_no_record_is_named_by_its_number(tmp_path, line):
    recorded(tmp_path, count=1)
    with (tmp_path / EVENTS_FILE).open("a") as events:
        events.write(line + "\n")
    with pytest.raises(NotATurnRecord, match=rf"^{EVENTS_FILE} line 2 is not a turn record \(.+\)$"):
        read_records(tmp_path)


def test_resume_names_the_line_that_is_no_record(tmp_path):
    folder = tmp_path / "episode"
    recorded(folder, count=2)
    (folder / SUMMARY_FILE).unlink()  # an interrupted episode
    (folder / "episode.json").write_text(json.dumps({"config": {}, "story_file": "zork1.z5"}))
    with (folder / EVENTS_FILE).open("a") as events:
        events.write("not json\n")
    args = main.parse_args(["--resume", str(folder)])
    with pytest.raises(main.ConfigError, match=rf"--resume {folder}: {EVENTS_FILE} line 3 is not a turn record \("):
        main.load_resume(args)


def test_a_reader_that_shows_what_there_is_says_what_it_skipped(tmp_path):
    skipped: list[str] = []
    assert list(salvage_record_dicts(tmp_path, skipped)) == [] and skipped == [
        f"no {EVENTS_FILE}: no turn was recorded"
    ]
    recorded(tmp_path, count=2)
    with (tmp_path / EVENTS_FILE).open("a") as events:
        events.write('{"turn": 3, "comm')
    skipped = []
    assert [r["turn"] for r in salvage_record_dicts(tmp_path, skipped)] == [1, 2]
    assert skipped == [f"{EVENTS_FILE} line 3 is partly written (the episode is running or was killed): skipped"]


def test_no_summary_before_the_episode_ends(tmp_path):
    with pytest.raises(OSError):
        read_summary(tmp_path)
