"""Turn an LLM reply into what the harness uses: exactly one game command (and the thought behind it), or one JSON
object.

Raw LLM text never reaches the game: only what `parse_reply` returns does. A reply is read in one pass whatever shape
a model gives it (tests/data/replies*.toml hold the shapes, each with where it is documented):

1. Reasoning is set aside first and never supplies the command: `<think>`-style blocks of every common spelling,
   closed or not (a lone closing tag means the server put the opener in the prompt: what precedes it is reasoning),
   the gpt-oss harmony channels (only `final`, or a tool call, is the answer), `Thought:`-style labelled sections.
2. Chat-template tokens are dropped; a hallucinated next user turn is cut off.
3. The command comes from, in this order: `<command>`-style tags (any tag naming a command, an action, an answer);
   labelled lines (`Command:`, `Action:`, `**Command:**`, `**Final answer.**`, `### Action: north`, ReAct's `Action
   Input:`, `Next command -> north`, a lead-in announcing it: `I'll type: north`, `**My final answer:**`; a table's
   command column); JSON (`command`, `action`, keys in any case or spelling that name a command, objects nested
   under any key, tool-call wrappers with `arguments` as an object or a JSON string, Python dicts, trailing commas,
   comments, raw line breaks in strings, typographic quotes as string delimiters; an object the reply ends in before
   its closing brace gives its whole keys, and a command cut inside its string is a truncated reply; a JSON command
   in a sentence that turns it down, `I could answer {...} but`, `rather than {...}`, is not the answer); a pythonic
   tool call (`send(command="north")`); else the last line, when no other line is a command (a room's title in
   brackets, `[West of House]`, is none), or the last line holding one when only sentences about it follow.
4. Decorations (emoji, typographic bullets, arrows, full-width forms), markdown (bullets, numbering, headings,
   emphasis, code spans and fences, a `>` prompt) and brackets or sentinel tags around the whole line are unwrapped,
   and the command checked: honest failures (InvalidReply) for refusals, acknowledgements, junk, prose, several
   commands, a room's title. A command followed by a sentence about it, or quoted (or in bold) at the end of a
   sentence announcing it, is that command. Given the game's dictionary (the LLM path), the game's own words decide
   what is prose: a line of words it knows is a command, a sentence opening with a word it does not know is not.

Replies are untrusted input, so every step is bounded in size and time (no regex here backtracks more than a bounded
amount per position) and failure is reported in one named way: InvalidReply (or None from `json_object`).
"""

from __future__ import annotations

import ast
import json
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agents.base import InvalidReply
from session.commands import (
    ATTACK_VERBS,
    DIRECTION_WORDS,
    HANDING_VERBS,
    OBSERVATION_VERBS,
    TAKE_VERBS,
    TOPIC_VERBS,
    TRAVEL_VERBS,
    WAIT_VERBS,
    GameDictionary,
    canonical_command,
    direction_of,
    why_invalid,
)
from session.safe_text import printable

MAX_REPLY_CHARS = 20_000
"""The most of a reply anything reads: the client cuts replies to this before any parser sees them."""
MAX_JSON_ATTEMPTS = 32
"""`{`/`[` positions tried as the start of a JSON value; bounds the work on a reply full of brackets."""
MAX_JSON_DEPTH = 16
"""Nesting a reply's JSON may have; deeper is no verdict or command a model writes, and is not read."""
MAX_COMMAND_CHARS = 120
"""The longest command read: what Inform's input buffer holds (120 characters); a game reads no more of a line.
TextWorld's commands name things in full (`unlock TextWorld limited edition passageway with TextWorld limited
edition latchkey`, 83 characters)."""
MAX_COMMAND_WORDS = 20
"""The most words a command may have: what Inform's parse buffer holds (20)."""
MAX_THOUGHT_CHARS = 400
"""A thought is kept (in the records and shown to the critic, never sent to the game) up to this many characters."""

# -- 1. reasoning --------------------------------------------------------------------------------------------------
_REASONING_NAMES = "think|thinking|thought|thoughts|reasoning|reflection|reflect|scratchpad|scratch_pad|inner_monologue"
_REASONING_TAG = re.compile(
    rf"<\s*(/?)\s*(?:{_REASONING_NAMES}|seed:think)\s*>"  # <think> ... </think>, Seed-OSS <seed:think>
    r"|\[(/?)THINK\]"  # Magistral
    r"|◁(/?)think▷"  # Kimi
    r"|<\|(begin|end)_of_thought\|>"  # Sky-T1 / Bespoke-Stratos
    r"|<\|(START|END)_(?:THINKING|REASONING)\|>",  # Cohere Command A
    re.IGNORECASE,
)
_HARMONY_HEADER = re.compile(r"<\|channel\|>\s*([a-z]{1,20})([^<]{0,200}(?:<\|constrain\|>[^<]{0,60})?)<\|message\|>")
_HARMONY_END = re.compile(r"<\|(?:end|return|call|start)\|>")
_HARMONY_FLAT = re.compile(r"\s*analysis(?=[A-Z])")
"""gpt-oss output whose special tokens a server dropped: `analysisThe user wants ... assistantfinalnorth`."""
_HARMONY_FLAT_FINAL = "assistantfinal"

# -- 2. chat-template tokens ---------------------------------------------------------------------------------------
_NEXT_USER_TURN = re.compile(
    r"<[|｜]\s*(?:user|User|im_start\s*[|｜]>\s*user|start_header_id\s*[|｜]>\s*user)\b[^\n]{0,3}"
    r"|<start_of_turn>user|\[INST\]|<\|start\|>user"
)
"""Where a model went on to write the user's next turn itself: nothing after it is its answer."""
_TEMPLATE_TOKEN = re.compile(
    r"<\|start_header_id\|>[a-z]{0,20}<\|end_header_id\|>"
    r"|<[|｜](?:im_start|start)[|｜]>[a-z]{0,20}"
    r"|<start_of_turn>[a-z]{0,20}"
    r"|<[|｜][^<>|｜\s]{1,40}[|｜]>"  # every `<|...|>`: <|im_end|>, <|eot_id|>, <|end|>, <|return|>, DeepSeek's ｜
    r"|</?s>|<eos>|<bos>|<end_of_turn>|<pad>|\[/?INST\]|\[/?TOOL_CALLS\]|\[ARGS\]"
    r"|</?tool_call>|</?function_call>|</?tool_calls>|<function=[\w.-]{1,64}>|</function>",
    re.IGNORECASE,
)

# -- 3. where the command is ---------------------------------------------------------------------------------------
_ANSWER_TAG = re.compile(r"<\s*(/?)\s*([a-z][a-z_-]{0,30})\s*>", re.IGNORECASE)
_ANSWER_TAG_WORDS = frozenset("command cmd action answer response output move reply input".split())
"""A tag whose name holds one of these words wraps the answer: `<command>`, `<final_answer>`, `<next_command>`."""
_MARKER = re.compile(
    r"^(?:#{1,6}\s+|>\s*|[-=]+>\s*|[-*+•]\s+|\d{1,3}[.)]\s+|\(\d{1,3}\)\s+|[a-z]\)\s+|\[[ x]?\]\s+)", re.IGNORECASE
)
"""A heading, a `>` prompt or quote, an arrow, a bullet, a number or letter, a task-list box: what may precede a
command on its line."""
_BRACKETS = {
    "[": "]",
    "(": ")",
    "{": "}",
    "<": ">",
    "«": "»",
    "‹": "›",
    "【": "】",
    "「": "」",
    "『": "』",
    "〈": "〉",
    "《": "》",
    "⟨": "⟩",
}
"""Pairs that may wrap a whole line (`[open mailbox]`, `<<north>>`, `«take lamp»`): what they hold is the line."""
_SENTINELS = re.compile(
    r"^(?:<\s*[a-z_][\w-]{0,30}\s*>|\[\s*[a-z_][\w-]{0,30}\s*\])(?P<inner>.{0,400}?)"
    r"(?:<\s*(?:/\s*[a-z_][\w-]{0,30}|end[\w-]{0,30})\s*>|\[\s*/\s*[a-z_][\w-]{0,30}\s*\])$",
    re.IGNORECASE,
)
"""A line between an opening tag and a closing one (`</name>`, `[/name]` or an end marker): `<start> look <end>`,
`<cmd>look</cmd>`, `[COMMAND] look [/COMMAND]`. A tag that closes nothing (`go <direction>`, `<north> or <south>`) is
a template's placeholder: no command."""
_COMMAND_LABELS = (
    "command|action|move|answer|reply|response|output|input|cmd|game command|final command|final answer|final action"
    "|next command|next action|next move|my command|my action|my move|my next command|my next action|my answer"
    "|chosen command|chosen action|proposed command|here is my response|here's my response"
)
_INPUT_LABELS = "action input|command input|tool input"
_THOUGHT_LABELS = (
    "thought|thoughts|thinking|reasoning|reason|analysis|rationale|explanation|plan|reflection|notes?"
    "|here is my thought process|here's my thought process"
)
_STOP_LABELS = "observation|result|game response"
"""ReAct stops generating at `Observation:`; whatever a model writes after it is an imagined game response."""
_LABEL = re.compile(
    rf"^[\[*_`]{{0,3}}\s*(?P<label>{_INPUT_LABELS}|{_COMMAND_LABELS}|{_THOUGHT_LABELS}|{_STOP_LABELS})"
    r"\s*(?P<closed>\])?[\]*_`]{0,3}\s*"
    r"(?:(?P<sep>[:=]|[-=]>|>{2,3})|(?P<dash>\s-{1,2}\s)|(?P<stop>\.)(?=[*_\s]|$)|$|(?(closed)(?=\S)|(?!)))"
    r"\s*[*_]{0,3}\s*",
    re.IGNORECASE,
)
"""A label and what separates it from its value: a colon, `=`, an arrow (`->`, `=>`, `>>`; `→` reads as `->`), a
dash between spaces (`—` reads as `-`), a full stop when the label is in emphasis (`**Final answer.** north`), or
the bracket closing a label in brackets (`[ACTION] north`)."""
_LEAD_IN = re.compile(r"^(?P<lead>[^:\"\n]{1,80}?)\s*:(?:[*_]{1,3}(?=\s))?\s+(?=\S)")
_ANNOUNCING = frozenset(
    "command action move answer try choice choose chosen pick do next step final decision decide decided go going "
    "type typing enter entering send sending input execute executing run submit select selected".split()
)
"""Words of a lead-in that announces the command after its colon or in quotes at its end: `Sure! Here's the
command: north`, `Let me try: climb tree`, `The answer is: pray`, `I'll type: take leaflet`, `I'll type "open
mailbox".` (but not `We're in the cellar: dark and damp`, nor `I'd recommend "read leaflet".`)."""
_CHOICE_IN_QUOTES = re.compile(
    r"^(?P<lead>[^\"`\n]{1,120}?)\s(?:\"(?P<double>[^\"\n]{1,100})\"|`(?P<code>[^`\n]{1,100})`"
    r"|'(?P<single>[^'\n]{1,100})'|\*\*(?P<bold>[^*\n]{1,100})\*\*)\s*[.!]?$"
)
"""A sentence ending in one quoted, code or bold span: the span is the command when the lead announces it (a bold
span only right after the announcing word or an `is`: `The final answer is **north**.`, not `Let me pick up the
**lamp**.`)."""
_NAMING_VERBS = frozenset({"is", "was", "be", "remains"})
_PYTHONIC_CALL = re.compile(
    r"\b[a-z_][\w.]{0,40}\(\s*(?:command|action|cmd)\s*=\s*(?:\"([^\"\n]{0,200})\"|'([^'\n]{0,200})')\s*\)",
    re.IGNORECASE,
)
"""Llama 3.2/4's pythonic tool calls: `[send_command(command="north")]`."""
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_THEMATIC_BREAK = re.compile(r"^(?:-\s*){3,}$|^(?:\*\s*){3,}$|^(?:_\s*){3,}$")
"""A markdown rule between parts of an answer (`---`, `***`, `___`): a break, like a blank line."""
_COMMAND_KEYS = ("command", "cmd", "next_command", "game_command", "command_text")
_ACTION_KEYS = ("action", "next_action", "move")
_WRAPPER_KEYS = (
    "action_input",
    "arguments",
    "parameters",
    "args",
    "input",
    "function",
    "function_call",
    "tool_call",
    "tool_calls",
    "tool_input",
    "response",
    "answer",
    "output",
)
"""Keys a tool-call or agent framework nests the command under (LangChain's `action_input`, OpenAI's `arguments`)."""
_THOUGHT_KEYS = ("thought", "thinking", "reasoning", "reason", "rationale", "analysis", "explanation", "plan")
_SPLIT_KEYS = frozenset({"object", "target", "direction", "item", "direct_object", "indirect_object", "noun"})
"""Keys beside `action` that hold part of the command (`{"action": "go", "direction": "north"}`): not one command."""
_SPLIT = object()

# -- 4. the command itself -----------------------------------------------------------------------------------------
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "`"})
_LEADING_SPAN = re.compile(r"^(`+|\*\*|__)(?P<span>[^`*_\n]{1,100}?)\1(?P<rest>.*)$")
"""A command in a code span or bold, followed by commentary: `north` — the forest path."""
_ASIDE = re.compile(r"\s*\([^()]{0,200}\)$")
_WRAPPERS = "*_` "
_TRAILING = ".!;"
_SENTENCE_BREAK = re.compile(r";|&|\|\||\||\s[/+]\s|[-=]>|\s-{1,2}\s|[.!?]\s+(?=[a-z0-9\"'])")
"""Where one line holds two commands, or a command and a sentence: a full stop, semicolon or dash between them, or
a symbol joining them (`&`, `&&`, `|`, `/`, `+`, an arrow)."""
_ARROW = re.compile(r"\s[-=]>\s")
_EXPLANATION_BREAK = re.compile(r"[.!?;]\s+|\s-{1,2}\s")
"""Where a command may end and a sentence about it begin: `open mailbox. This should reveal what's inside.`,
`take lamp - it will light the way` (`—` reads as `-`)."""
_COMMENT = re.compile(r"\s+(?:#|//|<-{1,2})\s.*$")
"""A comment after a command, as in code (`take lamp # light source`, `north // explore`) or pointing back at it
(`north <- the only way out`): no game command has a `#`, `//` or `<-` standing alone between spaces."""
_THEN = re.compile(r"\s*\b(?:and\s+)?then\b\s*")
_AND_OR_COMMA = re.compile(r"\s*(?:,|\band\b|\bor\b)\s*")
_ORDER = re.compile(r"^(?P<who>[a-z0-9][a-z0-9' -]{0,30}?)\s*,\s*(?P<what>\S.*)$")
_QUOTED = re.compile(r'"[^"]*"')
_MARKUP = frozenset("<>{}[]`*")
"""Left over from a tag, JSON or markdown that could not be read: never part of a game command (no corpus step has
one)."""
_INTRANSITIVE = frozenset({"look", "l", "inventory", "i", "wait", "z", "listen", "jump", "sleep", "score", "again"})
_CHAIN_VERBS = (
    TAKE_VERBS
    | HANDING_VERBS
    | ATTACK_VERBS
    | OBSERVATION_VERBS
    | WAIT_VERBS
    | TOPIC_VERBS
    | TRAVEL_VERBS
    | frozenset(
        "open close unlock drop throw push pull turn move climb enter exit eat drink wear remove tie untie show "
        "fill pour dig cut burn break press wave rub shake squeeze kick kiss sit stand follow find use lift raise "
        "unscrew inflate deflate swim cross knock pray buy sell feed hide play blow extinguish douse clean wipe "
        "repair activate mix heat cook empty shoot steer launch dive consult cast memorize".split()
    )
) - {"i", "l", "z", "x"}
"""Verbs that start a second command after `and` or a comma (`open mailbox and take leaflet`). Words that are as
often nouns (`brush`, `light`, `match`, `ring`, `fire`) are left out: `drop key and brush` is one command."""
_COMMAND_OPENERS = (DIRECTION_WORDS | _CHAIN_VERBS | _INTRANSITIVE) - {"i"}
"""Words a sentence after a command may not open with: it would be another command (`I` opens sentences)."""
_PRONOUNS = frozenset({"it", "them", "him", "her", "all"})
_REFUSAL_WORDS = frozenset({"sorry", "apologies", "unfortunately"})
_REFUSALS = (
    "i can't",
    "i cannot",
    "i can not",
    "i won't",
    "i will not",
    "i'm sorry",
    "i am sorry",
    "i apologize",
    "i'm unable",
    "i am unable",
    "i'm not able",
    "i am not able",
    "as an ai",
)
_ACKNOWLEDGEMENTS = frozenset(
    "understood acknowledged noted ok okay sure certainly alright great thanks roger affirmative absolutely".split()
)
_ACKNOWLEDGED = re.compile(rf"^(?:{'|'.join(sorted(_ACKNOWLEDGEMENTS))})[.!,:;]+\s*(?P<rest>\S.*)$")
"""An acknowledgement, a break, then the rest of the line (`OK. north`, `Sure, open mailbox`)."""
_JUNK = frozenset({"null", "none", "nil", "undefined", "n/a", "na", "nan", "true", "false", "tbd", "todo"})
_PROSE_OPENERS = frozenset(
    "i'll i'm i've i'd let let's lets we we'll we're we've you you'll you're the this that these those my our it's "
    "that's there's here's here first next now maybe perhaps probably since because as however based given "
    "considering looking according so therefore thus hence hmm well actually also but to thinking".split()
)
_SUBJECT_OPENERS = frozenset({"i", "a", "an"})
"""Words that open a sentence when more follow (`I should look first`, `A tall tree grows here`), and are a command
alone in some games (`i`, the inventory)."""
_SENTENCE_WORDS = frozenset(
    "would should could will might must can't cannot won't is are was were seems seem leads need needs want wants "
    "think let's we i'm i'll we'll it's that's probably perhaps maybe because since".split()
)
"""Words of a sentence about a command rather than a command (checked outside quoted text and a conversation's
topic): no corpus step has one unless the game's dictionary knows every word of it (cutthroat's `latitude is 25`)."""
PROSE_MIN_WORDS = 4
"""A line of this many words whose first word the game does not know is a sentence (`Nothing to do here but wait`),
as is a shorter one opening with a participle (`Going north.`); shorter ones go to the game, which says what it does
not know (`explore the forest`)."""
_SPEECH_VERBS = frozenset("say answer reply type write shout yell speak sing".split())
"""Verbs whose every following word is what is said or typed (`say 42`, `answer "a well"`)."""
_ASKING_VERBS = frozenset("ask tell talk consult question quiz".split())
"""Verbs whose words after `about` are a topic, which may be any words (`ask gnome about what is behind it`)."""
_REVISION_OPENERS = frozenset(
    "actually instead rather or alternatively otherwise wait hmm no nope but however then next also after "
    "afterwards scratch correction oops either".split()
)
_REVISION_WORDS = frozenset("instead rather better alternatively otherwise".split())
"""A sentence after a command that opens with one of the first words, or holds one of the second, takes it back or
adds another (`north. Actually, east is better.`, `Command: wait. Then north.`): the reply names no one command."""


@dataclass(frozen=True)
class _Reply:
    """The reply being read (what an InvalidReply quotes) and the game's dictionary it is read against."""

    text: str
    dictionary: GameDictionary | None = None

    def fail(self, kind: str, detail: str) -> InvalidReply:
        return InvalidReply(kind, self.text, detail)


def parse_reply(reply: str | None, dictionary: GameDictionary | None = None) -> tuple[str, str]:
    """(thought, command) from a reply in any shape a model writes (see the module's docstring). The command is one
    line of printable ASCII, lower-cased, at most MAX_COMMAND_CHARS long; "" only when a JSON reply gives an empty
    `command` on purpose (a "press a key" pause). The thought is printable text of at most MAX_THOUGHT_CHARS, or "".

    `dictionary`, the words the game's parser knows, decides what a line of words is: every word known (numbers
    too) makes it a command even when it reads like English (`latitude is 25`); a sentence opening with a word the
    game does not know is prose (`Going north.`). Without it (None) only the shapes of the words decide.

    Raises InvalidReply(kind, reply, detail) with kind one of: empty, reasoning_only, no_command, refusal,
    acknowledgement, junk, prose, multiple_commands, too_long, truncated, invalid_characters. Nothing else escapes,
    whatever the text."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    read = _Reply(text, dictionary)
    if not text.strip():
        raise read.fail("empty", "the reply is empty")
    reasoning, answer = split_reasoning(text)
    answer = _spoken(answer)
    if not answer.strip():
        raise read.fail("reasoning_only", "the reply holds only reasoning: end it, then give the command")
    thought, command = _read_answer(answer, read)
    return _thought(thought) or _thought(reasoning, tail=True), command


MAX_NOTE_CHARS = 200
"""A note the agent keeps for the episode, at the most."""


def reply_note(reply: str | None) -> str:
    """The `note` of a JSON reply (what the model says outside its reasoning), printable, on one line, at most
    MAX_NOTE_CHARS; "" when there is none."""
    data = json_object(answer_text(reply[:MAX_REPLY_CHARS])) if isinstance(reply, str) else None
    note = data.get("note") if isinstance(data, dict) else None
    return " ".join(printable(note).split())[:MAX_NOTE_CHARS] if isinstance(note, str) else ""


def parse_command(reply: str | None, dictionary: GameDictionary | None = None) -> str:
    """The single command a reply gives (parse_reply without the thought)."""
    return parse_reply(reply, dictionary)[1]


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, answer) of a reply: the gpt-oss harmony channels, then `<think>`-style blocks. An unclosed block
    runs to the end; a closing tag without its opener (the server put it in the prompt) makes all before it
    reasoning. The answer is what a model says outside its reasoning; it may be empty."""
    harmony = _split_harmony(text)
    if harmony is not None:
        return harmony
    answer_parts: list[str] = []
    reasoning_parts: list[str] = []
    depth, position = 0, 0
    for match in _REASONING_TAG.finditer(text):
        (answer_parts if depth == 0 else reasoning_parts).append(text[position : match.start()])
        closing = bool(match.group(1) or match.group(2) or match.group(3)) or "end" in (
            (match.group(4) or "").lower(),
            (match.group(5) or "").lower(),
        )
        if not closing:
            depth += 1
        elif depth:
            depth -= 1
        else:  # a closer whose opener was in the prompt: everything so far was reasoning
            reasoning_parts += answer_parts
            answer_parts = []
        position = match.end()
    (answer_parts if depth == 0 else reasoning_parts).append(text[position:])
    return "\n".join(reasoning_parts), "".join(answer_parts)


def answer_text(reply: str | None) -> str:
    """What a model says outside its reasoning, without chat-template tokens or an invented next turn (bounded): the
    part of a reply any reader (the critic's verdict, a JSON answer) may use."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    return _spoken(split_reasoning(text)[1])


def _spoken(answer: str) -> str:
    """The answer without chat-template tokens, cut where a model went on to write the user's next turn itself."""
    turn = _NEXT_USER_TURN.search(answer)
    return _TEMPLATE_TOKEN.sub("\n", answer[: turn.start()] if turn else answer)


def _split_harmony(text: str) -> tuple[str, str] | None:
    """(reasoning, answer) of a gpt-oss harmony reply: `final` is the answer (a tool call addressed with `to=` when
    there is no final), `analysis` and the rest reasoning. None when the reply is not in harmony format."""
    headers = list(_HARMONY_HEADER.finditer(text))
    if not headers:
        flat = _HARMONY_FLAT.match(text)
        if flat is None:
            return None
        final = text.rfind(_HARMONY_FLAT_FINAL)
        if final < 0:
            return text[flat.end() :], ""
        return text[flat.end() : final], text[final + len(_HARMONY_FLAT_FINAL) :]
    reasoning, finals, calls = [], [], []
    for number, header in enumerate(headers):
        end = headers[number + 1].start() if number + 1 < len(headers) else len(text)
        body = text[header.end() : end]
        stop = _HARMONY_END.search(body)
        body = body[: stop.start()] if stop else body
        channel = header.group(1).lower()
        if channel == "final":
            finals.append(body)
        elif "to=" in header.group(2):
            calls.append(body)
        else:
            reasoning.append(body)
    return "\n".join(reasoning), finals[-1] if finals else "\n".join(calls)


# -- reading the answer --------------------------------------------------------------------------------------------
def _read_answer(answer: str, reply: _Reply) -> tuple[str, str]:
    """(thought, command) from the answer, by the first of: tags, labelled lines, JSON, a pythonic call, the last
    line."""
    tagged = _tagged(answer)
    if tagged:
        return "", _one([_value_command(value, reply) for value in tagged], reply)
    lines = _Lines(_tables(answer))
    if lines.commands:
        command = _one([_value_command(value, reply) for value in lines.commands], reply)
        _no_other_command(lines.after_command, command, reply)
        return lines.thought, command
    body = "\n".join(lines.body)
    found = _json_reading(body, reply)
    if found is not None:
        return found[0] or lines.thought, found[1]
    call = _PYTHONIC_CALL.search(body)
    if call is not None:
        return lines.thought, _line_command(call.group(1) or call.group(2) or "", reply)
    return lines.thought, _last_line_command(_outside_thought(lines), reply)


def _outside_thought(lines: _Lines) -> list[str]:
    """The lines the command is read from when nothing labels it: the unlabelled body, or the lines under a thought
    label when the body holds nothing but rooms' titles in brackets (`[Kitchen]`, then `Plan: ...`, then the
    command: the title heads the answer, the command ends the plan)."""
    if lines.continued and all(_title(line) is not None for line in lines.body):
        return lines.continued
    return lines.body or lines.continued


def _tagged(answer: str) -> list[str]:
    """The contents of `<command>...</command>`-style tags (XML answers), outermost pairs only."""
    found, opened = [], None
    for match in _ANSWER_TAG.finditer(answer):
        name = match.group(2).lower()
        if not _ANSWER_TAG_WORDS & set(re.split(r"[_-]", name)):
            continue
        if not match.group(1):
            opened = opened or (name, match.end())
        elif opened and opened[0] == name:
            found.append(answer[opened[1] : match.start()])
            opened = None
    return found


class _Lines:
    """The answer's lines sorted by their labels: command values (an `Action Input:` wins over `Action:`, which is
    then the tool's name), thought lines, and the unlabelled body. A thought section runs until a blank line, another
    label, a fence or a line opening JSON or a tag; nothing is read after a ReAct `Observation:`."""

    def __init__(self, answer: str):
        labelled: dict[str, list[str]] = {"input": [], "command": []}
        thoughts: list[str] = []
        self.body: list[str] = []
        self.continued: list[str] = []
        """Lines under a thought label: the command's last resort (`Thought: ...` then the command on its own line)."""
        self.after_command: list[str] = []
        """Unlabelled lines after the last labelled command: a command there is a second one (`Next: light the
        lamp.` then `north`), though a sentence about the first is not."""
        pending, in_thought = "", False
        for raw in answer.splitlines():
            line = raw.strip()
            separator = bool(_FENCE.match(line) or _THEMATIC_BREAK.match(line))
            if not line or separator or line.startswith(("{", "<", "[")):
                in_thought = False
                if line and not separator:
                    self.body.append(line)
                continue
            kind, value = _label(line)
            if kind == "stop":
                break
            if kind == "thought":
                in_thought, pending = True, ""
                thoughts.append(value)
            elif kind:
                in_thought, pending = False, "" if value else kind
                if value:
                    labelled[kind].append(value)
                if kind in labelled:
                    self.after_command = []
            elif pending:
                labelled[pending].append(line)
                pending = ""
            elif in_thought:
                thoughts.append(line)
                self.continued.append(line)
            else:
                self.body.append(line)
                self.after_command.append(line)
        self.commands = labelled["input"] or labelled["command"]
        self.thought = " ".join(t for t in thoughts if t)


MAX_TABLE_COLUMNS = 8
"""Header cells of a markdown table looked at for a command column."""
_TABLE_RULE = re.compile(r"^\|?\s*:?-{1,40}:?\s*(?:\|\s*:?-{1,40}:?\s*){0,20}\|?$")


def _tables(answer: str) -> str:
    """The answer with each markdown table whose header names a command column (`| Step | Command |`) written as
    one `Command: <cell>` line per row; other tables stay as they are."""
    lines = answer.splitlines()
    if not any(_TABLE_RULE.match(line.strip()) and "-" in line for line in lines):
        return answer
    out: list[str] = []
    position = 0
    while position < len(lines):
        rule = position + 1
        if (
            rule < len(lines)
            and lines[position].strip().startswith("|")
            and "-" in lines[rule]
            and _TABLE_RULE.match(lines[rule].strip())
        ):
            header = _cells(lines[position])[:MAX_TABLE_COLUMNS]
            column = next((i for i, cell in enumerate(header) if _label(f"{cell}:")[0] in ("command", "input")), None)
            if column is not None:
                end = rule + 1
                while end < len(lines) and lines[end].strip().startswith("|"):
                    end += 1
                rows = [_cells(row) for row in lines[rule + 1 : end]]
                out += [f"Command: {cells[column]}" for cells in rows if len(cells) > column]
                position = end
                continue
        out.append(lines[position])
        position += 1
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _label(line: str) -> tuple[str, str]:
    """(kind, value) of a labelled line: kind is command, input, thought or stop ("" when unlabelled). A label alone
    on its line counts only as a heading or in emphasis (`### Command`, `**Action**`): a bare `reply` is a command."""
    stripped = _strip_markers(line)
    match = _LABEL.match(stripped)
    if match is not None and match.group("stop") and stripped[0] not in "*_":
        match = None  # `Move. Then north.`: a full stop ends a label only in emphasis
    if match is None:
        lead_in = _LEAD_IN.match(stripped)
        if lead_in and not stripped.startswith("'") and _ANNOUNCING & set(_words(lead_in.group("lead"))):
            return "command", stripped[lead_in.end() :].strip()
        return "", ""
    value = stripped[match.end() :].strip()
    label = " ".join(match.group("label").lower().split())
    bracketed = match.group("closed") and stripped[0] == "["
    if not (
        match.group("sep") or match.group("dash") or bracketed or line.lstrip().startswith("#") or stripped[0] in "*_"
    ):
        return "", ""
    if re.fullmatch(_THOUGHT_LABELS, label):
        return "thought", value
    if re.fullmatch(_STOP_LABELS, label):
        return "stop", ""
    return ("input" if re.fullmatch(_INPUT_LABELS, label) else "command"), value


def _words(text: str) -> list[str]:
    return [word.strip(",.!?*_`") for word in text.lower().split()]


def _value_command(value: str, reply: _Reply) -> str:
    """The command in a label's or tag's value: JSON inside it, else its one line."""
    if "{" in value:
        found = _json_reading(value, reply)
        if found is not None:
            return found[1]
    return _last_line_command([line.strip() for line in value.splitlines() if line.strip()], reply)


def _last_line_command(lines: list[str], reply: _Reply) -> str:
    """The command of the last line, when no other line is a different command: the reasoning-then-answer shape.
    When the last line is no command, the last line that is one, if every line after it is a sentence about it
    (`move rug` then `This may reveal a trap door.`)."""
    lines = [line for line in lines if not _FENCE.match(line)]
    if not lines:
        raise reply.fail("no_command", "the reply names no command")
    try:
        command = _line_command(lines[-1], reply)
    except InvalidReply:
        explained = _command_before_commentary(lines, reply)
        if explained is None:
            raise
        return explained
    _no_other_command(lines[:-1], command, reply)
    return command


def _command_before_commentary(lines: list[str], reply: _Reply) -> str | None:
    """The command of the last line that holds one, when every line after it only comments on it (or is a room's
    title in brackets); else None."""
    for index in range(len(lines) - 2, -1, -1):
        try:
            command = _line_command(lines[index], reply)
        except InvalidReply:
            continue
        if not all(_title(line) or _is_commentary(_unwrap(line), reply) for line in lines[index + 1 :]):
            return None
        _no_other_command(lines[:index], command, reply)
        return command
    return None


def _no_other_command(lines: list[str], command: str, reply: _Reply) -> None:
    """InvalidReply when one of `lines` holds a command other than `command` (a room's title in brackets holds
    none; `open the mailbox` and `open mailbox` are one command)."""
    for line in lines:
        if _title(line) is not None:
            continue
        try:
            other = _line_command(line, reply)
        except InvalidReply:
            continue  # a lead-in, a sentence, an acknowledgement
        if canonical_command(other) != canonical_command(command):
            raise reply.fail("multiple_commands", "several lines hold different commands; reply with one on one line")


_TITLE_JOINERS = frozenset("of a an the in on at to by for and with from into under near over behind beyond".split())
_TITLE_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]{0,30}")
MAX_TITLE_WORDS = 8
_TITLE_MARKS = re.compile(r"^(?:[>#]+[ \t]*)+")
"""A `>` prompt or a heading's marks before a title (`> [West of House]`, `## [Kitchen]`)."""


def _title(line: str) -> list[str] | None:
    """The words of a room's title as a game prints it, set in brackets on a line of its own (`[West of House]`,
    `(Behind House)`), a heading a model echoes before its plan and command; else None. A title is in title case
    (every word capitalised but short joining words such as `of` and `a`), opens with no verb (`[Open Mailbox]` is a
    command) and is not a lone direction (`[North]`); a line in capitals (`[OPEN MAILBOX]`) is a command.

    Before the command a title is never another command. Alone it is no command only when a joining word in lower
    case marks it as a title (`[West of House]`, `[Up a Tree]`): a title-cased command of a verb no list here holds
    (`[Light Lamp]`, a spell's `[Gnusto Rezrov]`) reads as one."""
    text = _TITLE_MARKS.sub("", _plain(line.strip())).strip("*_ \t")
    closer = _BRACKETS.get(text[:1])
    if closer is None or text[:1] in "{<" or len(text) < 3 or not text.endswith(closer):
        return None
    inner = text[1:-1].strip()
    words = inner.split()
    if not words or len(words) > MAX_TITLE_WORDS or inner.isupper() or not words[0][:1].isupper():
        return None
    if not all(_TITLE_WORD.fullmatch(word) for word in words):
        return None
    if not all(word[:1].isupper() or word[:1].isdigit() or word in _TITLE_JOINERS for word in words[1:]):
        return None
    first = words[0].lower()
    verbs = _CHAIN_VERBS | _INTRANSITIVE | _SPEECH_VERBS | _ASKING_VERBS | {"x", "l", "i", "z", "g"}
    if first in verbs or (len(words) == 1 and direction_of(first) is not None):
        return None
    return words


def _one(commands: list[str], reply: _Reply) -> str:
    if len(set(commands)) > 1:
        raise reply.fail("multiple_commands", "several different commands; give one (the next can follow)")
    return commands[0]


# -- JSON ----------------------------------------------------------------------------------------------------------
def _json_reading(text: str, reply: _Reply) -> tuple[str, str] | None:
    """(thought, command) from the JSON values in `text`; None when none of them is a reply object, or when every
    command in them is one a sentence turns down (`I could answer {"command": "north"} but ...`: see
    `_turned_down`). An explicit empty `command` is the empty command. An object the reply ends in before its
    closing brace is read for its whole keys (see `_json_found`); when the command is not among them, the reply is
    a truncated one."""
    found = _json_found(text)
    named = [value for value in found if value.commands]
    cut = next((value for value in found if value.tail is not None), None)
    if cut is not None and not named and (cut.is_reply or _names_reply_key(cut.tail or "")):
        raise reply.fail("truncated", "the reply ends inside its JSON, before the command is whole: give it all")
    meant = [value for value in named if not value.turned_down]
    if named and not meant:
        return None  # every command in the JSON is one the reply turns down: read it as text
    meant = _standing_alone(meant)
    commands = [command for value in meant for command in value.commands]
    thought = next((value.thought for value in meant + found if value.thought), "")
    if not commands:
        if any(value.is_reply for value in found):
            raise reply.fail("no_command", 'the JSON has no string "command"; put the command there')
        return None
    read = []
    for raw in commands:
        if raw is _SPLIT:
            raise reply.fail("no_command", 'the command is split over several keys: give it in "command"')
        if not isinstance(raw, str):
            raise reply.fail("no_command", 'the JSON "command" is not a string')
        read.append("" if not raw.strip() else _value_command(raw, reply))
    return _thought(thought), _one(read, reply)


@dataclass(frozen=True)
class _Found:
    """What one JSON value in a reply holds: its command values, thought, whether it is a reply object, whether the
    sentence it sits in turns it down, and (for an object the reply ends in) what follows its last whole key."""

    commands: list[object]
    thought: str
    is_reply: bool
    turned_down: bool
    tail: str | None
    in_sentence: bool = False
    """It sits in a sentence (`My first idea was {...}, but that failed.`, see `_in_sentence`): quoted in reasoning,
    not given as the answer."""


def _standing_alone(values: list[_Found]) -> list[_Found]:
    """Of JSON values naming different commands, the ones after the last quoted inside a sentence, when they stand
    on their own lines and agree on one command: a line of reasoning that quotes a JSON command and moves on from
    it, then the answer. Otherwise `values` as they are: different answers given alike, or a sentence after the
    answer that names another (`Actually, I prefer {...}`), are several commands."""
    if len({repr(value.commands) for value in values}) < 2:
        return values
    last_quoted = max((index for index, value in enumerate(values) if value.in_sentence), default=-1)
    after = values[last_quoted + 1 :]
    if last_quoted < 0 or not after or len({repr(value.commands) for value in after}) > 1:
        return values
    return after


def _json_found(text: str) -> list[_Found]:
    """What the JSON values in `text` hold, left to right. An object the text ends in before its closing brace
    counts only when no whole value inside it names a command (`{"id": 1, "arguments": {"command": "north"}, "no`
    is read by its whole `arguments`); then the whole values inside it do not count."""
    spans = list(_json_spans(text, cut=True))
    if spans and spans[-1].tail is not None:
        cut = spans[-1]
        inside = [span for span in spans[:-1] if span.start > cut.start]
        if any(_commands_in(span.value, 0)[0] for span in inside):
            spans = spans[:-1]
        else:
            spans = [span for span in spans[:-1] if span.start < cut.start] + [cut]
    found: list[_Found] = []
    previous_end, turned_down = -1, False
    for span in spans:
        commands, thought, is_reply = _commands_in(span.value, 0)
        if previous_end < 0 or _ALTERNATIVE.fullmatch(text[previous_end : span.start]) is None:
            turned_down = _turned_down(text, span.start)  # else `I could answer {...} or {...}`: the same sentence
        found.append(_Found(commands, thought, is_reply, turned_down, span.tail, _in_sentence(text, span)))
        previous_end = span.end
    return found


_WORD = re.compile(r"[A-Za-z]{2}")


def _in_sentence(text: str, span: _Span) -> bool:
    """Words stand on the JSON value's line after it (`{...} was a dead end`), or before it other than a label
    (`My first idea was {...}`; not `Command: {...}`)."""
    before = _line_before(text, span.start).strip()
    if _WORD.search(_line_after(text, span.end)):
        return True
    return bool(_WORD.search(before)) and _label(before)[0] not in ("command", "input")


def _line_before(text: str, start: int) -> str:
    return text[text.rfind("\n", 0, start) + 1 : start]


def _line_after(text: str, end: int) -> str:
    line_end = text.find("\n", end)
    return text[end : len(text) if line_end < 0 else line_end]


_CLAUSE_BREAK = re.compile(r"\n|[.!?;:,](?:\s|$)|[}\]]|\b(?:but|so|however|then|and|now)\b")
"""Where the clause holding a JSON value begins: a line, a sentence, a colon, a comma, an earlier value, or a word
opening a new clause (`... but the door is boarded, so instead:`)."""
_TURNING_DOWN = re.compile(
    r"\b(?:could|might|not|never|avoid|skip|considered|instead of|rather than|other than)\b|n't\b"
)
"""Words that put a command in a sentence as one not chosen: `I could answer`, `rather than`, `instead of`, `not`,
`won't send`."""
_ALTERNATIVE = re.compile(r"\s{0,8},?\s{0,8}(?:or|and|nor|/)\s{0,8}")
"""What joins two JSON values named together (`{...} or {...}`): the second is turned down when the first is (a
comma alone does not: `Rather than {...}, {...}`)."""
TURNING_DOWN_WORDS = 4
"""How near the JSON value the turning-down word must be, in words: `I could answer with {...}`, not a `not` earlier in
a sentence that commits to it."""


def _turned_down(text: str, start: int) -> bool:
    """The JSON value at `start` sits in a sentence that names it only to turn it down: one of its last
    TURNING_DOWN_WORDS words before the value is `could`, `might`, `not` (or `-n't`), `instead of`, `rather than`..."""
    lead = _CLAUSE_BREAK.split(text[max(0, start - 200) : start].lower())[-1]
    words = lead.translate(_QUOTES).split()[-TURNING_DOWN_WORDS:]
    return bool(words) and _TURNING_DOWN.search(" ".join(words)) is not None


_KEY_IN_TEXT = re.compile(r"[\"']([^\"'\n:]{1,40})[\"']\s*:")


def _names_reply_key(text: str) -> bool:
    """`text` (the unread end of a cut JSON object) holds a key of a reply: the command, or the thought before it."""
    keys = (_key(match.group(1)) for match in _KEY_IN_TEXT.finditer(text[:4000].translate(_QUOTES)))
    return any(key in (*_COMMAND_KEYS, *_ACTION_KEYS, *_THOUGHT_KEYS) or _is_command_key(key) for key in keys)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _key(key: object) -> str:
    """A JSON key as lower-case words joined by `_`: `Next Command`, `next-command` and `nextCommand` are
    `next_command`."""
    if not isinstance(key, str):
        return ""
    return "_".join(_CAMEL.sub(" ", key[:60]).strip().lower().replace("-", " ").replace("_", " ").split())


_COMMAND_KEY_WORDS = frozenset({"command", "cmd"})
_NOT_COMMAND_KEY_WORDS = frozenset(
    {*_THOUGHT_KEYS, "why", "note", "notes", "comment", "description", "type", "id", "name", "count", "history"}
    | {"previous", "last", "prior", "past", "tried", "failed", "rejected", "alternative", "alternatives"}
)


def _is_command_key(key: str) -> bool:
    """A key other than the usual ones that holds the command: one of its words says so (`final_command`,
    `command_to_execute`) and none says it holds something else (`command_reason`)."""
    words = set(key.split("_"))
    return bool(words & _COMMAND_KEY_WORDS) and not words & _NOT_COMMAND_KEY_WORDS


def _commands_in(value: object, depth: int) -> tuple[list[object], str, bool]:
    """(command values, thought, whether it is a reply object) found in a decoded JSON value: the command keys, the
    keys tool calls nest it under (`arguments` may be a JSON string), then `action`, then any other key naming a
    command, then objects nested under any other key (`{"result": {"command": ...}}`)."""
    if depth > MAX_JSON_DEPTH:
        return [], "", False
    if isinstance(value, list):  # a list of tool calls or replies; its bare strings are no commands
        found, thought, is_reply = [], "", False
        for item in value[:8]:
            item_found, item_thought, item_reply = _commands_in(item, depth + 1)
            found, thought, is_reply = found + item_found, thought or item_thought, is_reply or item_reply
        return found, thought, is_reply
    if not isinstance(value, dict):
        return [], "", False
    keys = {_key(k): v for k, v in list(value.items())[:32]}
    thought = next((v for k in _THOUGHT_KEYS if isinstance(v := keys.get(k), str)), "")
    is_reply = any(k in keys for k in (*_COMMAND_KEYS, *_ACTION_KEYS, *_THOUGHT_KEYS))
    for key in _COMMAND_KEYS:
        if key in keys:
            return _nested(keys[key], depth), thought, True
    for key in _WRAPPER_KEYS:
        inner = keys.get(key)
        if isinstance(inner, str):  # `"arguments": "{\"command\": ...}"`, or LangChain's `"action_input": "north"`
            decoded = next(_json_values(inner), None) if inner.lstrip().startswith("{") else None
            if decoded is None:
                return [inner], thought, True
            inner = decoded
        if inner is not None:
            found, inner_thought, inner_reply = _commands_in(inner, depth + 1)
            if found or inner_reply:
                return found, thought or inner_thought, True
    for key in _ACTION_KEYS:
        if key in keys:
            if _SPLIT_KEYS & keys.keys():
                return [_SPLIT], thought, True
            return _nested(keys[key], depth), thought, True
    named = [keys[key] for key in keys if _is_command_key(key)]
    if named:
        return [command for value in named for command in _nested(value, depth)], thought, True
    for inner in keys.values():
        if isinstance(inner, (dict, list)):
            found, inner_thought, inner_reply = _commands_in(inner, depth + 1)
            if found:
                return found, thought or inner_thought, True
    return [], thought, is_reply


_TEXT_KEYS = ("text", "value", "content", "input")
"""Keys of an object that holds a command as its text (`{"command": {"text": "take scarab"}}`)."""


def _nested(command: object, depth: int) -> list[object]:
    """A command key's value: a string, a list of them, or an object holding one."""
    if isinstance(command, list):
        return [item for item in command[:8] if isinstance(item, str)] or _commands_in(command, depth + 1)[0] or [None]
    if isinstance(command, dict):
        found = _commands_in(command, depth + 1)[0]
        if not found:
            keys = {_key(k): v for k, v in list(command.items())[:32]}
            found = [keys[key] for key in _TEXT_KEYS if isinstance(keys.get(key), str)][:1]
        return found or [None]
    return [command]


def json_object(reply: str | None) -> dict[str, Any] | None:
    """The first JSON object in `reply` (prose or a code fence around it is fine; trailing commas, comments, line
    breaks inside strings and Python dicts are read too); None when there is none. Bounded: see `_json_values`."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    return next((value for value in _json_values(text, "{") if isinstance(value, dict)), None)


def _json_values(text: str, openers: str = "{[") -> Iterator[Any]:
    """The JSON objects (and arrays) in `text`, left to right, not those nested in one already found (see
    `_json_spans`)."""
    return (span.value for span in _json_spans(text, openers))


@dataclass(frozen=True)
class _Span:
    """A JSON value found in a text: where it starts and ends, and, for an object the text ended in before its
    closing brace, what follows its last whole key (None for a whole value)."""

    start: int
    end: int
    value: Any
    tail: str | None = None


MAX_CUT_POINTS = 16
"""Places a cut JSON object is tried closed at (the last ones): bounds the work on a cut reply full of commas."""


def _json_spans(text: str, openers: str = "{[", cut: bool = False) -> Iterator[_Span]:
    """The JSON objects (and arrays) in `text`, left to right, not those nested in one already found; with `cut`, an
    object the text ends in before its closing brace too, last (its whole keys, see `_cut_object`).

    Bounded on purpose: at most MAX_REPLY_CHARS are read and at most MAX_JSON_ATTEMPTS openers are tried, so a reply
    of nothing but brackets costs little. Each try decodes one value from its opener (never a greedy regex from the
    first `{` to the last `}`, which is quadratic), taking raw line breaks and tabs inside strings; when that
    fails, the balanced span (at most MAX_JSON_DEPTH deep, comments skipped) is read as a Python literal after
    `true`/`false`/`null` are mapped and `//` and `/* */` comments dropped, so single quotes, trailing commas,
    comments and unquoted keys pass; when that fails too, the same again with typographic quotes that delimit
    strings made straight (`{“command”: “north”}`, see `_straightened`). Nesting too deep for the decoder
    (RecursionError) or an integer too long to convert (ValueError) just make that try fail."""
    text = text[:MAX_REPLY_CHARS]
    straight = _straightened(text)  # as long as `text`: a place in one is the same place in the other
    decoder = json.JSONDecoder(strict=False)
    position, unclosed = 0, -1
    for _ in range(MAX_JSON_ATTEMPTS):
        start = min((i for i in (text.find(o, position) for o in openers) if i >= 0), default=-1)
        if start < 0:
            break
        value, end = _decode(text, start, decoder)
        if not isinstance(value, (dict, list)) and straight != text:
            value, end = _decode(straight, start, decoder)
        if isinstance(value, (dict, list)):
            yield _Span(start, end, value)
            position = end
            continue
        if unclosed < 0 and text[start] == "{" and _balanced_end(straight, start) == -1:
            unclosed = start  # the first object never closed: every later opener is inside it
        position = start + 1
    if cut and unclosed >= 0:  # last: the whole values found after it are inside it
        yield _Span(unclosed, len(text), *_cut_object(straight, unclosed))


_TYPOGRAPHIC_OPENING = re.compile(r"([{\[,:]\s{0,8})([“”„‘’‚])")
_TYPOGRAPHIC_CLOSING = re.compile(r"([“”„‘’‚])(\s{0,8}(?:[:,}\]]|$))")
_STRAIGHT = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "‚": "'"})


def _straightened(text: str) -> str:
    """`text` with the typographic quotes that delimit JSON strings made straight: those after a brace, a bracket, a
    comma or a colon, and those before one (`{“command”: “north”}`, `{‘command’: ‘north’}`). An apostrophe within a
    word (`it’s`) stays as it is. Of the same length as `text`."""
    if not any(quote in text for quote in "“”„‘’‚"):
        return text
    text = _TYPOGRAPHIC_OPENING.sub(lambda m: m.group(1) + m.group(2).translate(_STRAIGHT), text)
    return _TYPOGRAPHIC_CLOSING.sub(lambda m: m.group(1).translate(_STRAIGHT) + m.group(2), text)


def _decode(text: str, start: int, decoder: json.JSONDecoder) -> tuple[Any, int]:
    try:
        return decoder.raw_decode(text, start)
    except (ValueError, RecursionError):
        pass
    end = _balanced_end(text, start)
    if end < 0:
        return None, start
    return _literal(text[start:end]), end


def _literal(span: str) -> Any:
    """The value of a JSON-ish span read as a Python literal (see `_python_literal`), or None."""
    try:
        return ast.literal_eval(_python_literal(span))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _cut_object(text: str, start: int) -> tuple[dict, str]:
    """(its whole keys, what follows them) of the object opening at `start` that the text ends in before its
    closing brace (a reply cut by the token limit, or a model that forgot the brace). The object is tried closed at
    its end and after each of its last commas, latest first: a string the text ends in (a cut value) is never
    closed, and neither is a list (its items may go on). ({}, all of it) when no key is whole."""
    cuts: list[tuple[int, str]] = []
    _balanced_end(text, start, cuts)
    decoder = json.JSONDecoder(strict=False)
    for index, closers in reversed(cuts):
        closed = f"{text[start:index]}\n{closers}"  # on a line of their own: not in a `//` comment
        try:
            value = decoder.decode(closed)
        except (ValueError, RecursionError):
            value = _literal(closed)
        if isinstance(value, dict):
            return value, text[index:]
    return {}, text[start:]


_STRUCTURE = re.compile(r"[{}\[\]\"'\\/,]")


def _balanced_end(text: str, start: int, cuts: list[tuple[int, str]] | None = None) -> int:
    """The index after the bracket closing the one at `start` (strings of either quote and `//`, `/* */` comments
    skipped); -1 when the text ends first, -2 when the value nests deeper than MAX_JSON_DEPTH. When the text ends
    first and `cuts` is given, it gets the last MAX_CUT_POINTS places the value could be closed at, outside strings
    and lists (each comma, and the end), each with the brackets that would close it there."""
    closers: list[str] = []
    quote, position = "", start
    while (match := _STRUCTURE.search(text, position)) is not None:
        char, position = match.group(), match.end()
        if quote:
            if char == "\\":
                position += 1  # the escaped character
            elif char == quote:
                quote = ""
            continue
        if char == "/":
            following = text[position : position + 1]
            if following == "/":
                newline = text.find("\n", position)
                position = len(text) if newline < 0 else newline
            elif following == "*":
                closing = text.find("*/", position + 1)
                position = len(text) if closing < 0 else closing + 2
        elif char in "\"'":
            quote = char
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
            if len(closers) > MAX_JSON_DEPTH:
                return -2
        elif char in "}]":
            closers.pop()
            if not closers:
                return match.end()
        elif char == "," and cuts is not None and "]" not in closers:
            cuts[:] = [*cuts[-MAX_CUT_POINTS + 1 :], (match.start(), "".join(reversed(closers)))]
    if cuts is not None and not quote and closers and "]" not in closers:
        cuts.append((len(text), "".join(reversed(closers))))
    return -1


_LITERAL_TOKEN = re.compile(
    r"\"(?:[^\"\\]|\\.){0,4000}\"|'(?:[^'\\]|\\.){0,4000}'|//[^\n]{0,4000}|/\*(?:[^*]|\*(?!/)){0,4000}\*/"
    r"|(?<![\w.])([A-Za-z_][\w-]{0,40})(\s*:)?"
)
_PYTHON_NAMES = {"true": "True", "false": "False", "null": "None", "True": "True", "False": "False", "None": "None"}
_RAW_IN_STRING = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _python_literal(span: str) -> str:
    """A JSON-ish span as Python literal syntax: `true`/`false`/`null` mapped, bare keys (`{command: "n"}`) quoted,
    comments dropped, raw line breaks and tabs inside strings escaped. Other bare words stay bare, so the span is no
    literal (`[redacted]` is no list of text)."""

    def token(match: re.Match) -> str:
        text, word, colon = match.group(), match.group(1), match.group(2)
        if word is None:
            return " " if text.startswith("/") else text.translate(_RAW_IN_STRING)
        if colon:
            return f'"{word}"{colon}'
        return _PYTHON_NAMES.get(word, word)

    return _LITERAL_TOKEN.sub(token, span)


# -- one command ---------------------------------------------------------------------------------------------------
def _line_command(line: str, reply: _Reply) -> str:
    """The command one line holds, unwrapped and checked; InvalidReply saying why there is none. A line that fails
    as a whole may still hold one command: followed by a sentence about it, or quoted at the end of a sentence
    announcing it."""
    title = _title(line)
    if title is not None and any(word in _TITLE_JOINERS for word in title):
        raise reply.fail("no_command", "a room's title in brackets is no command: give the command on its own line")
    command = _unwrap(line)
    if '"' not in command:  # said words may hold anything
        command = _COMMENT.sub("", command)
    if not command:
        raise reply.fail("empty", "no command after removing labels, quotes and markup")
    try:
        _check(command, reply)
    except InvalidReply as refused:
        acknowledged = _ACKNOWLEDGED.match(command) if refused.kind == "acknowledgement" else None
        if acknowledged is not None:
            return _line_command(acknowledged.group("rest"), reply)  # `OK. north`: the command after the nod
        if refused.kind not in ("prose", "multiple_commands", "invalid_characters"):
            raise
        found = _explained(command, reply) or _quoted_choice(line, reply)
        if found is None:
            raise
        return found
    return command


def _explained(command: str, reply: _Reply) -> str | None:
    """`open mailbox. this should reveal what's inside`: the command before the first break when what follows only
    comments on it (see `_is_commentary`); else None."""
    parts = _EXPLANATION_BREAK.split(command, maxsplit=1)
    if len(parts) != 2:
        return None
    head = _unwrap(parts[0])
    if not head or not _is_commentary(parts[1], reply):
        return None
    if reply.dictionary is not None and not _known_opening(head, reply.dictionary):
        return None  # `Still dark here. Need a light.`: a sentence, not a command the game reads and a comment
    try:
        _check(head, reply)
    except InvalidReply:
        return None
    return head


def _is_commentary(text: str, reply: _Reply) -> bool:
    """`text` (unwrapped, lower-case) is sentences about a command, not another command: each reads as prose,
    none quotes a command, opens with a word that takes the command back or adds another (`actually`, `or`, `then`)
    or holds one that prefers another (`instead`, `better`)."""
    if not text.strip(" .!?") or any(mark in text for mark in '"`'):
        return False
    for sentence in re.split(r"[.!?;]\s+|\s-{1,2}\s", text):
        words = _words(sentence)
        if not words or words[0] in _REVISION_OPENERS or _REVISION_WORDS & set(words):
            return False
        if words[0] in _COMMAND_OPENERS:
            return False  # `north. east is where i want to go`: it opens as another command
        if not _reads_as_prose(sentence.strip(" .!?"), reply.dictionary):
            return False
    return True


def _quoted_choice(line: str, reply: _Reply) -> str | None:
    """The command quoted or in a code span at the end of a sentence that announces it (`I'll type "open
    mailbox".`, `Let's try \\`climb tree\\`.`); else None."""
    text = _strip_markers(line.translate(_QUOTES).strip())
    kind, value = _label(text)
    text = value if kind in ("command", "input") else text
    match = _CHOICE_IN_QUOTES.match(text.strip())
    if match is None or not _ANNOUNCING & set(lead := _words(match.group("lead"))):
        return None
    if match.group("bold") and lead[-1] not in _ANNOUNCING | _NAMING_VERBS:
        return None  # bold marks a word as often as a command: `Let me pick up the **lamp**.`
    command = _unwrap(match.group("double") or match.group("code") or match.group("single") or match.group("bold"))
    if not command:
        return None
    try:
        _check(command, reply)
    except InvalidReply:
        return None
    return command


_FULL_WIDTH = range(0xFF01, 0xFF5F)
_IDEOGRAPHIC = {"\u3000": " ", "。": ".", "、": ","}


def _is_decoration(char: str) -> bool:
    """A character no game command holds and that only decorates a line: a non-ASCII symbol, dash, bullet, emoji,
    arrow, space or format mark (emoji variation selectors and joiners, keycaps). Control characters, lone
    surrogates, private or unassigned code points and the replacement character (text that could not be decoded)
    are no decoration: a reply holding them is refused."""
    if char.isascii() or char == "\ufffd":
        return False
    category = unicodedata.category(char)
    return category[0] == "S" or category in ("Zs", "Pd", "Po", "Mn", "Me", "Cf")


def _is_arrow(char: str) -> bool:
    """An arrow symbol (`→`, `➜`, `⇒`, `▶`), not a quotation mark shaped like one (`»`)."""
    name = unicodedata.name(char, "")
    return unicodedata.category(char) in ("Sm", "So") and ("ARROW" in name or "RIGHT-POINTING" in name)


def _plain(line: str) -> str:
    """`line` in plain ASCII marks: decorations around it dropped (`🧭 north`, `• north`, `north 📬`), full-width
    forms made ASCII (`Command：north`), dashes within it read as `-` and arrows as `->` (so a label's arrow or a
    dash before a comment is seen as one), other decorations within it as spaces."""
    start, end = 0, len(line)
    while start < end and (line[start].isspace() or _is_decoration(line[start])):
        start += 1
    while end > start and (line[end - 1].isspace() or _is_decoration(line[end - 1])):
        end -= 1
    if line[start:end].isascii():
        return line[start:end]
    out = []
    for char in line[start:end]:
        if char.isascii():
            out.append(char)
        elif ord(char) in _FULL_WIDTH:
            out.append(chr(ord(char) - 0xFEE0))
        elif char in _IDEOGRAPHIC:
            out.append(_IDEOGRAPHIC[char])
        elif unicodedata.category(char) == "Pd":
            out.append("-")
        elif _is_arrow(char):
            out.append("->")
        elif _is_decoration(char):
            out.append(" ")
        else:
            out.append(char)
    return "".join(out)


def _strip_markers(line: str) -> str:
    """`line` without decorations, leading headings, `>` prompts or quotes, bullets and numbers, nor brackets or
    tags wrapping all of it (any of them, in any order)."""
    for _ in range(6):
        stripped = _unwrap_brackets(_MARKER.sub("", _plain(line), count=1).strip())
        if stripped == line:
            break
        line = stripped
    return line


def _unwrap_brackets(line: str) -> str:
    """What a pair of brackets or two tags around all of `line` hold (`[open mailbox]`, `<start> look <end>`);
    `line` itself when nothing wraps it, or when the brackets appear inside too (`[north] [east]`)."""
    sentinels = _SENTINELS.match(line)
    if sentinels is not None and sentinels.group("inner").strip():
        return sentinels.group("inner").strip()
    opener = line[:1]
    closer = _BRACKETS.get(opener)
    if closer is None:
        return line
    depth = min(len(line) - len(line.lstrip(opener)), len(line) - len(line.rstrip(closer)), 3)
    inner = line[depth:-depth] if depth and len(line) > 2 * depth else ""
    if inner.strip() and opener not in inner and closer not in inner:
        return inner.strip()
    return line


def _unwrap(line: str) -> str:
    """`line` without markers, a label, emphasis, code spans, wrapping quotes or brackets, a trailing aside or full
    stop, lower-cased, with every run of whitespace made one space: possibly empty."""
    line = _strip_markers(line.translate(_QUOTES).strip())
    kind, value = _label(line)
    if kind in ("command", "input"):
        line = _strip_markers(value)
    span = _LEADING_SPAN.match(line)
    if span and span.group("rest").strip() and "`" not in span.group("rest") and "**" not in span.group("rest"):
        line = span.group("span")  # `north` — to explore: the span is the command, the rest commentary
    for _ in range(4):
        before = line
        line = _ASIDE.sub("", line).strip().rstrip(_TRAILING).strip(_WRAPPERS)
        if len(line) >= 2 and line[0] == line[-1] and line[0] in "\"'" and line.count(line[0]) == 2:
            line = line[1:-1]
        line = _unwrap_brackets(line)
        if line == before:
            break
    return " ".join(line.lower().split())


def _check(command: str, reply: _Reply) -> None:
    """InvalidReply unless `command` is one game command a player could have typed."""
    words = command.split()
    first = words[0].strip(",.!:")
    if command.startswith(_REFUSALS) or first in _REFUSAL_WORDS:
        raise reply.fail("refusal", "this is a text adventure: reply with a game command")
    if first in _ACKNOWLEDGEMENTS:
        raise reply.fail("acknowledgement", "no command given: reply with the game command itself")
    if command in _JUNK or not any(c.isalnum() for c in command):
        raise reply.fail("junk", "no command given: reply with a game command such as: look")
    if len(command) > MAX_COMMAND_CHARS or len(words) > MAX_COMMAND_WORDS:
        raise reply.fail("too_long", f"{len(command)} characters; a command is a few words")
    unusable = why_invalid(command)  # the characters the emulator cannot take (session.commands, the last guard)
    if unusable is not None:
        raise reply.fail("invalid_characters", f"the command {unusable}")
    if _MARKUP & set(_ARROW.sub(" ", command)):  # an arrow between two commands is two commands (below)
        raise reply.fail("invalid_characters", "markup (a tag, a bracket, a backtick or *) is left in it")
    if ": " in _QUOTED.sub("", command):
        raise reply.fail("prose", "a label or a lead-in is left in it: give the command alone")
    if command.endswith("-") or command.count('"') % 2:
        raise reply.fail("truncated", "the command ends mid-word or leaves a quote open")
    outside = _QUOTED.sub('"x"', command)  # what a character is told may be any sentence
    if _reads_as_prose(outside, reply.dictionary):
        raise reply.fail("prose", "a sentence, not a game command")
    if _SENTENCE_BREAK.search(outside):
        raise reply.fail("multiple_commands", "several commands joined in one line; give one")
    if _ORDER.match(outside) and _is_order(_ORDER.match(outside).group("who")):
        return  # `turtle, se and get scroll then nw`: one order to a character, whatever it holds
    _check_chain(outside, reply)


def _reads_as_prose(text: str, dictionary: GameDictionary | None) -> bool:
    """`text` (lower-case, quoted speech already replaced) is a sentence rather than a command. With the game's
    dictionary, a line of words the game knows is a command whatever it reads like (`latitude is 25`, `what is a
    grue`), and a line whose first word the game does not know is a sentence when it is long or opens with a
    participle (`Going north.`, `Nothing to do here but wait`)."""
    words = [w for w in (word.strip(",.!?:;") for word in _spoken_words(text)) if w]
    if not words:
        return False
    first = words[0]
    if first in _PROSE_OPENERS or (first in _SUBJECT_OPENERS and len(words) > 1):
        return True
    if dictionary is not None and all(word == '"x"' or dictionary.knows(word) for word in words):
        return False
    if text.endswith("?") or _SENTENCE_WORDS & set(words[1:]):
        return True
    if dictionary is None or dictionary.knows(first) or first == '"x"':
        return False
    order = _ORDER.match(text)
    if order is not None and _is_order(order.group("who")):
        return False
    return len(words) >= PROSE_MIN_WORDS or (first.endswith("ing") and len(first) > 4)


def _known_opening(command: str, dictionary: GameDictionary) -> bool:
    """The game knows the first word of `command`, or it is an order to a character."""
    order = _ORDER.match(command)
    return dictionary.knows(command.split()[0]) or (order is not None and _is_order(order.group("who")))


def _spoken_words(text: str) -> list[str]:
    """The words of a command that are not what a character is told or asked about: after `say`, `answer`, `type`
    everything is speech; after `ask ... about` the topic may be any words."""
    words = text.split()
    if not words:
        return words
    verb = words[0].strip(",.!?:")
    if verb in _SPEECH_VERBS:
        return words[:1]
    if verb in _ASKING_VERBS and "about" in words[1:]:
        return words[: words.index("about", 1) + 1]
    return words


def _is_order(who: str) -> bool:
    """`who` (before the first comma) names a character: one to three words, none a verb, a direction or a word of
    a sentence."""
    words = who.split()
    return 0 < len(words) <= 3 and not any(
        w in _CHAIN_VERBS or w in DIRECTION_WORDS or w in _PROSE_OPENERS or w in _INTRANSITIVE for w in words
    )


def _check_chain(command: str, reply: _Reply) -> None:
    """InvalidReply when `command` chains two different commands. The game's own THEN is read as one planned line
    unless it is a route of two moves (each move is a turn, so the map learns each exit); `and` or a comma before a
    new verb is two commands, unless what follows acts on the same thing (`remove opener and drop it`)."""
    parts = [p for p in _THEN.split(command) if p]
    if sum(direction_of(part) is not None for part in parts) >= 2:
        raise reply.fail("multiple_commands", "a route of several moves: one move per turn")
    for part in parts:
        pieces = [p for p in _AND_OR_COMMA.split(part) if p]
        if sum(direction_of(piece) is not None for piece in pieces) >= 2:
            raise reply.fail("multiple_commands", "a route of several moves: one move per turn")
        for piece in pieces[1:]:
            words = piece.split()
            new_verb = words[0] in _CHAIN_VERBS and len(words) > 1 and not set(words[1:]) <= _PRONOUNS
            alone = len(words) == 1 and (words[0] in _INTRANSITIVE or (len(words[0]) > 2 and direction_of(words[0])))
            if new_verb or alone:
                raise reply.fail("multiple_commands", "two commands joined by 'and', 'or' or a comma; give one")


def _thought(value: object, tail: bool = False) -> str:
    """Printable text on one line, at most MAX_THOUGHT_CHARS: the start of a thought, the end of long reasoning
    (where it concludes)."""
    if not isinstance(value, str):
        return ""
    text = " ".join(printable(_TEMPLATE_TOKEN.sub(" ", value)).split())
    return text[-MAX_THOUGHT_CHARS:].lstrip() if tail else text[:MAX_THOUGHT_CHARS]
