"""Turn an LLM reply into what the harness uses: exactly one game command, or one JSON object.

Raw LLM text never reaches the game: only what `parse_command` returns does. Replies are untrusted input, so every
parser here is bounded in size and time and reports failure in one named way (InvalidReply, or None for JSON).
"""

from __future__ import annotations

import json
import re
from typing import Any

from agents.base import InvalidReply
from session.safe_text import printable

MAX_REPLY_CHARS = 20_000
"""The most of a reply anything reads: the client cuts replies to this before any parser sees them."""
MAX_JSON_ATTEMPTS = 32
"""`{` positions tried as the start of a JSON object; bounds the work on a reply full of braces."""
MAX_COMMAND_CHARS = 80
MAX_COMMAND_WORDS = 12
MAX_THOUGHT_CHARS = 400
"""A thought is kept (in the records, never sent to the game) up to this many characters."""
# One source of truth for the labels we strip and the openers that mark prose rather than a command.
_LABEL = re.compile(r"^(?:command|action|next command|next action)\s*[:=-]\s*", re.IGNORECASE)
_PROSE_OPENERS = frozenset(
    "i i'll i'm i've i'd let let's lets we we'll we're you you'll the this that my it's okay ok sure first next to "
    "now maybe perhaps since because as however based".split()
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_COMMAND_LINE = re.compile(r"^\s*[*_]*(?:command|action)[*_]*\s*[:=]", re.IGNORECASE | re.MULTILINE)
_THOUGHT_LABEL = re.compile(r"^\s*[*_]*(?:thought|thinking|reasoning)[*_]*\s*[:=]\s*", re.IGNORECASE)
_FENCE = re.compile(r"^\s*```")
_WRAPPERS = "\"'`*_“”‘’ "
_SEPARATORS = re.compile(r";|\.\s+\S|\bthen\b|\band then\b|&&|\|")
_ALLOWED = re.compile(r"[a-z0-9 ,'\-]+")


def parse_command(reply: str | None) -> str:
    """The single command in `reply`, lower-cased: one line of printable ASCII, at most MAX_COMMAND_CHARS long.

    Raises InvalidReply(kind, ...) with kind one of: empty, markdown_heading, multiple_commands, too_long,
    truncated, prose, invalid_characters. Nothing else escapes, whatever the text."""
    text = reply[:MAX_REPLY_CHARS].strip() if isinstance(reply, str) else ""
    if not text:
        raise InvalidReply("empty", text, "the reply is empty")
    command = _unwrap(_single_line(text))
    if not command:
        raise InvalidReply("empty", text, "no command after removing labels and quotes")
    if len(command) > MAX_COMMAND_CHARS or len(command.split()) > MAX_COMMAND_WORDS:
        raise InvalidReply("too_long", text, f"{len(command)} characters; a command is a few words")
    if command.endswith(("'", "-")):
        raise InvalidReply("truncated", text, "the reply ends mid-word")
    if _SEPARATORS.search(command):
        raise InvalidReply("multiple_commands", text, "several commands joined in one line")
    if command.split()[0] in _PROSE_OPENERS or command.endswith("?"):
        raise InvalidReply("prose", text, "a sentence, not a game command")
    if not _ALLOWED.fullmatch(command):
        raise InvalidReply("invalid_characters", text, "only letters, digits, spaces, commas, hyphens")
    return command


def parse_reply(reply: str | None) -> tuple[str, str]:
    """(thought, command) from a reply in any of the shapes the agent may use: a JSON object with `command` (and
    `thought`), a `Thought: ...` text ending in a `Command: ...` line, or the bare command. The command goes
    through `parse_command`; the thought is printable text of at most MAX_THOUGHT_CHARS, or "".

    Raises InvalidReply like parse_command (and `no_command` for JSON without a string `command`)."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    data = json_object(text) if "{" in text else None
    if data is not None and ("command" in data or "thought" in data):
        command = data.get("command")
        if not isinstance(command, str):
            raise InvalidReply("no_command", text, 'the JSON object has no string "command"')
        return _thought(data.get("thought")), parse_command(command)
    lines = list(_COMMAND_LINE.finditer(text))
    if len(lines) > 1:
        raise InvalidReply("multiple_commands", text, f"{len(lines)} command lines; give one")
    if lines:
        last = lines[0]
        line_end = text.find("\n", last.end())
        command_line = text[last.end() : line_end if line_end >= 0 else len(text)]
        return _thought(_THOUGHT_LABEL.sub("", text[: last.start()]).strip()), parse_command(command_line)
    return "", parse_command(text)


def _thought(value: object) -> str:
    if not isinstance(value, str):
        return ""
    return " ".join(printable(value).split())[:MAX_THOUGHT_CHARS]


def _single_line(text: str) -> str:
    """The one non-blank line of `text` outside code fences; InvalidReply when there are none or several."""
    lines = [line for line in text.splitlines() if line.strip() and not _FENCE.match(line)]
    if any(_HEADING.match(line) for line in lines):
        raise InvalidReply("markdown_heading", text, "markdown headings (e.g. '### Action:') are not a command")
    if len(lines) > 1:
        raise InvalidReply("multiple_commands", text, f"{len(lines)} lines; reply with one command on one line")
    if not lines:
        raise InvalidReply("empty", text, "the reply holds only a code fence")
    return lines[0]


def _unwrap(line: str) -> str:
    """`line` without a prompt marker, label, quotes, emphasis or final full stop, lower-cased, with every run of
    whitespace (tabs and other separators included) made one space: possibly empty."""
    line = line.strip()
    if line.startswith(">"):
        line = line[1:].strip()
    line = _LABEL.sub("", line).strip(_WRAPPERS)
    line = line.rstrip(".!").strip(_WRAPPERS)
    return " ".join(line.lower().split())


def json_object(reply: str | None) -> dict[str, Any] | None:
    """The first JSON object in `reply` (prose or a code fence around it is fine); None when there is none.

    Bounded on purpose: at most MAX_REPLY_CHARS are read and at most MAX_JSON_ATTEMPTS `{` positions are tried,
    so a reply of nothing but braces costs little. Each try decodes one value from that `{` (never a greedy regex
    from the first `{` to the last `}`, which is quadratic); nesting too deep for the decoder (RecursionError) or
    an integer too long to convert (ValueError) just make that try fail."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    decoder = json.JSONDecoder()
    start = text.find("{")
    for _ in range(MAX_JSON_ATTEMPTS):
        if start < 0:
            return None
        try:
            value, _end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None
