"""Property tests of the reply parsers: whatever an LLM sends, only a named outcome comes out.

parse_command returns one printable line of bounded length or raises InvalidReply, with or without the game's
dictionary; parse_judgement returns None or a float score in [0, 1]; the objective manager's JSON reading returns a
dict. No other exception, and no input costs more than a bounded amount of work. The examples below the properties
pin inputs that crashed a parser. A command wrapped in any mix of the shapes models write is read as itself or
refused, never as another command, and a draft command in reasoning never wins over the final one.
"""

from __future__ import annotations

import functools
import json
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agents.base import InvalidReply
from agents.llm_critic import MAX_REASON_CHARS, parse_judgement, parse_review
from agents.reply import (
    MAX_COMMAND_CHARS,
    MAX_COMMAND_WORDS,
    MAX_REPLY_CHARS,
    MAX_THOUGHT_CHARS,
    json_object,
    parse_command,
    parse_reply,
)
from managers.objectives import ObjectiveManager
from session.commands import GameDictionary
from session.config import LoopBreakConfig
from session.context import ObjectiveReview
from session.jericho_session import JerichoSession
from session.safe_text import printable
from tests.factories import turn_record
from tests.helpers import story_file

FUZZ = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example],
)
"""Bounded so the file runs in seconds; no example database written into the working tree."""

COMMAND_CHARS = {chr(c) for c in range(32, 127)} - set("\\<>{}[]`*") - set(string.ascii_uppercase)
"""Printable ASCII, lower-cased, without the interpreter's escape or markup left over."""
# characters that steer the parser: wrappers, labels, separators, fences, whitespace of every kind, controls
TRICKY = list("`*_\"'“”‘’>#;.!?|&:=-{}[]\\ \t\n\r\x0b\x0c\x1c\x85\u2028\u00a0\u3000\x00\x1b\x7f\ud800\udfff")
WORDS = [
    "north",
    "open",
    "mailbox",
    "take",
    "lamp",
    "then",
    "and",
    "i",
    "command",
    "action",
    "```",
    "###",
    "score",
    "<think>",
    "</think>",
    "<thinking>",
    "[THINK]",
    "[/THINK]",
    "<|channel|>",
    "analysis",
    "final",
    "<|message|>",
    "<|end|>",
    "<|im_end|>",
    "<|user|>",
    "assistantfinal",
    "Thought:",
    "Action Input:",
    "Observation:",
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    '"command":',
    "'action':",
    "arguments",
    "null",
    "true",
    "Sure!",
    "\\U",
]
WRAPPERS = ["`", "*", "**", "_", '"', "'", "“", "”", "> ", "Command: ", "```\n", "<think>", "</think>", "- ", "1. "]


def pieces(max_size: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(TRICKY) | st.sampled_from(WORDS) | st.text(max_size=3), max_size=max_size).map(
        "".join
    )


tricky_text = pieces(40)
# a short core between wrappers, often only blanks and controls: how "`\t`" (an IndexError once) is built
cores = pieces(4) | st.text(alphabet=" \t\u00a0\u2003\u3000\x00\x1b\x1f\x7f", max_size=3)
wrapped_core = st.tuples(st.sampled_from(WRAPPERS), cores, st.sampled_from(WRAPPERS)).map("".join)
any_text = st.text(max_size=200) | tricky_text | wrapped_core


def json_values(max_leaves: int = 12):
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20)
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
        max_leaves=max_leaves,
    )


def wrapped(values) -> st.SearchStrategy[str]:
    """JSON text of `values` with prose or a code fence around it, as models write it."""
    openers = st.sampled_from(["", "Sure: ", "```json\n", "{", "score: "])
    return st.tuples(openers, values.map(json.dumps), any_text).map("".join)


verdict_objects = st.fixed_dictionaries({"score": json_values(3)}, optional={"reason": json_values(3)})


# -- parse_command --------------------------------------------------------------------------------------------
def assert_is_command(command: str) -> None:
    """One line of printable ASCII (no control character, no NUL, no backslash), or "" (an explicit JSON empty
    command)."""
    assert isinstance(command, str)
    assert set(command) <= COMMAND_CHARS
    assert command == " ".join(command.split())
    assert len(command) <= MAX_COMMAND_CHARS and len(command.split()) <= MAX_COMMAND_WORDS


@FUZZ
@given(any_text)
@example("`\t`")
@example("*\t*")
@example('"\t"')
@example("\ud800")
@example("open\tmailbox")
@example("n\x00orth")
def test_parse_command_returns_one_printable_line_or_raises_invalid_reply(reply):
    try:
        command = parse_command(reply)
    except InvalidReply as exc:
        assert exc.kind and exc.detail
        return
    assert_is_command(command)


thought_replies = (
    any_text
    | wrapped(st.fixed_dictionaries({"thought": json_values(2), "command": json_values(2)}))
    | st.builds(lambda t, c: f"Thought: {t}\nCommand: {c}", any_text, any_text)
)


@FUZZ
@given(thought_replies)
@example('{"thought": "' + "x" * 5000 + '", "command": "north"}')
@example('{"thought": ["deep", [[[]]]], "command": "north"}')
@example("Thought: \ud800\x1b[2J\nCommand: north")
@example("Command: north\nCommand: south")
def test_parse_reply_gives_a_bounded_printable_thought_and_one_command(reply):
    try:
        thought, command = parse_reply(reply)
    except InvalidReply as exc:
        assert exc.kind and exc.detail
        return
    assert_is_command(command)
    assert isinstance(thought, str) and len(thought) <= MAX_THOUGHT_CHARS
    assert thought == printable(thought)  # no control character, no escape sequence, no lone surrogate


# -- any mix of shapes gives the command or a failure, never another command ---------------------------------------
COMMANDS = [
    "north",
    "i",
    "x rug",
    "open mailbox",
    "take lamp and sword",
    'answer "a well"',
    "take zm$100000",
    "yes",
    'say to twin "the combination is 639"',
    "turtle, se and get scroll then nw",
    "click designers_manual",
    "n",
]
OTHER = "west"
"""A draft command in reasoning, different from every command above."""
LABELS = ["", "Command: ", "**Command:** ", "### Action: ", "> ", "- ", "Action Input: "]
TOKENS = ["", "<|im_end|>", "<|eot_id|>", "</s>", "<|end|>", "\n"]
PREFIXES = [
    "",
    f"<think>I might {OTHER}.</think>\n",
    f"Thought: maybe {OTHER}\n",
    f'Draft {{"command": "{OTHER}"}}</think>\n',
    "Here is my command:\n\n",
    f"<|channel|>analysis<|message|>Command: {OTHER} would loop us back.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>",
]


def as_json(command: str, style: str) -> str:
    """`command` in one of the JSON shapes models write."""
    if style == "python":
        return repr({"thought": "t", "command": command})
    if style == "tool":
        return json.dumps({"name": "send", "arguments": json.dumps({"command": command})})
    if style == "trailing":
        return json.dumps({"Thought": "t", "Command": command})[:-1] + ",}"
    return json.dumps({"thought": "t", "command": command})


@st.composite
def command_shapes(draw) -> tuple[str, str]:
    """(command, a reply giving it in a random mix of the shapes models write)."""
    command = draw(st.sampled_from(COMMANDS))
    fence = draw(st.booleans())
    if draw(st.booleans()):
        body = as_json(command, draw(st.sampled_from(["plain", "python", "tool", "trailing"])))
    else:
        body = draw(st.sampled_from(LABELS)) + command
    body = f"```\n{body}\n```" if fence else body
    return command, draw(st.sampled_from(PREFIXES)) + body + draw(st.sampled_from(TOKENS))


@FUZZ
@given(command_shapes())
def test_a_command_in_any_shape_is_read_as_itself_or_refused(case):
    command, reply = case
    try:
        read = parse_reply(reply)[1]
    except InvalidReply:
        return
    assert read == command


@functools.cache
def zork1_dictionary() -> GameDictionary:
    """zork1's dictionary, read from the story file as the orchestrator reads it."""
    session = JerichoSession(story_file("zork1.z5"))
    return GameDictionary.of((entry.word for entry in session.dictionary()), session.dictionary_word_length)


@FUZZ
@given(command_shapes())
def test_with_the_game_dictionary_a_command_in_any_shape_is_read_as_itself_or_refused(case):
    command, reply = case
    try:
        read = parse_reply(reply, zork1_dictionary())[1]
    except InvalidReply:
        return
    assert read == command


@FUZZ
@given(any_text | thought_replies)
def test_with_the_game_dictionary_any_text_gives_one_printable_line_or_invalid_reply(reply):
    try:
        command = parse_command(reply, zork1_dictionary())
    except InvalidReply as exc:
        assert exc.kind and exc.detail
        return
    assert_is_command(command)


@FUZZ
@given(
    st.sampled_from(COMMANDS),
    st.sampled_from(["think", "thinking", "reasoning", "THINK", "harmony", "opener"]),
    any_text,
)
def test_a_draft_in_reasoning_never_wins(command, style, noise):
    draft = json.dumps({"command": OTHER}) + f" Command: {OTHER}"
    final = json.dumps({"thought": "t", "command": command})
    if style == "harmony":
        analysis = f"<|channel|>analysis<|message|>{noise}{draft}<|end|>"
        reply = f"{analysis}<|start|>assistant<|channel|>final<|message|>{final}"
    elif style == "opener":
        reply = f"{noise}{draft}</think>{final}"
    else:
        reply = f"<{style}>{noise}{draft}</{style}>{final}"
    try:
        read = parse_reply(reply)[1]
    except InvalidReply:
        return
    assert read != OTHER


@pytest.mark.parametrize("reply", ["`\t`", "*\t*", '"\t"', "_\u3000_", "> \t", "Command:\t**"])
def test_whitespace_inside_wrappers_is_an_empty_reply(reply):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind in ("empty", "no_command")  # `Command:` then nothing: no command named


@pytest.mark.parametrize(("reply", "kind"), [("n\x00orth", "invalid_characters"), ("go\x1b[2J", "invalid_characters")])
def test_control_characters_are_never_a_command(reply, kind):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == kind


def test_tabs_between_words_are_one_space():
    assert parse_command("open\tmailbox") == "open mailbox"


# -- parse_judgement ----------------------------------------------------------------------------------------------
def assert_is_judgement_or_none(judgement) -> None:
    if judgement is None:
        return
    assert type(judgement.score) is float and 0.0 <= judgement.score <= 1.0
    assert isinstance(judgement.reason, str) and "\n" not in judgement.reason
    assert 0 < len(judgement.reason) <= MAX_REASON_CHARS
    judgement.reason.encode("utf-8")


@FUZZ
@given(any_text | wrapped(json_values()) | wrapped(verdict_objects))
@example('{"score": true, "reason": "yes"}')
@example('{"score": 1e999}')
@example('{"score": NaN}')
@example('{"score": 0.5, "reason": "   "}')
@example('{"score": 0.5, "reason": "\\ud800 \\u001b[2J"}')
@example("score: 10")
def test_parse_judgement_returns_none_or_a_unit_score(reply):
    assert_is_judgement_or_none(parse_judgement(reply))


@FUZZ
@given(
    st.booleans() | st.text(alphabet=string.ascii_letters + " ", max_size=5) | st.lists(st.floats(0, 1), max_size=2),
    json_values(3),
)
def test_only_a_number_is_a_score(score, reason):
    """JSON true/false would pass as 1.0/0.0 through float(); words or a list are no score either (a string that
    writes a number, `"0.8"`, `"85%"`, `"7/10"`, is one: see test_llm_critic)."""
    assert parse_judgement(json.dumps({"score": score, "reason": reason})) is None


@pytest.mark.parametrize(
    "reply",
    [
        '{"score": true, "reason": "yes"}',
        '{"score": false, "reason": "no"}',
        '{"score": "0.8x"}',
        '{"score": "85"}',
        '{"score": NaN}',
        '{"score": Infinity}',
        '{"score": -0.1}',
        '{"score": ' + "1" * 5000 + "}",
        '{"score": [' * 5000 + "]" * 5000 + "}",
        "{" * 100_000,
        "score: 10",
        "score: 0.5x",
    ],
)
def test_parse_judgement_refuses(reply):
    assert parse_judgement(reply) is None


@pytest.mark.parametrize(
    ("reply", "score", "reason"),
    [
        ('{"score": 1, "reason": "integers are numbers"}', 1.0, "integers are numbers"),
        ('noise {"score": 0.25} tail }', 0.25, "no reason given"),
        ('{"score": 0.5, "reason": ["not", "a", "string"]}', 0.5, "no reason given"),
        ('{"score": 0.5, "reason": "\\u001b[31mred\\u001b[0m alert"}', 0.5, "red alert"),
        ("score: 0.5.", 0.5, "score given without a reason"),
        ('{"score": "0.8"}', 0.8, "no reason given"),
        ("<think>score: 0.1</think> Score: 0.9", 0.9, "score given without a reason"),
    ],
)
def test_parse_judgement_reads(reply, score, reason):
    judgement = parse_judgement(reply)
    assert (judgement.score, judgement.reason) == (score, reason)


def test_every_parser_reads_a_hostile_reply():
    """Every parser reads a bounded prefix, so a long run of braces costs no more than a short reply (a `\\{.*\\}`
    search would take seconds; a slow parser shows in `pytest --durations`, not as a timing assertion)."""
    hostile = [
        "{" * 100_000,
        '{"a":' * 20_000,
        "{" + " " * 100_000,
        '{"s": "' + "x" * 100_000,
        "[" * 100_000,
        "{'a':" * 20_000,
        "<think>" * 5_000,
        "</think>" * 5_000,
        "<|channel|>analysis<|message|>" * 1_000,
        "Command:\n" * 2_000,
        "north\nsouth\n" * 5_000,
        "a and " * 5_000,
        '"' * 20_000,
        "<command>" * 3_000,
        "{" + "a:1," * 4_000 + "}",
        '{"tool_calls": ' + "[" * 5_000 + "]" * 5_000 + "}",
        "k9, " * 5_000,
        "<a>" * 6_000,
        "[[" * 5_000 + "x" + "]]" * 5_000,
        "{" + "/*" * 8_000,
        "| Command |\n|---|\n" + "| north |\n| east |\n" * 1_000,
        "| a | b |\n|---|---|\n" * 1_500,
        "🧭 north " * 2_000,
        "north. " * 3_000,
        "I'll type " * 2_000 + '"north',
        "take lamp - " * 3_000,
        "Command：" + "ｎ" * 15_000,
    ]
    for reply in hostile:
        parse_judgement(reply)
        json_object(reply)
        for dictionary in (None, zork1_dictionary()):
            with pytest.raises(InvalidReply):
                parse_command(reply, dictionary)


# -- the critic's objective review --------------------------------------------------------------------------------
MAILBOX_OPENED = "Opening the small mailbox reveals a leaflet."

review_replies = (
    any_text
    | wrapped(json_values())
    | wrapped(st.fixed_dictionaries({"new_objectives": json_values(6)}))
    | wrapped(
        st.fixed_dictionaries(
            {
                "completed": st.lists(
                    json_values(4) | st.fixed_dictionaries({"objective": json_values(2), "evidence": json_values(2)}),
                    max_size=4,
                )
            }
        )
    )
)


@FUZZ
@given(review_replies)
@example('{"new_objectives": ' + "[" * 5000 + "]" * 5000 + "}")
@example('{"completed": [{"objective": ["x"], "evidence": {"deep": [[[]]]}}]}')
@example('{"new_objectives": [' + "9" * 5000 + "]}")
def test_objective_reviews_never_raise(reply):
    review = parse_review(reply)
    assert all(isinstance(text, str) and 3 <= len(text) <= 160 for text in review.proposed)
    assert all(isinstance(o, str) and isinstance(e, str) for o, e in review.completed)
    manager = ObjectiveManager(LoopBreakConfig(), "llm")
    manager.review(1, ObjectiveReview(proposed=("Open the mailbox",)), None)
    record = turn_record(2, command="open mailbox", response=MAILBOX_OPENED, new_world_state=True)
    completed, added = manager.review(3, review, record)
    assert all(entry["completion_action"] == "open mailbox" for entry in completed)
    assert all(isinstance(text, str) for text in added)


def test_objective_completion_needs_string_claims():
    reply = json.dumps({"completed": [{"objective": ["Open the mailbox"], "evidence": "reveals a leaflet"}]})
    assert parse_review(reply).completed == ()


@FUZZ
@given(any_text | wrapped(json_values()))
def test_json_object_returns_a_dict_or_none(reply):
    value = json_object(reply)
    assert value is None or isinstance(value, dict)


def test_json_object_reads_only_a_bounded_prefix():
    late = " " * MAX_REPLY_CHARS + '{"objectives": ["x"]}'
    assert json_object(late) is None
    assert json_object('prose {"a": 1} more {"b": 2}') == {"a": 1}
    assert json_object('{broken {"ok": true}') == {"ok": True}
