"""Rewind instead of end (`[tool.zorkgpt.loop_break] on_stuck = "rewind"`): a loop's stop verdict puts the game back
exactly as it was right after the last progress, and play goes on; the records keep the abandoned branch."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from managers.loop_break.rewind import REWOUND, RewindBans
from orchestration.wiring import RunOptions, build_orchestrator
from session.records import EVENTS_FILE, Ending, read_summary
from tests.factories import turn_record
from tests.helpers import (
    GATE_GUIDANCE,
    REWIND,
    REWIND_LOOP,
    comparable_records,
    make_config,
    read_episode,
    replay_episode,
    rewind_script,
    start_main,
    story_file,
)


def rewinds(records: list[dict]) -> list[dict]:
    return [dict(e, at=r["turn"]) for r in records for e in r["events"] if e["event_type"] == "rewind"]


def test_a_stuck_loop_is_rewound_to_its_last_progress_exactly(rom_path, tmp_path, walkthrough):
    result = replay_episode(rom_path, tmp_path, rewind_script(walkthrough), REWIND)
    by_turn = {r["turn"]: r for r in result.records}
    done = rewinds(result.records)
    assert [e["rewinds"] for e in done] == [1, 2]
    for event in done:
        progress, after = by_turn[event["to_turn"]], by_turn[event["at"] + 1]
        # the next turn starts from the game exactly as the progress turn left it: room, score, things held, and
        # the hash of the whole world (object tree and globals)
        for field in ("room_id", "score", "inventory", "world_hash"):
            assert after[f"{field}_before"] == progress[f"{field}_after"], field
        assert event["restored"] == "state"
        assert after["branch"] == event["branch"] + 1
        abandoned = [r for r in result.records if r["branch"] == event["branch"] and r["turn"] > event["to_turn"]]
        assert len(abandoned) == event["abandoned"]
    summary = result.summary
    assert summary["rewinds"] == 2 and summary["abandoned_turns"] == sum(e["abandoned"] for e in done)
    # after max_rewinds, the next verdict ends the episode as `end` would
    assert summary["termination_reason"] == Ending.STUCK
    assert summary["turns"] == len(result.records) >= done[-1]["at"] + 12


def test_a_point_is_gone_back_to_once(rom_path, tmp_path, walkthrough):
    """A loop again with no progress since the rewind ends the episode: going back to the same point again was
    measured to help rarely."""
    result = replay_episode(rom_path, tmp_path, walkthrough[:30] + REWIND_LOOP * 3 + walkthrough[30:60], REWIND)
    (event,) = rewinds(result.records)
    assert result.summary["termination_reason"] == Ending.STUCK and result.summary["rewinds"] == 1
    assert result.summary["turns"] == event["at"] + 12


def test_after_a_rewind_the_loop_is_refused_where_it_was_made_and_the_agent_is_told(rom_path, tmp_path, walkthrough):
    result = replay_episode(
        rom_path, tmp_path, walkthrough[:30] + REWIND_LOOP * 2 + walkthrough[30:60], {**REWIND, "max_rewinds": 1}
    )
    (event,) = rewinds(result.records)
    after = [r for r in result.records if r["turn"] > event["at"]]
    # a forced script still runs its commands; the verdict it would get is recorded
    assert after[0]["command"] == "north" and after[0]["would_reject"]
    assert "Rewind ban" in after[0]["critic_reason"]
    orchestrator = result.orchestrator
    assert orchestrator.loop_break.bans.until == event["at"] + 1 + orchestrator.config.loop_break.rewind_ban_turns


def test_end_is_the_default_and_never_rewinds(rom_path, tmp_path, walkthrough):
    loop_break = {k: v for k, v in REWIND.items() if k not in ("on_stuck", "max_rewinds")}
    result = replay_episode(rom_path, tmp_path, rewind_script(walkthrough), loop_break)
    assert result.summary["rewinds"] == 0 and not rewinds(result.records)
    assert result.summary["termination_reason"] == Ending.STUCK
    assert {r["branch"] for r in result.records} == {0}


def test_a_healthy_walkthrough_never_rewinds(rom_path, tmp_path, walkthrough):
    result = replay_episode(rom_path, tmp_path, walkthrough, {"on_stuck": "rewind"}, max_turns=len(walkthrough))
    assert result.summary["rewinds"] == 0 and result.summary["best_score"] == 350


def offline_play(tmp_path, story: str, max_turns: int):
    """The offline agent and critic as `main.py` builds them, with `on_stuck = "rewind"` and the pyproject's rules."""
    config = make_config(
        tmp_path,
        loop_break={"on_stuck": "rewind"},
        gameplay={"agent": "offline", "critic": "offline", "seed": 1, "max_turns_per_episode": max_turns},
        knowledge={"enabled": False},
    )
    orchestrator = build_orchestrator(config, RunOptions(rom=str(story_file(story)), quiet=True))
    return read_episode(orchestrator.play_episode(), orchestrator)


def test_after_a_rewind_the_offline_agent_tries_something_else_and_gets_on(tmp_path):
    """wishbringer: the offline agent walks round the first rooms while the game waits for a yes or a no; the loop is
    rewound, and its second thoughts answer the question at once, which is progress (it was never answered)."""
    result = offline_play(tmp_path, "wishbringer.z3", 80)
    event = rewinds(result.records)[0]
    abandoned = [r for r in result.records if r["branch"] == 0 and r["turn"] > event["to_turn"]]
    after = result.records[event["at"]]  # the turn after the rewind
    assert after["branch"] == 1 and after["command"] == "yes"
    assert "yes" not in {r["command"] for r in abandoned}
    assert any(e["event_type"] == "progress_check" and e.get("signals") for e in after["events"])


# -- the bans, without Jericho ------------------------------------------------------------------------------
def test_bans_hold_what_the_abandoned_turns_did_where_they_did_it_and_run_out():
    abandoned = [
        turn_record(11, command="north", situation="b"),
        turn_record(12, command="south", situation="a"),
        turn_record(13, command="n", situation="b"),
        turn_record(14, command="examine door", situation="b"),
    ]
    bans = RewindBans()
    bans.start(14, 5, "a", abandoned, f"{REWOUND}: ...")
    assert bans.banned("a", 15) == {"north"}  # turns 11 and 13 began in "a" (the start, then after turn 12)
    assert bans.banned("b", 15) == {"south", "examine door"}
    assert bans.banned("c", 15) == frozenset()
    assert bans.banned("a", 19) == {"north"} and bans.banned("a", 20) == frozenset()
    assert bans.note and bans.active(15)
    bans.end()
    assert not bans.note and bans.banned("a", 15) == {"north"}  # progress ends the note, not the bans
    bans.start(16, 5, "a", [turn_record(15, command="west", situation="d")], "again")
    assert bans.banned("a", 17) == {"north", "west"}  # a rewind while the bans hold adds to them


# -- resume ---------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_rewound_episode_killed_and_resumed_gives_the_records_of_an_uninterrupted_one(
    rom_path, tmp_path, walkthrough
):
    """A loop is rewound, then a repeated failure opens a human gate that waits on stdin: the process is killed there
    (SIGKILL), resumed, and given the guidance; the records equal those of a run that was never killed."""
    actions = tmp_path / "actions.txt"
    actions.write_text("\n".join(walkthrough[:30] + REWIND_LOOP + ["frobnicate"] * 4 + walkthrough[30:60]) + "\n")
    config = tmp_path / "rewind.toml"
    config.write_text(
        "[tool.zorkgpt.loop_break]\n"
        'on_stuck = "rewind"\nwarning_lead_turns = 4\nsteering_pressure = 0.0\n'
        "[tool.zorkgpt.loop_break.no_progress]\nmax_turns = 12\n"
        "[tool.zorkgpt.loop_break.repetition]\nmin_turns = 10\n"
        "[tool.zorkgpt.loop_break.action_loops]\n"
        'gate_action = "human"\ngate_min_turns_stuck = 0\ngate_after_loops = 3\n'
        "[tool.zorkgpt.knowledge]\nenabled = false\n"
    )

    def args(episodes: Path) -> list[str]:
        return [
            *("--agent", "replay", "--actions", str(actions), "--rom", str(rom_path)),
            *("--config", str(config), "--episode-dir", str(episodes), "--max-turns", "80", "--quiet"),
        ]

    clean = start_main(args(tmp_path / "clean"))
    out, err = clean.communicate(GATE_GUIDANCE + "\n", timeout=180)
    assert clean.returncode == 0, err
    expected = comparable_records(Path(out.strip().splitlines()[-1]).parent)
    assert rewinds(expected), "the script's loop was not rewound"
    gate = next(r["turn"] for r in expected for e in r["events"] if e["event_type"] == "loop_gate")
    assert gate > rewinds(expected)[0]["at"]

    episodes = tmp_path / "killed"
    process = start_main(args(episodes))
    deadline = time.monotonic() + 120
    while True:  # every record before the gate's turn is on disk; the gate waits on stdin
        assert process.poll() is None and time.monotonic() < deadline, "never reached the gate"
        written = list(episodes.glob(f"*/{EVENTS_FILE}"))
        if written and len(written[0].read_text().splitlines()) == gate - 1:
            time.sleep(0.3)
            break
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    folder = written[0].parent
    resumed = start_main(["--resume", str(folder), "--quiet"])
    _, err = resumed.communicate(GATE_GUIDANCE + "\n", timeout=180)
    assert resumed.returncode == 0, err
    assert comparable_records(folder) == expected
    assert read_summary(folder)["rewinds"] == len(rewinds(expected))


@pytest.mark.slow
def test_the_offline_agents_rewound_episode_resumed_in_a_renamed_folder_goes_on_as_it_would_have(tmp_path):
    """The offline agent's second thoughts after a rewind come from its context, which a resume rebuilds: cut after
    the rewind, moved to a folder of another name and resumed there, the episode gives the records of an
    uninterrupted one, all in that folder."""
    config = tmp_path / "rewind.toml"
    config.write_text('[tool.zorkgpt.loop_break]\non_stuck = "rewind"\n[tool.zorkgpt.knowledge]\nenabled = false\n')
    story = str(story_file("wishbringer.z3"))
    clean = start_main(
        ["--agent", "offline", "--rom", story, "--config", str(config), "--max-turns", "90", "--quiet"]
        + ["--episode-dir", str(tmp_path / "clean")]
    )
    out, err = clean.communicate(timeout=180)
    assert clean.returncode == 0, err
    folder = Path(out.strip().splitlines()[-1]).parent
    expected = comparable_records(folder)
    cut = rewinds(expected)[0]["at"] + 5

    moved = tmp_path / "moved" / "renamed"
    moved.mkdir(parents=True)
    (moved / "episode.json").write_text((folder / "episode.json").read_text())
    lines = (folder / EVENTS_FILE).read_text().splitlines(keepends=True)
    (moved / EVENTS_FILE).write_text("".join(lines[:cut]))
    resumed = start_main(["--resume", str(moved), "--quiet"])
    _, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert comparable_records(moved) == expected
    assert sorted(p.name for p in moved.parent.iterdir()) == ["renamed"]
