"""Game integrity: interpreter commands never reach the emulator, whoever proposes them.

`save` writes zork1.qzl into the working directory and `restore` loads it into the next episode; `restart` resets
the score unnoticed; `script` writes a transcript. Every path is covered: a replayed script (forced), an LLM reply
(steerable), and lookahead prediction, which plays candidates on a shadow emulator.
"""

from __future__ import annotations

import os

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.prompts import role_of
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI
from session.commands import INTERPRETER_VERBS, CommandRefused, why_not_run
from session.jericho_session import JerichoSession
from tests.helpers import make_config, run_episode

INTERPRETER_COMMANDS = sorted(INTERPRETER_VERBS) + [
    "SAVE",
    "save game",
    "restart",
    "look. save",
    "n and save",
    "open mailbox then restart",
    "recording on",
    "robot, quit",
]
"""Every interpreter verb, upper case, with words after it, and hidden behind another command on the same line (the
Z-machine parsers run `look. save` as two commands: zork1 saves)."""
LOOP_EVENTS = (
    "loop_detected",
    "identical_action_warning",
    "identical_action_recovery",
    "failure_loop",
    "loop_gate",
    "collaboration_loop",
    "stuck_warning",
    "parse_failure_recovery",
)


@pytest.fixture
def working_dir(tmp_path, monkeypatch):
    """An empty current directory: where `save`, `script` and `recording` would write their files."""
    folder = tmp_path / "cwd"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.mark.parametrize("prediction", ["map", "lookahead"])
def test_replayed_interpreter_commands_never_run(rom_path, tmp_path, working_dir, prediction):
    commands = ["open mailbox", *INTERPRETER_COMMANDS, "take leaflet", "west"]
    config = make_config(
        tmp_path,
        gameplay={"max_turns_per_episode": len(commands)},
        loop_break={"destination_prediction": prediction},
    )
    result = run_episode(rom_path, config, ReplayAgent(commands))
    refused = result.records[1:-2]
    assert [r["command"] for r in refused] == INTERPRETER_COMMANDS
    for record in refused:
        assert record["ran"] is False and record["fallback"] == "not_run", record["command"]
        assert record["response"].startswith("[not run: ") and "interpreter command" in record["response"]
        assert record["room_id_after"] == record["room_id_before"] and record["score_after"] == 0
        assert [e["event_type"] for e in record["events"]].count("command_refused") == 1
    # No restart or restore happened: the leaflet came out of the mailbox opened before them all.
    assert "leaflet" in " ".join(result.records[-1]["inventory_after"]).lower()
    assert not [e for kind in LOOP_EVENTS for e in result.events(kind)]
    assert os.listdir(working_dir) == []
    assert result.summary["termination_reason"] == "max_turns"


@pytest.mark.parametrize("prediction", ["map", "lookahead"])
def test_an_llm_proposing_interpreter_commands_is_told_why_and_plays_on(rom_path, tmp_path, working_dir, prediction):
    """Each turn the model first answers with an interpreter command, then with a game command once told why."""
    told: list[str] = []
    proposals = iter(["save", "north", "n and save", "east", "restore", "look"])

    def reply(messages):
        if role_of(messages) != "agent":
            return '{"score": 0.9, "reason": "sure"}'
        told.append(messages[-1]["content"])
        return next(proposals)

    config = make_config(
        tmp_path, gameplay={"max_turns_per_episode": 3}, loop_break={"destination_prediction": prediction}
    )
    client = LLMClient(
        config.llm, "test-key", config.orchestrator.max_consecutive_llm_failures, client=ScriptedOpenAI(reply)
    )
    result = run_episode(rom_path, config, LLMAgent(client, config.llm), llm_client=client)
    assert [r["command"] for r in result.records] == ["north", "east", "look"]
    for record, refused in zip(result.records, ["save", "n and save", "restore"]):
        first = record["candidates"][0]
        assert first["command"] == refused and first["source"] == "not_run" and not first["accepted"]
        assert record["ran"] is True and record["fallback"] is None
    assert sum("interpreter command" in prompt for prompt in told) == 3  # the retry prompt says why
    assert not [e for kind in LOOP_EVENTS for e in result.events(kind)]
    assert result.events("collaboration_loop") == []
    assert os.listdir(working_dir) == []


def test_the_session_refuses_them_too(rom_path, working_dir):
    """The last line of defence: whatever calls the session, nothing reaches the emulator or the shadow."""
    session = JerichoSession(rom_path)
    session.reset()
    for command in INTERPRETER_COMMANDS + ["look\x00", "x" * 200, "caf\u00e9"]:
        with pytest.raises(CommandRefused):
            session.step(command)
        assert session.room_after(command) is None
    assert session.step("open mailbox").text.strip().startswith("Opening the small mailbox")
    assert os.listdir(working_dir) == []


@pytest.mark.parametrize(
    "command",
    [
        "take lamp and sword",
        "load gun",
        "press restart button",
        "give sword to troll",
        "examine saved file",
        "north. east",
    ],
)
def test_game_commands_that_mention_such_words_still_run(command):
    assert why_not_run(command) is None
