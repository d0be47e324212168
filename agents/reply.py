"""Turn an LLM reply into exactly one game command, or say precisely why it cannot be one.

Raw LLM text never reaches the game: only what `parse_command` returns does.
"""

from __future__ import annotations

import re

from agents.base import InvalidReply

MAX_COMMAND_CHARS = 80
MAX_COMMAND_WORDS = 12
# One source of truth for the labels we strip and the openers that mark prose rather than a command.
_LABEL = re.compile(r"^(?:command|action|next command|next action)\s*[:=-]\s*", re.IGNORECASE)
_PROSE_OPENERS = frozenset(
    "i i'll i'm i've i'd let let's lets we we'll we're you you'll the this that my it's okay ok sure first next to "
    "now maybe perhaps since because as however based".split()
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_FENCE = re.compile(r"^\s*```")
_WRAPPERS = "\"'`*_“”‘’ "
_SEPARATORS = re.compile(r";|\.\s+\S|\bthen\b|\band then\b|&&|\|")
_ALLOWED = re.compile(r"^[a-z0-9 ,'\-]+$")


def parse_command(reply: str | None) -> str:
    """The single command in `reply`, lower-cased. Raises InvalidReply(kind, ...) with kind one of:
    empty, markdown_heading, multiple_commands, too_long, truncated, prose, invalid_characters."""
    text = (reply or "").strip()
    if not text:
        raise InvalidReply("empty", reply or "", "the reply is empty")
    lines = [line for line in text.splitlines() if line.strip() and not _FENCE.match(line)]
    if any(_HEADING.match(line) for line in lines):
        raise InvalidReply("markdown_heading", text, "markdown headings (e.g. '### Action:') are not a command")
    if len(lines) > 1:
        raise InvalidReply("multiple_commands", text, f"{len(lines)} lines; reply with one command on one line")
    if not lines:
        raise InvalidReply("empty", text, "the reply holds only a code fence")
    line = lines[0].strip()
    if line.startswith(">"):
        line = line[1:].strip()
    line = _LABEL.sub("", line).strip(_WRAPPERS)
    line = line.rstrip(".!").strip(_WRAPPERS)
    if not line:
        raise InvalidReply("empty", text, "no command after removing labels and quotes")
    if len(line) > MAX_COMMAND_CHARS or len(line.split()) > MAX_COMMAND_WORDS:
        raise InvalidReply("too_long", text, f"{len(line)} characters; a command is a few words")
    if line.endswith(("'", "-")):
        raise InvalidReply("truncated", text, "the reply ends mid-word")
    lowered = line.lower()
    if _SEPARATORS.search(lowered):
        raise InvalidReply("multiple_commands", text, "several commands joined in one line")
    if lowered.split()[0] in _PROSE_OPENERS or lowered.endswith("?"):
        raise InvalidReply("prose", text, "a sentence, not a game command")
    if not _ALLOWED.match(lowered):
        raise InvalidReply("invalid_characters", text, "only letters, digits, spaces, commas, hyphens")
    return " ".join(lowered.split())
