"""agents.reply.parse_command: what an LLM reply may turn into, and why the rest is refused."""

from __future__ import annotations

import pytest

from agents.base import InvalidReply
from agents.reply import MAX_COMMAND_CHARS, parse_command


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
    ],
)
def test_accepted_forms(reply, command):
    assert parse_command(reply) == command


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("", "empty"),
        (None, "empty"),
        ("   \n\t", "empty"),
        ("```\n```", "empty"),
        ("**", "empty"),
        ("Command:", "empty"),
        ("### Action: north", "markdown_heading"),
        ("# north", "markdown_heading"),
        ("north\nsouth", "multiple_commands"),
        ("Sure!\nnorth", "multiple_commands"),
        ("north. take lamp", "multiple_commands"),
        ("north; south", "multiple_commands"),
        ("open mailbox then take leaflet", "multiple_commands"),
        ("open mailbox and then north", "multiple_commands"),
        ("north && south", "multiple_commands"),
        ("north | south", "multiple_commands"),
        ("I think we should go north to explore.", "prose"),
        ("Let's open the mailbox", "prose"),
        ("Let me open the mailbox.", "prose"),
        ("The mailbox is closed", "prose"),
        ("where am i?", "prose"),
        ("take " + "very " * 11 + "lamp", "too_long"),
        ("x" * (MAX_COMMAND_CHARS + 1), "too_long"),
        ("take north-", "truncated"),
        ("open mailbox (carefully)", "invalid_characters"),
        ("go to <north>", "invalid_characters"),
        ("take lamp: now", "invalid_characters"),
    ],
)
def test_rejected_forms(reply, kind):
    with pytest.raises(InvalidReply) as caught:
        parse_command(reply)
    assert caught.value.kind == kind
    assert caught.value.detail  # a reason the agent is shown on its retry
    assert caught.value.reply == (reply or "").strip() or kind == "empty"


def test_invalid_reply_message_names_kind():
    with pytest.raises(InvalidReply, match="^markdown_heading: "):
        parse_command("### Action: north")
