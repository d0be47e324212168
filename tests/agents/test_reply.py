"""agents.reply: what an LLM reply may turn into, and why the rest is refused (the corpus of raw replies and the
walkthrough steps are in test_reply_corpus.py)."""

from __future__ import annotations

import json

import pytest

from agents.base import InvalidReply
from agents.reply import (
    MAX_COMMAND_CHARS,
    MAX_COMMAND_WORDS,
    MAX_THOUGHT_CHARS,
    json_object,
    parse_command,
    parse_reply,
    split_reasoning,
)
from session.commands import GameDictionary, why_not_run
from session.jericho_session import JerichoSession
from tests.helpers import story_file


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
        ("take " + "very " * (MAX_COMMAND_WORDS - 1) + "lamp", "too_long"),
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


# -- the game's dictionary decides what a line of words is ----------------------------------------------------------
STORY_FILES = (
    *("zork1.z5", "zork3.z5", "lostpig.z8", "karn.z5"),
    *("hhgg.z3", "sherlock.z5", "wishbringer.z3", "seastalker.z3"),
)


@pytest.fixture(scope="module")
def dictionaries() -> dict[str, GameDictionary]:
    """The dictionaries of a few corpus games, read from their story files as the orchestrator reads them."""
    found = {}
    for name in STORY_FILES:
        session = JerichoSession(story_file(name))
        words = (entry.word for entry in session.dictionary())
        found[name.split(".")[0]] = GameDictionary.of(words, session.dictionary_word_length)
    return found


def test_a_dictionary_knows_numbers_and_words_typed_in_full():
    """Version 1-3 story files keep 6 letters of a word: `latitude` typed in full is the dictionary's `latitu`."""
    cutthroat_like = GameDictionary.of(["latitu", "longit", "is", "set"], 6)
    assert all(cutthroat_like.knows(word) for word in ["latitude", "LONGITUDE", "is", "25", "576-3190", "$603", "is,"])
    assert not cutthroat_like.knows("lat") and not cutthroat_like.knows("going") and not cutthroat_like.knows("")
    assert parse_command("latitude is 25", cutthroat_like) == "latitude is 25"
    assert parse_command('{"thought": "the chart", "command": "longitude is 25"}', cutthroat_like) == "longitude is 25"
    with pytest.raises(InvalidReply) as caught:
        parse_command("latitude is 25")  # without the game's words, `is` makes it a sentence
    assert caught.value.kind == "prose"


@pytest.mark.parametrize(
    ("game", "reply", "command"),
    [
        ("zork1", "what is a grue", "what is a grue"),  # Infocom's WHAT IS and WHERE IS verbs
        ("zork1", "Where is the troll?", "where is the troll?"),
        ("zork3", "set dial to 776", "set dial to 776"),
        ("sherlock", "wait for 36 hours", "wait for 36 hours"),
        ("zork1", "say 42", "say 42"),
        ("zork1", 'say "hello, is anyone there?"', 'say "hello, is anyone there?"'),
        ("lostpig", "ask gnome about what is behind the curtain", "ask gnome about what is behind the curtain"),
        ("karn", "k9, shoot door", "k9, shoot door"),
        ("hhgg", "Marvin, open the hatch", "marvin, open the hatch"),
        ("zork1", "explore the forest", "explore the forest"),  # a short command the game answers itself
        ("zork1", "dungeon master, wander about the whole place", "dungeon master, wander about the whole place"),
    ],
)
def test_a_line_the_game_reads_is_a_command(dictionaries, game, reply, command):
    assert parse_command(reply, dictionaries[game]) == command


@pytest.mark.parametrize(
    ("game", "reply"),
    [
        ("zork1", "Going north."),
        ("zork1", "Moving on to explore the forest."),
        ("zork1", "Nothing to do here but wait"),
        ("zork1", "Checking the inventory first."),
        ("zork1", "Heading west toward the house."),
        ("wishbringer", "I will wait here."),  # the game knows every word; `I` still opens a sentence
        ("seastalker", "Let's wait here."),
        ("zork1", "where am i?"),
    ],
)
def test_a_sentence_the_game_cannot_read_is_prose(dictionaries, game, reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply, dictionaries[game])
    assert caught.value.kind == "prose"


def test_without_a_dictionary_the_shape_of_the_words_decides():
    """Other callers give no dictionary: no word is known to be unknown, and `is` reads as a sentence."""
    assert parse_command("Going north.") == "going north"
    with pytest.raises(InvalidReply):
        parse_command("what is a grue")


# -- decorations, brackets and sentinels -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply",
    [
        "– open mailbox",
        "— open mailbox",
        "• open mailbox",
        "◦ open mailbox",
        "▪ open mailbox",
        "‣ open mailbox",
        "➤ open mailbox",
        "→ open mailbox",
        "-> open mailbox",
        "✓ open mailbox",
        "a) open mailbox",
        "- [ ] open mailbox",
        "- [x] open mailbox",
        "📬 open mailbox",
        "open mailbox 📬",
        "👉 **open mailbox**",
        "➡️ open mailbox",
        "open mailbox\u200b",
        "[open mailbox]",
        "[[open mailbox]]",
        "<<open mailbox>>",
        "«open mailbox»",
        "【open mailbox】",
        "<start> open mailbox <end>",
        "<BEGIN>open mailbox<END>",
        "<cmd>open mailbox</cmd>",
        "<next_command>open mailbox</next_command>",
        "[COMMAND] open mailbox [/COMMAND]",
        "ｏｐｅｎ ｍａｉｌｂｏｘ",
    ],
)
def test_decorations_brackets_and_sentinels_around_a_command(reply):
    assert parse_command(reply) == "open mailbox"


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("go <direction>", "invalid_characters"),  # a template's placeholder
        ("<north> or <south>", "invalid_characters"),
        ("[north] [east]", "invalid_characters"),
        ("🤔", "empty"),
        ("– north\n– east", "multiple_commands"),
        ("\ufffdnorth\ufffd", "invalid_characters"),  # text that could not be decoded is no decoration
        ("\ud800north\udfff", "invalid_characters"),
    ],
)
def test_a_placeholder_several_bracketed_commands_or_undecodable_text_is_no_command(reply, kind):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == kind


# -- labels ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply",
    [
        "Next command -> take lamp",
        "Command => take lamp",
        "Command → take lamp",
        "Input >> take lamp",
        "COMMAND — take lamp",
        "Command：take lamp",
        "Final answer: take lamp",
        "**Final answer:** take lamp",
        "I'll type: take lamp",
        "I will enter: take lamp",
        "Decision: take lamp",
        "Executing: take lamp",
        "[Command]: take lamp",
        "Let's go with: take lamp",
        "✅ Command: take lamp",
        "<think>the lamp</think>\n\n## Final Answer\n\ntake lamp",
        "<|START_THINKING|>Command: north? No.<|END_THINKING|><|START_RESPONSE|>take lamp<|END_RESPONSE|>",
        "| Step | Command |\n|---|---|\n| 1 | take lamp |",
        "| Command | Why |\n| :-- | :-- |\n| `take lamp` | light |",
    ],
)
def test_labels_in_other_phrasings_and_separators(reply):
    assert parse_command(reply) == "take lamp"


def test_a_table_of_several_commands_is_several_commands():
    with pytest.raises(InvalidReply) as caught:
        parse_command("| Command |\n|---|\n| north |\n| east |")
    assert caught.value.kind == "multiple_commands"


@pytest.mark.parametrize(
    ("reply", "command"),
    [("OK. north", "north"), ("Sure, open mailbox", "open mailbox"), ("Okay! take lamp", "take lamp")],
)
def test_a_nod_before_the_command_is_no_part_of_it(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(("reply", "kind"), [("OK.", "acknowledgement"), ("Understood. I'll go north.", "prose")])
def test_a_nod_alone_or_before_a_sentence_is_no_command(reply, kind):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == kind


def test_a_label_in_brackets_needs_no_colon():
    assert parse_command("[ACTION] north") == parse_command("[Command] north") == "north"


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("open mailbox;", "open mailbox"),
        ("open mailbox\n\n---\nReasoning: the leaflet may help.", "open mailbox"),
        ("Thought: the door is shut.\n***\nopen door", "open door"),
    ],
)
def test_a_trailing_semicolon_and_a_markdown_rule_are_no_part_of_the_command(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("take lamp # light source", "take lamp"),
        ("Command: north // explore the forest", "north"),
        ("north <- the only way out", "north"),
        ("dial 555#", "dial 555#"),
        ('say "a # b"', 'say "a # b"'),
    ],
)
def test_a_comment_after_a_command_as_in_code_is_no_part_of_it(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    ["Next: light the lamp.\nnorth", "The room is dark.\nCommand: light lamp\n\nnorth", "Action: north\nopen door"],
)
def test_a_command_on_its_own_line_after_a_labelled_one_is_a_second_command(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == "multiple_commands"


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("Next step: open the mailbox.\nopen mailbox", "open the mailbox"),
        ("Command: go north\nnorth", "go north"),
        ("Action: take lamp\nThis should light the way.", "take lamp"),
        ("Command: north\n[Forest]", "north"),
    ],
)
def test_after_a_labelled_command_the_same_command_a_sentence_or_a_title_is_no_second_one(reply, command):
    assert parse_command(reply) == command


# -- a command and a sentence about it -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("Command: open mailbox. This should reveal what's inside.", "open mailbox"),
        ("north. The path there is unexplored.", "north"),
        ("take lamp - it will light the way", "take lamp"),
        ("read leaflet — it might have instructions", "read leaflet"),
        ("open trap door. It is time to go down.", "open trap door"),
        ("move rug\n\nThis may reveal a trap door.", "move rug"),
        ("examine altar (to learn more). I expect an inscription.", "examine altar"),
        ("north\nThe troll blocks the way north, but it sleeps.", "north"),
    ],
)
def test_a_command_followed_by_a_sentence_about_it(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    [
        "north. Actually, east is better.",
        "Command: wait. Then north.",
        "north. East is where I want to go.",
        "south. Or maybe west.",
        "west\n\nOn second thought, go north instead.",
        "north\nActually, east is better.",
        "open mailbox. take leaflet",
        'north. "east" would work too.',
    ],
)
def test_a_sentence_that_takes_the_command_back_or_adds_one_is_no_command(reply):
    with pytest.raises(InvalidReply):
        parse_command(reply)


def test_a_sentence_after_a_word_the_game_does_not_know_is_all_prose(dictionaries):
    """`Still dark here.` is no command the game reads followed by a comment: the whole reply is prose."""
    with pytest.raises(InvalidReply):
        parse_command("Still dark here. Need a light source.", dictionaries["zork1"])


# -- a command quoted in a sentence announcing it --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('I\'ll type "open mailbox".', "open mailbox"),
        ("Let's try `climb tree`.", "climb tree"),
        ('My command is "take leaflet".', "take leaflet"),
        ("The next command should be `turn on lamp`.", "turn on lamp"),
        ("I will go with 'examine the mailbox'.", "examine the mailbox"),
    ],
)
def test_a_command_quoted_at_the_end_of_a_sentence_announcing_it(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    [
        'I tried "north" before and it failed, so I\'m unsure.',  # quoted, but not the end of the sentence
        'Either "east" or "west" would work.',
        "I'd recommend `read leaflet`.",  # no word announcing what is typed
        'The command "open trap door" seems best.',
        "I'll try `north` or `east`.",
    ],
)
def test_a_quoted_command_merely_mentioned_is_no_command(reply):
    with pytest.raises(InvalidReply):
        parse_command(reply)


# -- several commands ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply",
    [
        "open mailbox & take leaflet",
        "north / east",
        "north or east",
        "look + wait",
        "open window → enter window",
        "open window -> enter window",
        '{"thought": "undecided", "command": "north or south"}',
        '{"thought": "two lines", "command": "open mailbox\\nread leaflet"}',
    ],
)
def test_commands_joined_by_a_symbol_or_offered_as_a_choice_are_several(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == "multiple_commands"


# -- JSON as models damage or wrap it --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply",
    [
        '{\n  "thought": "closed", // it may hold a leaflet\n  "command": "open mailbox"\n}',
        '{\n  // first\n  "thought": "it\'s closed",\n  /* then */\n  "command": "open mailbox"\n}',
        '{"thought": "", "command": "open mailbox" /* it is closed */}',
        '{"thought": "The box\nis closed.", "command": "open mailbox"}',
        "{'thought': 'The box\nis closed', 'command': 'open mailbox',}",
        '```jsonc\n{"thought": "see http://x.org", // a comment\n "command": "open mailbox"}\n```',
        '{"result": {"next": {"command": "open mailbox"}}}',
        '{"final_command": "open mailbox"}',
        '{"nextCommand": "open mailbox"}',
        '{"command_to_execute": "open mailbox", "command_reason": "closed"}',
        '{"command": {"text": "open mailbox"}}',
        '{"previous_command": "north", "next_action": "open mailbox"}',
        '{"thought": "🗝️", "command": "open mailbox 📬"}',
    ],
)
def test_json_with_comments_line_breaks_and_other_keys(reply):
    assert parse_command(reply) == "open mailbox"


def test_json_object_reads_comments_and_line_breaks():
    assert json_object('{"score": 0.5, // sure\n "reason": "two\nlines"}') == {"score": 0.5, "reason": "two\nlines"}


# -- typographic quotes, cut objects and turned-down commands in JSON ----------------------------------------------
def test_typographic_quotes_delimit_json_strings_but_an_apostrophe_stays():
    assert parse_reply("{“thought”: “It’s here, I’m sure”, “command”: “take it”}") == ("It’s here, I’m sure", "take it")
    assert parse_command("{‘command’: ‘north’}") == "north"
    # valid JSON with typographic quotes inside a string is read as it is, never straightened
    assert parse_reply('{"thought": "he said “go”, then left", "command": "north"}') == (
        "he said “go”, then left",
        "north",
    )
    assert json_object("{“score”: 0.5, “reason”: “fine”}") == {"score": 0.5, "reason": "fine"}


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('{"thought": "locked", "command": "unlock door with key"', "unlock door with key"),
        ('{"command": "north", "thought": "the passage goes on pa', "north"),
        ('{"command": "north" // a comment and no brace', "north"),
        ('{"id": "c1", "arguments": {"command": "move rug"}, "no', "move rug"),  # the whole value inside it
        ('{"command": "take lamp"} {"thought": "cut', "take lamp"),  # a whole command, then a cut object
    ],
)
def test_json_cut_before_its_closing_brace_gives_its_whole_keys(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    [
        '{"thought": "the troll", "command": "attack troll wi',  # the command's own string is cut
        '{"command":',
        '{"thought": "I should first',
        '{"command": ["north", "east"',  # a list is never closed: its items may go on
    ],
)
def test_json_cut_inside_its_command_is_truncated(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == "truncated"


def test_a_cut_object_is_no_json_object_for_other_readers():
    assert json_object('{"score": 0.5, "reason": "cut') is None


@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ('I could answer {"command": "north"} but it is boarded, so instead:\n{"command": "south"}', "south"),
        ('Rather than {"command": "west"}, {"command": "east"}', "east"),
        ('Not {"command": "west"} - the river. {"command": "east"}', "east"),
        ('I won\'t send {"command": "west"}; better:\n{"command": "east"}', "east"),
        ('I could answer {"command": "north"} but it is boarded.\nsouth', "south"),
        ('I\'m not sure, but {"command": "north"}', "north"),  # the `not` is in a clause of its own
        ('Since the door isn\'t locked, {"command": "open door"}', "open door"),
    ],
)
def test_a_json_command_a_sentence_turns_down_is_not_the_answer(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    [
        'I could answer {"command": "north"} but the trees look the same.',  # turned down, nothing after it
        'I could answer {"command": "up"} or {"command": "down"}.',  # both named in the same hedge
        '{"command": "north"} or {"command": "south"}',
    ],
)
def test_a_json_command_only_turned_down_or_offered_as_a_choice_is_no_answer(reply):
    with pytest.raises(InvalidReply):
        parse_command(reply)


@pytest.mark.parametrize(
    "reply",
    [
        'My first idea was {"command": "north"}, but that failed before.\n{"command": "east"}',
        'Rejected option: {"command": "north"} (a wall).\n\n{"command": "east"}',
        '{"command": "north"} was a dead end earlier, so not that.\n\n```json\n{"command": "east"}\n```',
        'I thought about {"command": "up"}; the tree is too high.\nCommand: {"command": "east"}',
    ],
)
def test_a_json_command_quoted_in_a_sentence_gives_way_to_the_one_on_its_own_line(reply):
    assert parse_command(reply) == "east"


@pytest.mark.parametrize(
    "reply",
    [
        '{"command": "north"}\n{"command": "east"}',  # two answers given alike: several commands
        'Either {"command": "north"} is right, or maybe {"command": "east"} is.',
        '{"command": "east"}\nActually, I prefer {"command": "north"} after all.',  # changed its mind after it
    ],
)
def test_json_commands_given_alike_are_still_several(reply):
    with pytest.raises(InvalidReply):
        parse_command(reply)


# -- a room's title in brackets ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("[West of House]\nI should look in the mailbox first.\nopen mailbox", "open mailbox"),
        ("[Kitchen]\nThe window leads outside.\nwest", "west"),
        ("[West of House]\nPlan: open the mailbox to read the leaflet.\nopen mailbox", "open mailbox"),
        ("[Kitchen]\nPlan: climb the stairs, then search the attic.\nup", "up"),  # never the title `kitchen`
        ("[Kitchen]\n**Reasoning:** the bottle may hold water.\ntake bottle", "take bottle"),
        ("**[Kitchen]**\nPlan: go west to the living room.\nwest", "west"),
        ("> [West of House]\nThought: the mailbox is closed.\nopen mailbox", "open mailbox"),
        ("open mailbox\n[West of House]", "open mailbox"),
        ("[Kitchen]", "kitchen"),  # one word alone may be a command (`[Ulysses]`): the game says what it reads
        ("[North]", "north"),
        ("[Open Mailbox]", "open mailbox"),  # a verb opens it: a command
        ("[OPEN MAILBOX]", "open mailbox"),
        ("A tall tree grows here.\nclimb tree", "climb tree"),  # a sentence opening with an article is prose
    ],
)
def test_a_room_title_in_brackets_is_no_command(reply, command):
    assert parse_command(reply) == command


def test_a_room_title_alone_is_no_command():
    with pytest.raises(InvalidReply) as caught:
        parse_command("[West of House]")
    assert caught.value.kind == "no_command"


# -- final-answer lines -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("reply", "command"),
    [
        ("**Final answer.** open window", "open window"),
        ("**Final answer**. open window", "open window"),
        ("**My final answer:** open window", "open window"),
        ("The final answer is **open window**.", "open window"),
        ("I'll go **north**.", "north"),
    ],
)
def test_final_answer_lines_in_other_phrasings(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    "reply",
    [
        "Let me pick up the **lamp**.",  # bold marks a word, not the command, unless right after what announces it
        "**Final answer:** open window — then I can climb in.",  # a dash before another step: not one command
    ],
)
def test_a_bold_word_or_a_dash_before_another_step_is_no_command(reply):
    with pytest.raises(InvalidReply):
        parse_command(reply)
