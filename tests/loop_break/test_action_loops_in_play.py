"""Loops beyond rooms on the real story file: design 004's scenarios A-D, design 003's identical-action and
unparseable-reply loops, design 002's agent<->critic loops and failure gates (the designs: docs/design.md)."""

from __future__ import annotations

import io

import pytest

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.looper_agent import LooperAgent
from agents.prompts import role_of
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI
from playthroughs.scenarios import build_scenario
from session.commands import canonical_command
from tests.helpers import RecordingReplay, make_config, run_episode


def signature_loops(result) -> list[dict]:
    return [e for e in result.events("loop_detected") if e["kind"] == "signature_loop"]


# -- design 004's scenarios A-D in zork1 terms -------------------------------------------------------------------
def test_scenario_a_healthy_varied_play_with_repeated_verbs(walkthrough_episode):
    """A: the walkthrough's first 60 turns repeat verbs (take, open, get, light, douse...) with different objects
    and successes: no signature loop, no failure gate."""
    interventions = signature_loops(walkthrough_episode) + [
        e for kind in ("loop_gate", "identical_action_warning") for e in walkthrough_episode.events(kind)
    ]
    assert [e for e in interventions if e["turn"] <= 60] == []


def test_scenario_b_same_no_effect_command_three_times(rom_path, tmp_path):
    """B: the same command with no effect 3x with no progress is flagged."""
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(["push mailbox"] * 4))
    [loop] = signature_loops(result)
    assert loop["turn"] == 3 and loop["count"] == 3
    assert loop["category"] == "refused"  # Zork words it three ways; the category is the same


def test_scenario_c_same_unknown_word_three_times(rom_path, tmp_path):
    """C: the same unknown-word command 3x is flagged as a parser-failure loop."""
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(["frobnicate lamp"] * 3))
    [loop] = signature_loops(result)
    assert loop["category"] == "parser_failure" and loop["turn"] == 3


def test_scenario_d_same_verb_different_objects_succeeding(rom_path, tmp_path, walkthrough):
    """D: `take` with different objects, all succeeding, is not flagged."""
    commands = walkthrough[:9] + ["take sack", "take bottle", "west", "take lamp", "take sword"]
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(commands))
    assert [r["result_category"] for r in result.records[-5:]] == ["success"] * 5
    assert signature_loops(result) == []


def test_progress_trumps_pattern(rom_path, tmp_path, walkthrough):
    """Design 004: a failing command repeated while progress happens in the window is a suppressed false
    positive, logged as such, not a loop."""
    commands = ["push mailbox", "push mailbox", "north", "south", "push mailbox"]  # north: a new room
    result = run_episode(rom_path, make_config(tmp_path), ReplayAgent(commands))
    assert signature_loops(result) == []
    [suppressed] = result.events("signature_loop_suppressed")
    assert suppressed["turn"] == 5 and suppressed["count"] == 3


# -- design 003: identical consecutive commands ----------------------------------------------------------------
def test_identical_examine_ten_times_warns_then_recovers(rom_path, tmp_path):
    """The READ_FILE analogue: the same `examine` 10x -> warning at 5 in the agent's context, recovery at 10:
    the command is forbidden (the critic rejects it programmatically) and alternatives are offered. Design document
    003's numbers, from the first repeat on (steering_pressure 0; by default they wait for a stop rule to be near:
    test_identical_commands_are_warned_once_a_stop_rule_is_near)."""
    agent = RecordingReplay(["examine mailbox"] * 12)
    result = run_episode(rom_path, make_config(tmp_path, loop_break={"steering_pressure": 0.0}), agent)
    shown = agent.shown
    [warning] = result.events("identical_action_warning")
    [recovery] = result.events("identical_action_recovery")
    assert (warning["turn"], recovery["turn"]) == (5, 10)
    assert "run 'examine mailbox' 5 times in a row" in shown[6]
    assert "Do not propose these here (the harness refuses them): examine mailbox (run 10 times" in shown[11]
    assert "Commands you have not tried recently:" in shown[11]
    blocked = result.records[10]  # turn 11: forced, so it runs, but it is recorded as rejected by the ban
    assert blocked["would_reject"] and blocked["critic_adjusted_score"] == 0.0
    assert blocked["candidates"][0]["source"] == "ban"


def test_identical_commands_are_warned_once_a_stop_rule_is_near(rom_path, tmp_path):
    """By default the warning and the ban wait until a stop rule has come steering_pressure of its way: a player
    who looks five times in a row and then goes on is left alone, one who keeps at it is warned before the stop."""
    agent = RecordingReplay(["examine mailbox"] * 20)
    config = make_config(tmp_path)
    result = run_episode(rom_path, config, agent)
    [warning] = result.events("identical_action_warning")
    assert warning["turn"] > config.loop_break.action_loops.identical_action_warning
    stop = result.events("stuck_termination")
    assert stop and warning["turn"] < stop[0]["turn"]


def test_banned_command_is_replaced_for_a_steerable_agent(rom_path, tmp_path):
    """After recovery, a non-forced agent proposing the banned command is rejected and runs something else (design
    document 003's ban, from the first repeat on)."""
    agent = LooperAgent([], ["examine mailbox"], fallbacks=("look",))
    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 14}, loop_break={"steering_pressure": 0.0})
    result = run_episode(rom_path, config, agent)
    after = [r["command"] for r in result.records[10:]]
    assert "examine mailbox" not in after
    assert all(r["rejections"] >= 1 for r in result.records[10:])


# -- design 003: unparseable replies (pre-parse detection) -----------------------------------------------------
def test_markdown_options_loop_gets_format_guidance(rom_path, tmp_path):
    """An LLM answering with a markdown list of options never reaches the game; the repeated unparseable reply
    triggers recovery with explicit format guidance, after which a model that reads it answers properly."""

    def reply(messages):
        if role_of(messages) != "agent":
            return '{"score": 0.8, "reason": "fine"}'
        prompt = messages[1]["content"]
        if "FORMAT: your recent replies held no usable game command" in prompt:
            return "north"
        return "### Options\n- north\n- east"

    config = make_config(tmp_path, gameplay={"max_turns_per_episode": 3}, orchestrator={"max_invalid_replies": 3})
    fake = ScriptedOpenAI(reply)
    client = LLMClient(config.llm, "test-key", config.orchestrator.max_consecutive_llm_failures, client=fake)
    agent = LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies)
    result = run_episode(rom_path, config, agent, llm_client=client)
    commands = [r["command"] for r in result.records]
    assert commands[:2] == ["", ""]  # raw text never sent, nor anything in its place
    assert [r["ran"] for r in result.records[:2]] == [False, False]
    assert all(r["fallback"] == "unparseable_reply:multiple_commands" for r in result.records[:2])
    [recovery] = result.events("parse_failure_recovery")
    assert recovery["turn"] == 2 and recovery["same_reply_count"] >= 5
    assert commands[2] == "north"
    assert result.summary["parse_failures"] == {"multiple_commands": 6}
    assert result.summary["termination_reason"] == "max_turns"


def test_api_errors_are_not_parse_failures(rom_path, tmp_path):
    import openai

    def reply(messages):
        raise openai.APITimeoutError(request=None)

    config = make_config(tmp_path, orchestrator={"max_consecutive_llm_failures": 3})
    fake = ScriptedOpenAI(reply)
    client = LLMClient(config.llm, "k", 3, client=fake)
    result = run_episode(rom_path, config, LLMAgent(client, config.llm), llm_client=client)
    assert result.summary["termination_reason"] == "llm_unavailable"
    assert result.summary["llm_failures"] == {"timeout": 3}
    assert result.summary["parse_failures"] == {}


# -- design 002: agent <-> critic loops ------------------------------------------------------------------------
def test_reproposing_a_rejected_command_becomes_final(rom_path, tmp_path):
    """An agent re-proposing what the critic rejected loops with the critic; after 3 such loops the rejection is
    final in that room and the agent is told it is off the table. Here: a looper moving back into an oscillation
    between the Dam and its lobby, steered to walls when its moves are rejected. The walls it keeps re-proposing
    become final; the moves the game took (north, south between the two rooms) never do: a walkthrough walking a
    passage again and again needs them, and the stop rules end the loop."""
    built = build_scenario("dam_ab", rom_path)
    result = run_episode(rom_path, make_config(tmp_path), LooperAgent(built.prefix, built.loop))
    loops = result.events("collaboration_loop")
    finals = result.events("rejection_final")
    assert len([e for e in loops if e["turn"] <= finals[0]["turn"]]) >= 3
    for final in finals:  # proposed again in that room after its rejection became final: blocked outright
        again = [
            c
            for r in result.records
            if r["turn"] > final["turn"] and r["room_id_before"] == final["room_id"]
            for c in r["candidates"]
            if canonical_command(c["command"]) == final["command"]
        ]
        assert all(c["source"] == "final_rejection" for c in again)
    for final in finals:  # never a move the game had taken from that room
        assert not [
            r
            for r in result.records
            if r["turn"] <= final["turn"]
            and r["room_id_before"] == final["room_id"]
            and canonical_command(r["command"]) == final["command"]
            and r["result_category"] == "success"
        ]


# -- design 002: failure signatures and gates ----------------------------------------------------------------
def _gate_config(tmp_path, action):
    # The gate's mechanics as design 002 gives them (the third repeat), from the first repeat on (no wait for a stop
    # rule to be near either); its wait for turns without progress has its own test.
    return make_config(
        tmp_path,
        loop_break={
            "steering_pressure": 0.0,
            "action_loops": {
                "gate_action": action,
                "enable_identical_action_detection": False,
                "gate_min_turns_stuck": 0,
                "gate_after_loops": 3,
            },
        },
    )


def test_gate_terminate(rom_path, tmp_path):
    config = _gate_config(tmp_path, "terminate")
    result = run_episode(rom_path, config, ReplayAgent(["open door"] * 10))
    after = config.loop_break.action_loops.gate_after_loops
    assert result.summary["termination_reason"] == "loop_gate"
    assert result.summary["turns"] == 1 + after  # the first failure, then gate_after_loops identical repeats
    assert [e["loop_count"] for e in result.events("failure_loop")] == list(range(1, after + 1))


def test_gate_terminate_waits_for_turns_without_progress(rom_path, tmp_path):
    """By default the gate opens only once the episode has gone gate_min_turns_stuck turns without progress."""
    config = make_config(
        tmp_path,
        loop_break={
            "action_loops": {"gate_action": "terminate", "enable_identical_action_detection": False},
            "refused_again": {"times": 0},  # `open door` thirty times is that rule's too, and it comes first
        },
    )
    result = run_episode(rom_path, config, ReplayAgent(["open door"] * 30))
    assert result.summary["termination_reason"] == "loop_gate"
    [gate] = result.events("loop_gate")
    assert gate["loop_count"] % config.loop_break.action_loops.gate_after_loops == 0
    assert result.summary["turns"] >= config.loop_break.action_loops.gate_min_turns_stuck


@pytest.mark.parametrize("seed_gate, ended", [(False, False), (True, True)])
def test_a_wrong_verb_said_four_times_among_looks_is_clumsy_play(rom_path, tmp_path, seed_gate, ended):
    """A clumsy player, after 12 turns of looking around, says `yodel` four times in 7 turns among harmless looks
    (the noisy walkthroughs of seeds 17-20 did so with `yodel`, `wave hands` and `xyzzq`). With `terminate`, the
    design's gate (the third repeat, at most 5 turns apart on average) ends it; the default gate waits for a fourth
    repeat at most 4 turns apart."""
    looks = [f"examine {thing}" for thing in ("mailbox", "house", "door", "window", "path", "forest", "tree")]
    clumsy = ["yodel", "look", "yodel", "inventory", "yodel", "look", "yodel"]
    commands = ["open mailbox", "take leaflet", *looks, *looks[:5], *clumsy, "read leaflet"]
    gate = {"gate_action": "terminate", **({"gate_after_loops": 3, "gate_max_gap": 5} if seed_gate else {})}
    steering = {"steering_pressure": 0.0}  # the gate's own conditions, whatever the stop rules say
    config = make_config(tmp_path, loop_break={**steering, "action_loops": gate})
    result = run_episode(rom_path, config, ReplayAgent(commands))
    assert result.summary["termination_reason"] == ("loop_gate" if ended else "script_exhausted")
    assert len(result.events("failure_loop")) == 3  # the repeats of `yodel`


def test_gate_warn_keeps_playing(rom_path, tmp_path):
    result = run_episode(rom_path, _gate_config(tmp_path, "warn"), ReplayAgent(["open door"] * 8))
    assert result.summary["termination_reason"] == "script_exhausted"
    assert [e["turn"] for e in result.events("loop_gate")] == [4, 7]  # every third identical failure


def test_gate_human_reads_guidance_and_resets(rom_path, tmp_path):
    agent = RecordingReplay(["open door"] * 8)
    shown = agent.shown
    human_out = io.StringIO()
    result = run_episode(
        rom_path,
        _gate_config(tmp_path, "human"),
        agent,
        human_input=io.StringIO("try the window behind the house\n"),
        human_output=human_out,
    )
    assert "LOOP GATE" in human_out.getvalue() and "open door" in human_out.getvalue()
    # The human reset the gate at turn 4: turn 5 is the first sight again, turns 6-8 its three repeats.
    assert [e["turn"] for e in result.events("loop_gate")] == [4, 8]
    [reset] = [e for e in result.events("loop_counter_reset") if e["reason"] == "human"][:1]
    assert reset["guidance"] == "try the window behind the house"
    assert "Human guidance: try the window behind the house" in shown[5]


def test_human_gate_without_input_continues(rom_path, tmp_path):
    result = run_episode(
        rom_path,
        _gate_config(tmp_path, "human"),
        ReplayAgent(["open door"] * 5),
        human_input=io.StringIO(""),
        human_output=io.StringIO(),
    )
    assert result.summary["termination_reason"] == "script_exhausted"


# -- the walkthrough triggers no intervention ---------------------------------------------------------------
def test_walkthrough_triggers_no_action_loop_intervention(walkthrough_episode):
    result = walkthrough_episode
    counts = {
        kind: len(result.events(kind))
        for kind in (
            "identical_action_warning",
            "identical_action_recovery",
            "parse_failure_recovery",
            "collaboration_loop",
            "rejection_final",
            "failure_loop",
            "loop_gate",
            "command_blocked",
        )
    }
    counts["signature_loop"] = len(signature_loops(result))
    print("walkthrough action-loop interventions:", counts)
    assert set(counts.values()) == {0}


@pytest.mark.parametrize(
    "flag, event",
    [
        ("enable_signature_detection", "loop_detected"),
        ("enable_identical_action_detection", "identical_action_warning"),
        ("enable_failure_gate", "failure_loop"),
    ],
)
def test_each_detector_has_an_off_switch(rom_path, tmp_path, flag, event):
    steering = {"steering_pressure": 0.0}  # each acting from the first repeat on
    on = run_episode(rom_path, make_config(tmp_path / "on", loop_break=steering), ReplayAgent(["push mailbox"] * 12))
    off = run_episode(
        rom_path,
        make_config(tmp_path / "off", loop_break={**steering, "action_loops": {flag: False}}),
        ReplayAgent(["push mailbox"] * 12),
    )

    def fired(result):
        return [e for e in result.events(event) if e.get("kind", "signature_loop") == "signature_loop"]

    assert fired(on) and not fired(off)
