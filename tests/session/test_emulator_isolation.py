"""A crash or a hang of Jericho's C core costs a probe, or ends the episode with its own ending, never the process
(session/emulator.py). Real emulators on real story files: hollywood's C core segfaults on `look` after 65 steps of
its walkthrough; the other failures are real signals sent to an emulator's process (SIGKILL kills it as a crash
would, SIGSTOP leaves it unanswering as a hang would)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

import main
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from batch.pool import run_jobs
from orchestration.wiring import RunOptions, build_orchestrator, build_session
from session.emulator import LIVE, SHADOW, Emulator, EmulatorCrashed, EmulatorFailed, EmulatorHung
from session.jericho_session import JerichoSession
from session.records import BROKEN_ENDINGS, EVENTS_FILE, Ending, read_record_dicts, read_summary
from session.shadow import SHADOW_HANGS_ALLOWED
from session.snapshots import state_digest
from tests.helpers import make_config, more_story_file, read_episode, running
from viewer.report import REPORT_FILE

CRASH_STEPS = 65
"""hollywood's walkthrough steps after which `look` segfaults Jericho's C core (step 65: GET PILLAR, in the crawl
space)."""
TINY_LIMIT = 1.0
"""Seconds a stopped emulator is waited for in these tests (the default is DEFAULT_TIME_LIMIT)."""


@pytest.fixture(scope="module")
def hollywood() -> tuple[Path, list[str]]:
    path = more_story_file("hollywood.z3")
    session = JerichoSession(path)
    steps = session.walkthrough()
    session.close()
    assert steps[CRASH_STEPS - 1] == "GET PILLAR"
    return path, steps


# -- the emulator's process ---------------------------------------------------------------------------------------
def test_the_crash_is_jerichos_and_costs_only_its_emulator(hollywood):
    path, steps = hollywood
    emulator = Emulator(path)
    emulator.reset()
    for command in steps[:CRASH_STEPS]:
        emulator.step(command)
    with pytest.raises(EmulatorCrashed) as crash:
        emulator.step("look")
    assert (crash.value.emulator, crash.value.command) == (LIVE, "look")
    assert "SIGSEGV" in str(crash.value)
    assert not emulator.alive and not running(emulator.pid)
    with pytest.raises(EmulatorCrashed, match="stopped"):  # a failed emulator stays stopped
        emulator.get_score()


def test_a_state_taken_on_one_emulator_sets_another(rom_path, walkthrough):
    live, shadow = Emulator(rom_path), Emulator(rom_path, role=SHADOW)
    live.reset()
    shadow.reset()
    for command in walkthrough[:40]:
        live.step(command)
    state = live.get_state()
    shadow.set_state(state)
    assert state_digest(shadow.get_state()) == state_digest(state)
    assert shadow.step(walkthrough[40]) == live.step(walkthrough[40])
    assert state_digest(shadow.get_state()) == state_digest(live.get_state())
    live.close()
    shadow.close()


def test_closing_a_session_ends_its_emulators_processes(rom_path):
    session = JerichoSession(rom_path)
    session.reset()
    session.trial("open mailbox")  # starts the shadow
    pids = [session.env.pid, session.shadow.emulator.pid]
    assert all(running(pid) for pid in pids)
    session.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(running(pid) for pid in pids):
        time.sleep(0.02)
    assert not any(running(pid) for pid in pids)


def test_an_exception_in_the_emulator_is_raised_here_and_it_goes_on(rom_path):
    emulator = Emulator(rom_path)
    emulator.reset()
    with pytest.raises(AttributeError):  # Jericho's own error, from the emulator's process
        emulator.step(None)
    assert emulator.alive and emulator.step("open mailbox")[0].startswith("Opening the small mailbox")
    emulator.close()


def test_an_emulator_that_stops_answering_is_killed_after_its_time_limit(rom_path):
    emulator = Emulator(rom_path, time_limit=TINY_LIMIT)
    emulator.reset()
    os.kill(emulator.pid, signal.SIGSTOP)
    with pytest.raises(EmulatorHung) as hang:
        emulator.step("open mailbox")
    assert hang.value.command == "open mailbox" and f"within {TINY_LIMIT:g} s" in str(hang.value)
    assert not emulator.alive


# -- probes on the shadow -----------------------------------------------------------------------------------------
class Saboteur(ReplayAgent):
    """Replays commands and, as it proposes the turns of `at`, sends `signum` to one of the session's emulators."""

    def __init__(self, commands: list[str], session: JerichoSession, emulator: str, signum: int, at: tuple[int, ...]):
        super().__init__(commands, kind="replay")
        self.session, self.emulator, self.signum, self.at = session, emulator, signum, at

    def propose(self, context):
        if context.turn in self.at:
            target = self.session.env if self.emulator == LIVE else self.session.shadow.emulator
            os.kill(target.pid, self.signum)
        return super().propose(context)


def play(rom_path, tmp_path, commands, emulator=None, signum=signal.SIGKILL, at=()):
    """zork1 through the orchestrator, `signum` sent to `emulator`'s process as turns `at` are proposed."""
    config = make_config(tmp_path, gameplay={"emulator_timeout_seconds": TINY_LIMIT})
    options = RunOptions(rom=str(rom_path), quiet=True)
    session = build_session(config, options)
    agent = Saboteur(commands, session, emulator, signum, at)
    orchestrator = build_orchestrator(
        config, options, session=session, agent=agent, critic=OfflineCritic(), knowledge=None
    )
    played = read_episode(orchestrator.play_episode(), orchestrator)
    session.close()
    return played


@pytest.mark.slow  # a hung emulator waits out its time limit
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSTOP], ids=["crash", "hang"])
def test_a_shadow_that_fails_costs_its_probes_and_the_episode_plays_on(rom_path, walkthrough, tmp_path, signum):
    commands = walkthrough[:60]
    clean = play(rom_path, tmp_path / "clean", commands)
    sabotaged = play(rom_path, tmp_path / "sabotaged", commands, SHADOW, signum, at=(12, 30))
    assert sum(sabotaged.summary["probe_failures"].values()) == 2  # the shadow started afresh after the first
    assert clean.summary["probe_failures"] == {} and sabotaged.summary["emulator_failure"] is None
    for key in ("termination_reason", "turns", "final_score", "best_score", "rooms_visited"):
        assert sabotaged.summary[key] == clean.summary[key], key
    assert [r["command"] for r in sabotaged.records] == commands
    log = [json.loads(line) for line in (sabotaged.folder / "episode.log.jsonl").read_text().splitlines()]
    warnings = [line for line in log if line["record"]["extra"].get("event_type") == "emulator_failed"]
    assert len(warnings) == 1, "one warning an episode, not one a failure"


def test_a_failed_idle_probe_counts_every_change_as_the_commands(rom_path, walkthrough):
    """No idle comparison for the turn: its facts count as they would without one (managers.novelty)."""
    session = JerichoSession(rom_path)
    session.reset()
    for command in walkthrough[:5]:
        session.step(command)
    assert session.idle_world() is not None
    session.step(walkthrough[5])
    os.kill(session.shadow.emulator.pid, signal.SIGKILL)
    assert session.idle_world() is None and session.idle_world() is None  # asked twice, failed once
    assert session.shadow.probe_failures == {"idle_world": 1}
    assert session.trial("look") is not None  # a fresh shadow for the next probe
    session.close()


@pytest.mark.slow  # three hangs waited out
def test_after_its_last_allowed_hang_the_shadow_is_given_up_for_the_episode(rom_path):
    session = JerichoSession(rom_path, time_limit=TINY_LIMIT)
    session.reset()
    for command in ("open mailbox", "north", "south", "east")[:SHADOW_HANGS_ALLOWED]:  # a command's answer is kept
        shadow = session.shadow.ready()
        os.kill(shadow.pid, signal.SIGSTOP)
        assert session.trial(command) is None
    assert session.trial("look") is None and session.shadow.emulator is shadow  # skipped unplayed: no fresh shadow
    assert session.shadow.probe_failures == {"trial": SHADOW_HANGS_ALLOWED + 1}
    session.reset()  # the next episode tries a fresh shadow again
    assert session.trial("look") is not None and session.shadow.probe_failures == {}
    session.close()


# -- the live game ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGSTOP], ids=["crash", "hang"])
def test_a_live_emulator_that_fails_ends_the_episode_with_whole_records(rom_path, walkthrough, tmp_path, signum):
    played = play(rom_path, tmp_path, walkthrough[:40], LIVE, signum, at=(20,))
    summary = played.summary
    assert summary["termination_reason"] == Ending.EMULATOR_FAILED and summary["turns"] == 19
    what = "killed by SIGKILL" if signum == signal.SIGKILL else f"gave no answer within {TINY_LIMIT:g} s"
    assert what in summary["emulator_failure"] and "live" in summary["emulator_failure"]
    assert [r["turn"] for r in played.records] == list(range(1, 20))
    assert (played.folder / REPORT_FILE).is_file() and (played.folder / "map.json").is_file()
    assert Ending.EMULATOR_FAILED in BROKEN_ENDINGS  # --resume may go on: a hang may have been the machine's load


def test_hollywoods_crash_ends_the_episode_and_main_says_so_in_one_line(hollywood, tmp_path, capsys):
    path, steps = hollywood
    actions = tmp_path / "actions.txt"
    actions.write_text("\n".join([*steps[:CRASH_STEPS], "look"]) + "\n")
    common = ["--episode-dir", str(tmp_path / "episodes"), "--quiet", "--no-knowledge"]
    code = main.main(["--agent", "replay", "--actions", str(actions), "--rom", str(path), *common])
    out, err = capsys.readouterr()
    assert code == main.EXIT_USAGE
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err
    assert "SIGSEGV" in err and "'look'" in err
    folder = Path(out.strip().splitlines()[-1]).parent
    summary = read_summary(folder)
    assert summary["termination_reason"] == "emulator_failed" and summary["turns"] == CRASH_STEPS
    assert summary["emulator_failure"] in err
    assert [record["turn"] for record in read_record_dicts(folder)] == list(range(1, CRASH_STEPS + 1))
    lines = (folder / EVENTS_FILE).read_text().splitlines()
    assert (folder / REPORT_FILE).is_file()
    # --resume replays to the command that crashed, and it crashes again: the same ending, the records untouched
    assert main.main(["--resume", str(folder), "--quiet"]) == main.EXIT_USAGE
    assert "SIGSEGV" in capsys.readouterr().err
    assert (folder / EVENTS_FILE).read_text().splitlines() == lines


@pytest.mark.slow  # hollywood's whole walkthrough, and plain Jericho's run of it
def test_hollywoods_walkthrough_plays_to_its_victory_past_the_crash(hollywood, tmp_path, capsys):
    """The shadow's idle `look` crashes where the walkthrough takes the pillar: that probe is skipped and the game
    plays on to plain Jericho's score. (The loop break is off: it stops this walkthrough in the hedge maze.)"""
    path, steps = hollywood
    plain = Emulator(path)
    plain.reset()
    for command in steps:
        plain.step(command)
    score, won = plain.get_score(), plain.victory()
    plain.close()
    config = tmp_path / "config.toml"
    config.write_text("[tool.zorkgpt.loop_break]\nenabled = false\n")
    common = ["--episode-dir", str(tmp_path / "episodes"), "--quiet", "--no-knowledge", "--max-turns", "3000"]
    code = main.main(["--agent", "walkthrough", "--rom", str(path), "--config", str(config), *common])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = read_summary(Path(out.strip().splitlines()[-1]).parent)
    assert won and summary["termination_reason"] == "victory" and summary["final_score"] == score
    assert summary["probe_failures"].get("idle_world", 0) >= 1


# -- worker processes ---------------------------------------------------------------------------------------------
def die_on_two(job: int) -> int:
    """A job function for `run_jobs`: job 2 kills its own worker process."""
    if job == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return job * 10


@pytest.mark.slow  # spawned worker processes
def test_a_worker_that_dies_costs_its_job_and_the_others_finish():
    results, deaths = [], []
    run_jobs([1, 2, 3, 4], 2, die_on_two, results.append, lambda job, code: deaths.append((job, code)))
    assert sorted(results) == [10, 30, 40]
    assert deaths == [(2, -signal.SIGKILL)]


def test_emulator_failed_names_the_emulator_and_the_command():
    failure = EmulatorHung(SHADOW, "play_from", "look", "gave no answer within 30 s")
    assert str(failure) == "the shadow Z-machine emulator gave no answer within 30 s on 'look'"
    assert isinstance(failure, EmulatorFailed)
