"""agents.reply: what an LLM reply may turn into, and why the rest is refused (the corpus of raw replies and the
walkthrough steps are in test_reply_corpus.py)."""

from __future__ import annotations

import json

import pytest

from agents.base import InvalidReply
from agents.reply import MAX_COMMAND_CHARS, MAX_THOUGHT_CHARS, json_object, parse_command, parse_reply, split_reasoning
from session.commands import why_not_run


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("north", "north"),
        ("  North  \n", "north"),
        ("**open mailbox**", "open mailbox"),
        ("`north`", "north"),
        ("Command: north", "north"),
        ("command = take lamp", "take lamp"),
        ("Action: open the trap door", "open the trap door"),
        ("Next action - go west", "go west"),
        ("> take leaflet", "take leaflet"),
        ('"go north"', "go north"),
        ("“read leaflet”", "read leaflet"),
        ("take lamp.", "take lamp"),
        ("open mailbox!", "open mailbox"),
        ("```\nnorth\n```", "north"),
        ("put   egg  in   nest", "put egg in nest"),
        ("give garlic to troll", "give garlic to troll"),
        ("turn on lamp", "turn on lamp"),
        ("say hello, sailor", "say hello, sailor"),
        ("take all", "take all"),
        ("ne", "ne"),
        ("### Action: north", "north"),
        ("# north", "north"),
        ("- open mailbox", "open mailbox"),
        ("2) take lamp", "take lamp"),
        ("Sure!\nnorth", "north"),
        ("open mailbox (carefully)", "open mailbox"),
        ("reply", "reply"),  # weapon's last scene: a bare `reply` is a command, not a label
        ("answer", "answer"),
        ("Answer: north", "north"),
    ],
)
def test_accepted_forms(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize("command", ["i", "l", "x", "z", "n", "s", "e", "w", "u", "d", "g", "q"])
def test_one_letter_commands_pass_bare_and_in_json(command):
    assert parse_command(command) == command
    assert parse_reply(json.dumps({"thought": "short", "command": command})) == ("short", command)


def test_q_is_read_but_never_run():
    """The reader reads what the model wrote; the one guard every path goes through refuses the interpreter's quit."""
    assert parse_command("q") == "q"
    assert why_not_run("q") is not None


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('answer "a well"', 'answer "a well"'),
        ('SAY "FLOAT"', 'say "float"'),
        ('type "bleem"', 'type "bleem"'),
        ('SAY TO TWIN "THE COMBINATION IS 639"', 'say to twin "the combination is 639"'),
        ('say "is it here? then go. north"', 'say "is it here? then go. north"'),  # a sentence inside quotes
        ('{"thought": "riddle", "command": "answer \\"a well\\""}', 'answer "a well"'),
        ("say “xyzzy”", 'say "xyzzy"'),
    ],
)
def test_quotes_inside_a_command_reach_the_game(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "command",
    [
        "take lamp and sword",
        "get tobacco,knife,pipe",
        "give opal, ruby, sapphire and emerald to guard",
        "remove opener and drop it",
        "open box then get cube",
        "show egg to adventurer then east",
        "turtle, se and get scroll then nw",
        "dungeon master, turn dial to 8 and press button",
        "robot, east and south",
        "eddie,hello",
        "take all except key, whip, stool",
        "drop key and brush",
        "erase line between b and r",
    ],
)
def test_one_infocom_command_with_several_objects_or_an_order_passes(command):
    assert parse_command(command) == command


@pytest.mark.parametrize(
    "reply",
    [
        "open mailbox and take leaflet",
        "n then e",
        "look. take lamp",
        "north; south",
        "north && south",
        "north | south",
        "north\nsouth",
        "go north and east",
        "unlock door, open door",
        "go north then east",
        "open door and go north",
    ],
)
def test_two_different_commands_are_an_honest_failure(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == "multiple_commands"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("", "empty"),
        (None, "empty"),
        ("   \n\t", "empty"),
        ("```\n```", "no_command"),
        ("**", "empty"),
        ("Command:", "no_command"),
        ("Sorry, I can't help with that.", "refusal"),
        ("I'm sorry, but I cannot continue.", "refusal"),
        ("Understood.", "acknowledgement"),
        ("Sure!", "acknowledgement"),
        ("null", "junk"),
        ("{}", "junk"),
        ("I think we should go north to explore.", "prose"),
        ("Let's open the mailbox", "prose"),
        ("Let me open the mailbox.", "prose"),
        ("The mailbox is closed", "prose"),
        ("where am i?", "prose"),
        ("North would loop us back.", "prose"),
        ("take lamp: now", "prose"),
        ("take " + "very " * 11 + "lamp", "too_long"),
        ("x" * (MAX_COMMAND_CHARS + 1), "too_long"),
        ("take north-", "truncated"),
        ('answer "a well', "truncated"),
        ("go to <north>", "invalid_characters"),
        ("`n` then `e`", "invalid_characters"),
        ('{"thought": "x"}', "no_command"),
        ('{"thought": "x", "command": 7}', "no_command"),
        ('{"action": "go", "direction": "north"}', "no_command"),
        ("<think>I will go north", "reasoning_only"),
        ("<|channel|>analysis<|message|>Command: east would loop us back.<|end|>", "reasoning_only"),
    ],
)
def test_rejected_forms(reply, kind):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == kind
    assert caught.value.detail  # a reason the agent is shown on its retry
    assert caught.value.reply == (reply or "")


@pytest.mark.parametrize("reply", ["\\U", "take \\N", "\\s", "look \\_ restart", '{"command": "\\\\X"}'])
def test_a_backslash_never_reaches_the_emulator(reply):
    """dumb-frotz reads `\\` as an escape: hot keys for undo, restart and quit, a second line, or an interpreter
    setting that loops forever. The reader refuses it, and so does the guard every path goes through."""
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == "invalid_characters"
    assert why_not_run("take \\N") is not None


# -- reasoning never supplies the command ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('<think>draft {"command": "north"}</think>\n{"command": "east"}', "east"),
        ('<Thinking>draft {"command": "north"}</Thinking>{"command": "east"}', "east"),
        ("<reasoning>Command: north</reasoning>\neast", "east"),
        ("<thought>north?</thought> east", "east"),
        ("<reflection>north was a loop</reflection>\nCommand: east", "east"),
        ("[THINK]north[/THINK]east", "east"),
        ("◁think▷north◁/think▷east", "east"),
        ('The opener was in the prompt. {"command": "north"}\n</think>\n{"command": "east"}', "east"),
        (
            "<|channel|>analysis<|message|>Command: north would loop us back.<|end|>"
            "<|start|>assistant<|channel|>final<|message|>east<|return|>",
            "east",
        ),
        ("analysisCommand: north would loop us back.assistantfinaleast", "east"),
        ("Thought: Command: north\nCommand: east", "east"),
        ("Reasoning: north is a loop\n\neast", "east"),
    ],
)
def test_reasoning_never_supplies_the_command(reply, command):
    assert parse_command(reply) == command


def test_reasoning_becomes_the_thought_when_there_is_no_other():
    thought, command = parse_reply("<think>The lamp is in the living room.</think>\nwest")
    assert (thought, command) == ("The lamp is in the living room.", "west")
    thought, _ = parse_reply("<think>" + "x " * 1000 + "so west it is</think>west")
    assert len(thought) <= MAX_THOUGHT_CHARS and thought.endswith("so west it is")  # its conclusion is kept
    assert parse_reply('<think>long</think>{"thought": "short", "command": "west"}') == ("short", "west")


def test_split_reasoning_shapes():
    assert split_reasoning("a<think>b</think>c") == ("b", "ac")
    assert split_reasoning("b</think>c") == ("b", "c")
    assert split_reasoning("a<think>b") == ("b", "a")
    assert split_reasoning("plain") == ("", "plain")


# -- JSON, tool calls, templates ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('{"action": "north"}', "north"),
        ('{"Command": "North"}', "north"),
        ("{'thought': 'x', 'command': 'move rug'}", "move rug"),
        ('{"thought": "x", "command": "east",}', "east"),
        ('{thought: "x", command: "climb tree"}', "climb tree"),
        ('{"thought": "x", "command": "up"} and some words after', "up"),
        ('<tool_call>\n{"name": "act", "arguments": {"command": "take torch"}}\n</tool_call>', "take torch"),
        ('{"function": {"name": "act", "arguments": "{\\"command\\": \\"ring bell\\"}"}}', "ring bell"),
        ('[TOOL_CALLS] [{"name": "act", "arguments": {"command": "read book"}}]', "read book"),
        ('{"name": "act", "parameters": {"command": "dig in sand"}}', "dig in sand"),
        ('[act(command="pull lever")]', "pull lever"),
        ('{"action": "act", "action_input": "pour water"}', "pour water"),
        ("north<|im_end|>", "north"),
        ("north<|eot_id|>", "north"),
        ("north</s>", "north"),
        ("north<｜end▁of▁sentence｜>", "north"),
        ("look\n<|user|>\nwhat now?\n<|assistant|>\nattack troll", "look"),
    ],
)
def test_json_tool_calls_and_template_tokens(reply, command):
    assert parse_command(reply) == command


def test_an_explicit_empty_json_command_is_an_empty_line():
    """A 'press a key' pause: the model chooses an empty line on purpose. A bare empty reply stays a failure."""
    assert parse_reply('{"thought": "press a key", "command": ""}') == ("press a key", "")
    assert parse_reply('{"thought": "press a key", "command": "  "}')[1] == ""
    with pytest.raises(InvalidReply):
        parse_reply("  ")


def test_json_object_reads_loose_json():
    assert json_object("{'score': 0.5,}") == {"score": 0.5}
    assert json_object('text {"a": 1} more {"b": 2}') == {"a": 1}
    assert json_object("no json") is None
