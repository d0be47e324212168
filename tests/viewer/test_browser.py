"""The episode viewer, in a real browser (headless Debian Chromium, driven by Playwright).

`.ci/run` installs Chromium when it is missing; without it these tests fail with a message saying so."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.looper_agent import LooperAgent
from playthroughs.scenarios import build_scenario
from session.records import read_record_dicts, read_summary
from tests.helpers import REWIND, make_config, replay_episode, rewind_script, run_episode
from viewer.report import REPORT_FILE, write_report
from viewer.server import HOST, Viewer, serve


@pytest.fixture(scope="module")
def stuck_episode(rom_path, tmp_path_factory) -> Path:
    """A recorded episode the loop break ended: the dam_ab looper."""
    built = build_scenario("dam_ab", rom_path)
    config = make_config(tmp_path_factory.mktemp("stuck"), gameplay={"max_turns_per_episode": len(built.commands)})
    result = run_episode(rom_path, config, LooperAgent(built.prefix, built.loop), after_episode=(write_report,))
    assert result.summary["termination_reason"] == "stuck_no_progress"
    return result.folder


@pytest.fixture(scope="module")
def rewound_episode(rom_path, walkthrough, tmp_path_factory) -> Path:
    """zork1 played as `main.py --agent replay` plays it: the walkthrough to the Chasm, then north and south until
    the loop break stops it; it rewinds twice (to the last progress before each loop), then ends."""
    folder = tmp_path_factory.mktemp("rewound")
    played = replay_episode(rom_path, folder, rewind_script(walkthrough), REWIND, max_turns=150)
    assert played.summary["rewinds"] == 2 and played.summary["abandoned_turns"] > 0
    return played.folder


def rewinds_of(folder: Path) -> list[dict]:
    records = read_record_dicts(folder)
    return [e for r in records for e in r["events"] if e["event_type"] == "rewind"]


def open_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1300, "height": 1400})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    return page, errors


@pytest.mark.slow  # a browser
def test_the_report_of_a_stuck_episode_renders_and_a_point_opens_its_turn(browser, stuck_episode):
    report = stuck_episode / REPORT_FILE
    assert report.is_file()
    assert "http://" not in report.read_text().split("<script")[0] + report.read_text().split("</script>")[-1]
    page, errors = open_page(browser, report.as_uri())
    summary = read_summary(stuck_episode)
    assert f"stuck_no_progress at turn {summary['turns']}" in page.inner_text("header")
    assert page.locator("#chartsvg circle.point").count() == summary["turns"]
    assert page.locator("#turnrows tr.turn").count() == summary["turns"]
    assert page.locator("#mapsvg g.room").count() == summary["rooms_visited"]
    assert page.locator("#mapsvg rect[fill='#f5b041']").count() >= 1  # the loop's rooms
    page.click("#chartsvg circle.point[data-turn='40']")
    assert page.inner_text("#turn-detail").startswith("Turn 40")
    assert "selected" in page.get_attribute("#turn-40", "class")
    assert "stuck_termination" in page.inner_text("#events")
    assert errors == []
    page.close()


def write_lines(path: Path, records: list[dict]) -> None:
    with path.open("a", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


@pytest.fixture
def server(tmp_path):
    httpd = serve([tmp_path], 0)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://{HOST}:{httpd.server_address[1]}", tmp_path
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow  # a browser
def test_the_live_page_follows_a_running_episode(browser, stuck_episode, server):
    base, root = server
    records = read_record_dicts(stuck_episode)
    running = root / "running-episode"
    running.mkdir()
    shutil.copy(stuck_episode / "episode.json", running / "episode.json")
    write_lines(running / "events.jsonl", records[:5])
    page, errors = open_page(browser, f"{base}/")
    assert "running-episode" in page.inner_text("#list")
    page.click("text=running-episode")
    assert "running (following live)" in page.inner_text("header")
    assert page.locator("#turnrows tr.turn").count() == 5
    write_lines(running / "events.jsonl", records[5:7])
    page.wait_for_selector("#turn-7", timeout=3000)
    shutil.copy(stuck_episode / "summary.json", running / "summary.json")  # the episode ends
    page.wait_for_function("document.querySelector('header').innerText.includes('stuck_no_progress')", timeout=3000)
    assert errors == []
    page.close()


@pytest.mark.slow  # a browser
def test_a_partly_written_episode_shows_what_is_there(browser, stuck_episode, server):
    base, root = server
    lines = (stuck_episode / "events.jsonl").read_text().splitlines()
    killed = root / "killed-episode"
    killed.mkdir()
    (killed / "events.jsonl").write_text("\n".join(lines[:10]) + "\n" + lines[10][: len(lines[10]) // 2])
    page, errors = open_page(browser, f"{base}/episode/killed-episode")
    notes = page.inner_text("main")
    assert "no summary.json yet" in notes and "line 11 is partly written" in notes
    assert page.locator("#turnrows tr.turn").count() == 10
    assert errors == []
    page.close()


def test_the_server_serves_only_episode_folders(tmp_path):
    (tmp_path / "episodes" / "one").mkdir(parents=True)
    (tmp_path / "episodes" / "one" / "events.jsonl").write_text("")
    (tmp_path / "secret.txt").write_text("no")
    viewer = Viewer([tmp_path / "episodes"])
    assert viewer.answer("/")[0] == 200 and viewer.answer("/episode/one")[0] == 200
    for target in (
        "/episode/..",
        "/episode/../secret.txt",
        "/episode/%2e%2e%2fsecret.txt",
        "/secret.txt",
        "/api/episode/two",
        "/episode/one/../../secret.txt",
        "/etc/passwd",
    ):
        assert viewer.answer(target)[0] == 404, target
    assert HOST == "127.0.0.1"


def test_view_of_a_missing_folder_is_one_error_line(tmp_path, capsys):
    from main import main

    assert main(["view", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().startswith("error: not a folder:")


def test_turns_are_read_line_by_line_and_bad_lines_are_named(tmp_path):
    """A broken line in the middle is not JSON; the last one, cut short, is partly written; both are skipped."""
    from viewer.episodes import read_turns

    lines = [
        json.dumps({"turn": 1, "command": "north", "response": "Kitchen\r\nA table."}),
        '{"turn": 2, "comm',
        json.dumps(["not", "a", "record"]),
        "",
        json.dumps({"turn": 3, "command": "take lamp", "events": [{"event_type": "progress_detected"}]}),
        json.dumps({"turn": 4, "command": "wait"}),
        '{"turn": 5, "command": "wa',
    ]
    (tmp_path / "events.jsonl").write_text("\n".join(lines), encoding="utf-8")
    turns, notes = read_turns(tmp_path)
    assert [t["turn"] for t in turns] == [1, 3, 4]
    assert turns[0]["response"] == "Kitchen\r\nA table." and [t["stuck"] for t in turns] == [1, 0, 1]
    assert notes == [
        "events.jsonl line 2 is not a JSON record: skipped",
        "events.jsonl line 3 is not a turn record: skipped",
        "events.jsonl line 7 is partly written (the episode is running or was killed): skipped",
    ]
    assert [t["turn"] for t in read_turns(tmp_path, since=3)[0]] == [4]


def test_the_report_is_written_in_pieces_and_no_text_closes_its_script(tmp_path):
    """Text from the game or an LLM that reads like the end of the script or a comment stays inside the data."""
    from viewer.report import render, write_report

    hostile = "</script><script>alert(1)</script> <!-- x"
    (tmp_path / "events.jsonl").write_text(json.dumps({"turn": 1, "command": "say", "response": hostile}) + "\n")
    page = write_report(tmp_path).read_text(encoding="utf-8")
    assert "</script><script>alert" not in page and "<!-- x" not in page
    data = page.split('<script id="zork-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["episode"]["turns"][0]["response"] == hostile
    served = render({"episode": {"x": hostile}, "api": None})
    assert (
        "<!--" not in served
        and json.loads(served.split('json">', 1)[1].split("</script>", 1)[0])["episode"]["x"] == hostile
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(value=JSON_VALUES, depth=st.integers(0, 4))
def test_the_report_data_in_pieces_is_the_json_of_the_whole(value, depth):
    from viewer.report import json_pieces

    assert "".join(json_pieces(value, depth)) == json.dumps(value, ensure_ascii=False)


def test_the_streamed_episode_of_a_report_is_the_one_the_server_loads(stuck_episode, tmp_path):
    """write_report reads the turns as it writes them; what it writes is what load_episode gives whole, also for
    an episode without its map and summary (the map then comes from the turns' rooms)."""
    from viewer.episodes import load_episode

    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(stuck_episode / "events.jsonl", bare / "events.jsonl")
    for folder in (stuck_episode, bare):
        whole, streamed = load_episode(folder), load_episode(folder, streamed=True)
        streamed["turns"] = list(streamed["turns"])
        assert streamed == whole and whole["turns"]
    assert load_episode(stuck_episode)["loop_rooms"] and load_episode(bare)["map"]["rooms"]


@pytest.mark.slow  # a browser
def test_the_report_of_a_rewound_episode_shows_its_branches(browser, rewound_episode):
    """The abandoned turns greyed on the chart and marked in the turn list with their branch, every
    rewind drawn back to the turn it went to, with its why, and listed as a row of its own."""
    summary = read_summary(rewound_episode)
    rewinds = rewinds_of(rewound_episode)
    page, errors = open_page(browser, (rewound_episode / REPORT_FILE).as_uri())
    assert f"rewinds {summary['rewinds']} ({summary['abandoned_turns']} turns abandoned)" in page.inner_text("header")
    assert page.locator("#turnrows tr.turn").count() == summary["turns"]
    assert page.locator("#turnrows tr.turn.abandoned").count() == summary["abandoned_turns"]
    assert page.locator("#chartsvg circle.point.abandoned").count() == summary["abandoned_turns"]
    assert page.locator("#chartsvg rect.abandoned-band").count() == len(rewinds) == summary["rewinds"]
    for rewind in rewinds:
        branch = rewind["branch"]
        gone = page.locator(f"#turnrows tr.turn.abandoned[data-branch='{branch}']")
        assert gone.count() == rewind["abandoned"]
        assert f"abandoned · branch {branch}" in gone.first.inner_text()
        assert int(gone.first.get_attribute("data-turn")) > rewind["to_turn"]
        assert int(gone.last.get_attribute("data-turn")) == rewind["turn"]
        row = page.locator(f"#rewind-{rewind['rewinds']}")
        assert f"back to turn {rewind['to_turn']}" in row.inner_text() and rewind["why"] in row.inner_text()
        arrow = page.locator(f"#chartsvg path.rewind-arrow[data-rewind='{rewind['rewinds']}']")
        assert rewind["why"] in arrow.text_content()
        assert "abandoned" not in (page.get_attribute(f"#turn-{rewind['to_turn']}", "class") or "")
        row.click()
        assert page.inner_text("#turn-detail").startswith(f"Turn {rewind['to_turn']}")
    first = rewinds[0]
    page.click(f"#chartsvg circle.point[data-turn='{first['turn']}']")
    assert f"abandoned: branch {first['branch']}" in page.inner_text("#turn-detail")
    assert "rewind: to_turn" in page.inner_text("#events")
    assert page.locator("#turnrows tr.turn:not(.abandoned)").count() == summary["turns"] - summary["abandoned_turns"]
    assert errors == []
    page.close()


def test_turns_since_progress_are_the_loop_breaks_own_count_which_a_rewind_restarts(rewound_episode):
    """The chart's turns since progress are what the loop break counted (its progress check every turn): the clock
    starts again after a rewind, and a run of progress turns is 0 throughout."""
    from viewer.episodes import read_turns

    records = read_record_dicts(rewound_episode)
    counted = {r["turn"]: e["turns_stuck"] for r in records for e in r["events"] if e["event_type"] == "progress_check"}
    turns, notes = read_turns(rewound_episode)
    assert notes == [] and len(counted) == len(turns)
    assert {t["turn"]: t["stuck"] for t in turns} == counted
    for rewind in rewinds_of(rewound_episode):
        after = next(t for t in turns if t["turn"] == rewind["turn"] + 1)
        assert after["stuck"] <= 1 and after["branch"] == rewind["branch"] + 1  # 0: that turn progressed
    assert [t["rewind"]["to_turn"] for t in turns if t["rewind"]] == [r["to_turn"] for r in rewinds_of(rewound_episode)]


def test_an_episode_recorded_before_branches_loads_as_one_branch(stuck_episode, tmp_path):
    """Records written before rewinds (no `branch`) read as branch 0, and the page is the same."""
    from viewer.episodes import load_episode

    old = tmp_path / "old"
    old.mkdir()
    for name in ("summary.json", "episode.json", "map.json"):
        shutil.copy(stuck_episode / name, old / name)
    summary = read_summary(stuck_episode)
    for key in ("rewinds", "abandoned_turns"):
        del summary[key]
    (old / "summary.json").write_text(json.dumps(summary))
    records = read_record_dicts(stuck_episode)
    assert all(r.pop("branch") == 0 for r in records)
    write_lines(old / "events.jsonl", records)
    loaded, current = load_episode(old), load_episode(stuck_episode)
    assert loaded["turns"] == current["turns"] and not any(t["rewind"] for t in loaded["turns"])


@pytest.mark.slow  # a browser
def test_the_live_page_marks_a_branch_abandoned_when_its_rewind_arrives(browser, rewound_episode, server):
    base, root = server
    records = read_record_dicts(rewound_episode)
    first = rewinds_of(rewound_episode)[0]
    running = root / "rewinding"
    running.mkdir()
    shutil.copy(rewound_episode / "episode.json", running / "episode.json")
    write_lines(running / "events.jsonl", records[: first["turn"] - 1])
    page, errors = open_page(browser, f"{base}/episode/rewinding")
    assert page.locator("#turnrows tr.turn").count() == first["turn"] - 1
    assert page.locator("#turnrows tr.abandoned").count() == 0
    write_lines(running / "events.jsonl", records[first["turn"] - 1 : first["turn"] + 2])
    page.wait_for_selector(f"#turn-{first['turn'] + 2}", timeout=3000)
    assert page.locator("#turnrows tr.turn.abandoned").count() == first["abandoned"]
    assert page.locator("#turnrows tr.rewind").count() == 1 and page.locator("#chartsvg path.rewind-arrow").count() == 1
    assert page.locator("#turnrows tr.turn").count() == first["turn"] + 2
    assert "branch 1" in page.inner_text(f"#turn-{first['turn'] + 1}")
    assert errors == []
    page.close()
