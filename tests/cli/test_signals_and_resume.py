"""Signals, a full disk and `--resume`, on real processes: main.py runs in a subprocess that is sent SIGTERM or SIGHUP,
killed with SIGKILL, or limited to a small file size.

The kill point is deterministic: the script repeats one failure until the loop gate (gate_action = "human") stops
to read guidance from stdin, which the test never writes. The process then waits at a known turn, with every
earlier record on disk, until the test signals or kills it.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest

from session.jericho_session import JerichoSession
from session.records import EVENTS_FILE, SUMMARY_FILE, read_record_dicts, read_summary
from tests.helpers import GATE_GUIDANCE, assert_all_end, comparable_records, descendants, start_main

pytestmark = pytest.mark.slow  # main.py in subprocesses, signalled, killed and resumed

GATE_TURN = 34
"""30 walkthrough steps, then the 4th `frobnicate` (its 3rd repeat) opens the gate."""


@pytest.fixture(scope="module")
def script(rom_path, tmp_path_factory) -> Path:
    steps = JerichoSession(rom_path).walkthrough()
    path = tmp_path_factory.mktemp("script") / "actions.txt"
    path.write_text("\n".join(steps[:30] + ["frobnicate"] * 4 + steps[30:70]) + "\n")
    return path


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(
        # the gate's own conditions, whatever the stop rules say
        "[tool.zorkgpt.loop_break]\nsteering_pressure = 0.0\n[tool.zorkgpt.loop_break.action_loops]\n"
        'gate_action = "human"\ngate_min_turns_stuck = 0\ngate_after_loops = 3\n'
    )
    return path


def episode_args(rom_path, script, config, episodes: Path, turns: int = 60) -> list[str]:
    return [
        "--agent",
        "replay",
        "--actions",
        str(script),
        "--rom",
        str(rom_path),
        "--config",
        str(config),
        "--episode-dir",
        str(episodes),
        "--max-turns",
        str(turns),
        "--quiet",
    ]


def wait_at_gate(process: subprocess.Popen, episodes: Path, timeout: float = 60) -> Path:
    """The episode folder once the process waits at the gate: GATE_TURN - 1 records written, prompt shown."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        folders = list(episodes.glob(f"*/{EVENTS_FILE}"))
        if folders and len(folders[0].read_text().splitlines()) == GATE_TURN - 1:
            time.sleep(0.3)  # the record is written before the prompt; the prompt blocks on stdin
            return folders[0].parent
        time.sleep(0.02)
    raise AssertionError("the episode never reached the loop gate")


def stopped_at_gate(rom_path, script, config, episodes: Path, signum: int = signal.SIGKILL) -> Path:
    """The folder of an episode sent `signum` while it waits at the gate (its process has exited)."""
    process = start_main(episode_args(rom_path, script, config, episodes))
    folder = wait_at_gate(process, episodes)
    process.send_signal(signum)
    process.communicate(timeout=60)
    return folder


def uninterrupted(rom_path, script, config, tmp_path) -> list[dict]:
    episodes = tmp_path / "clean"
    process = start_main(episode_args(rom_path, script, config, episodes))
    out, err = process.communicate(GATE_GUIDANCE + "\n", timeout=120)
    assert process.returncode == 0, err
    return comparable_records(Path(out.strip().splitlines()[-1]).parent)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_and_sighup_write_the_summary_and_map(rom_path, script, config, tmp_path, signum):
    episodes = tmp_path / "episodes"
    process = start_main(episode_args(rom_path, script, config, episodes))
    folder = wait_at_gate(process, episodes)
    emulators = descendants(process.pid)
    process.send_signal(signum)
    _, err = process.communicate(timeout=60)
    assert_all_end(emulators)
    assert process.returncode == 128 + signum
    assert f"interrupted ({signal.Signals(signum).name})" in err and "Traceback" not in err
    summary = read_summary(folder)
    assert summary["termination_reason"] == "interrupted" and summary["turns"] == GATE_TURN - 1
    assert list(folder.glob("map*"))
    assert len(read_record_dicts(folder)) == GATE_TURN - 1


def test_the_emulators_processes_die_with_a_killed_harness(rom_path, script, config, tmp_path):
    """SIGKILL leaves main.py no handler to run: its zygote sees its socket close and exits, and the emulators
    (the live game and the shadow) die with the zygote, quietly."""
    episodes = tmp_path / "episodes"
    process = start_main(episode_args(rom_path, script, config, episodes))
    wait_at_gate(process, episodes)
    emulators = descendants(process.pid)
    assert len(emulators) >= 3  # the zygote, the live game and the shadow
    process.kill()
    _, err = process.communicate(timeout=60)
    assert_all_end(emulators)
    assert "Traceback" not in err and "Error" not in err, err  # no child's broken pipe or reset on stderr


def test_kill_then_resume_gives_the_records_of_an_uninterrupted_run(rom_path, script, config, tmp_path):
    expected = uninterrupted(rom_path, script, config, tmp_path)
    assert len(expected) == 60 and any(r["turn"] == GATE_TURN and r["events"] for r in expected)
    folder = stopped_at_gate(rom_path, script, config, tmp_path / "episodes")
    assert not (folder / SUMMARY_FILE).exists()
    assert len(comparable_records(folder)) == GATE_TURN - 1
    resumed = start_main(["--resume", str(folder), "--quiet"])
    out, err = resumed.communicate(GATE_GUIDANCE + "\n", timeout=120)
    assert resumed.returncode == 0, err
    assert Path(out.strip().splitlines()[-1]) == folder / SUMMARY_FILE
    assert comparable_records(folder) == expected
    summary = read_summary(folder)
    assert summary["turns"] == 60 and summary["termination_reason"] == "max_turns"


def test_resume_after_sigterm_goes_on(rom_path, script, config, tmp_path):
    folder = stopped_at_gate(rom_path, script, config, tmp_path / "episodes", signal.SIGTERM)
    resumed = start_main(["--resume", str(folder), "--quiet", "--max-turns", "40"])
    _, err = resumed.communicate(GATE_GUIDANCE + "\n", timeout=120)
    assert resumed.returncode == 0, err
    summary = read_summary(folder)
    assert summary["turns"] == 40 and summary["termination_reason"] == "max_turns"
    assert [r["turn"] for r in comparable_records(folder)] == list(range(1, 41))


def test_resume_refuses_a_finished_episode(rom_path, script, config, tmp_path):
    episodes = tmp_path / "episodes"
    process = start_main(episode_args(rom_path, script, config, episodes, turns=5))
    out, _ = process.communicate(timeout=120)
    folder = Path(out.strip().splitlines()[-1]).parent
    again = start_main(["--resume", str(folder)])
    _, err = again.communicate(timeout=60)
    assert again.returncode == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert "nothing to resume" in err


def test_resume_refuses_records_that_do_not_replay(rom_path, script, config, tmp_path):
    folder = stopped_at_gate(rom_path, script, config, tmp_path / "episodes")
    events = folder / EVENTS_FILE
    lines = events.read_text().splitlines()
    tampered = {**read_record_dicts(folder)[5], "response": "Something else happened."}
    events.write_text("\n".join(lines[:5] + [json.dumps(tampered)] + lines[6:]) + "\n")
    resumed = start_main(["--resume", str(folder)])
    _, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 2 and "does not replay as recorded" in err and len(err.splitlines()) == 1


def test_a_full_disk_stops_the_episode_with_whole_lines(rom_path, script, config, tmp_path):
    """A file-size limit plays the full disk. Set on the running process once it waits at the gate (Jericho has
    copied its C library by then, a file bigger than the limit), it lets about one more record fit: the write that
    does not fit is undone, the episode stops with one clear line, and every line on disk is a whole record."""
    episodes = tmp_path / "episodes"
    process = start_main(episode_args(rom_path, script, config, episodes))
    folder = wait_at_gate(process, episodes)
    limit = (folder / EVENTS_FILE).stat().st_size + 3000
    resource.prlimit(process.pid, resource.RLIMIT_FSIZE, (limit, limit))
    _, err = process.communicate(GATE_GUIDANCE + "\n", timeout=120)
    assert process.returncode == 2, err
    last = err.strip().splitlines()[-1]  # before it: the gate's prompt
    assert last.startswith("error: cannot write") and "events.jsonl" in last and "Traceback" not in err
    assert (folder / EVENTS_FILE).read_bytes().endswith(b"\n")  # no partial line
    turns = [record["turn"] for record in read_record_dicts(folder)]  # every line a whole record
    assert turns == list(range(1, len(turns) + 1))
    assert GATE_TURN - 1 <= len(turns) < 60
    summary = read_summary(folder)
    assert summary["termination_reason"] == "records_unwritable" and summary["turns"] == len(turns)
