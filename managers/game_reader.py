"""What the game itself says where the player stands, read for an agent that is shown a prompt (an LLM).

Every claim a prompt makes is the game's own text, or is checked against the game's answer on a copy of the state
(`JerichoSession.answer_on_copy`: the live game never moves, no turn passes):
- the room's title as `look` prints it, or dark when `look` says so;
- the room's description as `look` prints it now, without what the game's clock prints after it (the next turn's
  events); else, where `look` prints no title, as the game last printed it here, with its turn, without the lines
  of passing events (a line counts as the room's when a `look` right after prints it too);
- what the player carries, as the game's answer to `inventory`;
- the things in sight, under the words the game printed in this room (an object's short name, else one of its
  dictionary words no other object here shares), each kept only while `examine` finds it;
- the moves that led somewhere from here and still lead there now;
- what was done here, with the first line of the game's answer.
And a bounded memory: the game's opening, what scored and where, the last texts read whole, the agent's last
thoughts, where things were last seen, rooms whose text mentions exits that were never tried there.
"""

from __future__ import annotations

import re
from collections import defaultdict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from managers.map_graph import MapGraph
from session.commands import (
    DIRECTION_WORDS,
    FUNCTION_WORDS,
    OPPOSITE,
    ROUTINE_COMMANDS,
    canonical_command,
    direction_of,
    directions_named,
    is_wait,
    read_command,
    spellings_of,
    words_in,
)
from session.context import Readings
from session.outcomes import DARK_PHRASES, PARSER_PHRASES, not_here, title_like
from session.records import GameView, TurnRecord
from session.shadow import Trial

AnswerOnCopy = Callable[[str], "Trial | None"]

NOT_NAMES = FUNCTION_WORDS | DIRECTION_WORDS
"""Printed words never taken for a thing's name (`it`, `west`): many objects answer to them."""
TEXTS_KEPT = 30
"""Responses kept per room to find the words the game printed for its things."""
SEEN_CHECKED = 12
"""Things checked with `examine` a turn, at most (each is one step on a copy)."""
TRIED_SHOWN = 8
THOUGHTS_KEPT = 3
SEEN_ELSEWHERE_SHOWN = 10
ROOMS_WITH_MENTIONS_SHOWN = 5
OPENING_CHARS = 2500
"""The game's opening kept for the prompt (see `kept_opening`)."""
OPENING_ROOM_CHARS = 1200
"""Of a longer opening, the first room's part kept at most."""
NOTES_KEPT = 10
"""The agent's own notes kept for the prompt (the latest)."""
MAP_ROOMS = 25
"""Rooms on the prompt's map, nearest first."""
SCORED_KEPT = 12
"""Turns that raised the score, kept for the prompt (the latest)."""
TEXTS_READ_KEPT = 4
READ_TEXT_CHARS = 600
"""The game's answer to a `read`, kept whole up to this (a note, a page, a sign: what a player would copy down)."""
ANSWER_CHARS = 120
"""The first line of an answer in the list of what was done here, cut to this."""
FULL_DESCRIPTION_SHARE = 0.7
"""A description this much as long as the one known for the room replaces it; a shorter one is a brief revisit."""
NAME_CHARS = 40
TITLE_DECORATION = " \t<>*=~#[]()-"
"""What some games print around a room's title (`<< Chief's office >>`, seastalker's `(Kemp's office)`)."""
_PRINTED_WORD = re.compile(r"[a-z0-9][a-z0-9_'-]*")
"""A word as the game printed it: `Designers_Manual` is one word (its `manual` alone was never printed)."""
IDLE_COMMAND = "wait"
"""A command that does nothing but let a turn pass: what the game's clock prints after it is the clock's."""
ROOM_WORDS_SHARE = 0.6
"""A printed line whose longer words are this much the `look` text's is the room's (see `_mostly_within`)."""


@dataclass(frozen=True)
class Look:
    """The game's answers to `look` and `inventory` on a copy: the room's title line, whether it is dark, and
    what is carried."""

    text: str
    title: str
    dark: bool
    inventory: str
    """The game's answer to `inventory` on the same copy."""


class GameReader:
    def __init__(self, answer_on_copy: AnswerOnCopy, vocabulary: Mapping[int, frozenset[str]], word_length: int):
        self.answer = answer_on_copy
        self.vocabulary = vocabulary
        """Object number -> the dictionary words that name it (read from the story file)."""
        self.word_length = word_length
        self.titles: dict[int | None, str] = {}
        """Room -> its title as `look` printed it there."""
        self.descriptions: dict[int | None, tuple[int, str]] = {}
        """Room -> (turn, the latest full description printed there)."""
        self.texts: dict[int | None, deque[str]] = defaultdict(lambda: deque(maxlen=TEXTS_KEPT))
        """Room -> what the game printed there lately (lower-cased), where things are named."""
        self.tried: dict[int | None, dict[str, tuple[str, int, str]]] = defaultdict(dict)
        """Room -> canonical command -> (command, turn, the first line of its answer)."""
        self.thoughts: deque[tuple[int, str]] = deque(maxlen=THOUGHTS_KEPT)
        self.last_seen: dict[str, tuple[int | None, int]] = {}
        """Name as printed -> (room, turn) where `examine` last found it in sight."""
        self.opening = ""
        """The game's opening text."""
        self.scored: deque[tuple[int, str, str, int]] = deque(maxlen=SCORED_KEPT)
        """(turn, room title, command, points) of the turns that raised the score."""
        self.texts_read: deque[tuple[int, str, str]] = deque(maxlen=TEXTS_READ_KEPT)
        """(turn, command, answer) of the last `read` commands."""
        self.notes: deque[tuple[int, str]] = deque(maxlen=NOTES_KEPT)
        """(turn, note) the agent asked to keep."""
        self.arrivals: dict[int | None, tuple[str, int | None]] = {}
        """Room -> (the opposite of the move that last brought the player here, the room it came from): the likely
        way back, shown among the exits once a copy shows it leads there."""
        self._look: Look | None = None
        """`look` on a copy of the current state (each observed turn reads it once)."""

    # -- learning ------------------------------------------------------------------------------------------------
    def begin(self, view: GameView) -> None:
        self._heard(view.room_id, view.room_name, view.text, turn=0)
        self.opening = kept_opening(view.text.strip(), self._look.title if self._look else "")

    def observe(self, record: TurnRecord) -> None:
        """One executed turn, read while the game stands where it left it (live play and resume alike)."""
        room = record.room_id_before
        key = canonical_command(record.command)
        if record.ran and direction_of(record.command) is None and key not in ROUTINE_COMMANDS and not is_wait(key):
            self.tried[room].pop(key, None)  # latest last: insertion order is the order of the tries
            self.tried[room][key] = (record.command, record.turn, _first_line(record.response))
        if record.ran and record.score_after > record.score_before:
            title = self.titles.get(room, record.room_name_before)
            self.scored.append((record.turn, title, record.command, record.score_after - record.score_before))
        if record.ran and read_command(record.command).words[:1] == ("read",) and record.response.strip():
            self.texts_read.append((record.turn, record.command, record.response.strip()[:READ_TEXT_CHARS]))
        direction = direction_of(record.command) if record.ran else None
        came = record.room_id_before is not None and record.room_id_after not in (None, record.room_id_before)
        if direction in OPPOSITE and came:
            self.arrivals[record.room_id_after] = (OPPOSITE[direction], record.room_id_before)
        if record.note and record.note not in (note for _, note in self.notes):
            self.notes.append((record.turn, record.note))
        if record.thought and not record.fallback:
            self.thoughts.append((record.turn, record.thought))
        self._heard(record.room_id_after, record.room_name_after, record.response, record.turn)

    def _heard(self, room: int | None, name: str, text: str, turn: int) -> None:
        """What the game printed in `room` at `turn`: a description when it holds the title line `look` prints."""
        self._look = look = self._read_look(name)
        if look.title:
            self.titles[room] = look.title
        self.texts[room].append(text.lower())
        if look.title and not look.dark:
            described = _description(text, look)
            _, known = self.descriptions.get(room, (0, ""))
            if described and len(described) >= FULL_DESCRIPTION_SHARE * len(known):
                self.descriptions[room] = (turn, described)

    def _read_look(self, name: str) -> Look:
        """`look` and `inventory` on a copy: the room's title and darkness, and what is carried. A game that gives
        both the same first line is not reading commands (a yes/no question, a "press a key" pause): no title."""
        answers = [self.answer(command) for command in ("look", "inventory", IDLE_COMMAND)]
        looked, listed, idle = (_without_prompt_lines(answer.text if answer else "") for answer in answers)
        text = without_clock(looked, _line_set(listed) | _line_set(idle))
        carried = without_clock(listed, _line_set(looked) | _line_set(idle)).strip()
        if _first_line(text) and _first_line(text) == _first_line(carried):
            return Look(text, "", False, "")
        lines = [_undecorated(line) for line in text.splitlines() if line.strip(TITLE_DECORATION)]
        wanted = name.strip().lower()
        title = next((line for line in lines if _names_room(line, wanted)), "")
        if not title and lines and is_title(lines[0]):
            title = lines[0]  # games print the title first: a title-like line further down is something else
        if any(phrase in title.lower() for phrase in DARK_PHRASES):
            title = ""  # murdac names its dark rooms "It is pitch dark": that says the dark, not the room
        # Dark: the game says so and prints no title (Inform's dark rooms print one, "Darkness": then it is that).
        dark = not title and any(phrase in text.lower() for phrase in DARK_PHRASES)
        return Look(text, title, dark, carried)

    # -- reading a turn ----------------------------------------------------------------------------------------
    def read(self, turn: int, view: GameView, game_map: MapGraph) -> Readings:
        here = view.room_id
        look = self._look or self._read_look(view.room_name)
        turn_printed, description = self.descriptions.get(here, (0, ""))
        now = _description(look.text, look) if look.title and not look.dark else ""
        carried = look.inventory
        seen = () if look.dark else self._seen(view)
        for name in seen:
            self.last_seen[name] = (here, turn)
        for name in [n for n in self.last_seen if re.search(rf"\b{re.escape(n)}\b", carried.lower())]:
            del self.last_seen[name]  # taken since: it is in the inventory now
        room = game_map.rooms.get(here) if here is not None else None
        tried_ways = set(room.exits) | set(room.failed_exits) if room else set()
        return Readings(
            title=look.title,
            dark=look.dark,
            description="" if look.dark else now or description,
            description_turn=turn if now else turn_printed,
            description_now=bool(now),
            inventory=carried,
            seen=seen,
            exits=self._exits(here, game_map),
            mentioned_exits=tuple(d for d in directions_named(now or description) if d not in tried_ways)
            if not look.dark
            else (),
            tried=tuple(reversed(list(self.tried.get(here, {}).values())))[:TRIED_SHOWN],
            thoughts=tuple(self.thoughts),
            seen_elsewhere=self._seen_elsewhere(here, seen),
            rooms_with_mentions=self._rooms_with_mentions(here, game_map),
            notes=tuple(self.notes),
            map=self._map(here, game_map),
            opening=self.opening,
            scored=tuple(self.scored),
            texts_read=tuple(self.texts_read),
        )

    def _seen(self, view: GameView) -> tuple[str, ...]:
        """The room's things under the words the game printed here, each in sight now by `examine`'s answer."""
        printed = " ".join(self.texts.get(view.room_id, ()))
        words = list(dict.fromkeys(_PRINTED_WORD.findall(printed)))  # in the order the game printed them
        held = {obj.num for obj in view.inventory}
        objects = [obj for obj in view.room_objects if obj.num not in held]
        shared = _shared_words(self.vocabulary.get(obj.num, frozenset()) for obj in objects)
        names: list[str] = []
        for obj in objects:
            name = _printed_name(
                obj.name, self.vocabulary.get(obj.num, frozenset()), printed, words, shared, self.word_length
            )
            if name and name not in names:
                names.append(name)
        return tuple(name for name in names[:SEEN_CHECKED] if self._in_sight(name))

    def _in_sight(self, name: str) -> bool:
        trial = self.answer(f"examine {name}")
        if trial is None:
            return False
        text = trial.text.lower()
        refused = not_here(text) or any(p in text for p in PARSER_PHRASES) or any(p in text for p in DARK_PHRASES)
        return not refused

    def _exits(self, here: int | None, game_map: MapGraph) -> tuple[tuple[str, str], ...]:
        """Known exits from here that, tried on a copy now, still lead where they led, and the way back to the room
        the player came from (the opposite of the move that brought it here) when it does, also where that direction
        once led elsewhere (temple's two Corridors)."""
        room = game_map.rooms.get(here) if here is not None else None
        candidates = sorted(room.exits.items()) if room else []
        back = self.arrivals.get(here)
        if back is not None and here is not None and back[1] != here and back not in candidates:
            candidates.append(back)
        ways: dict[str, tuple[str, str]] = {}
        for direction, target in candidates:
            if direction in ways:
                continue
            for spelling in (direction, *spellings_of(direction)):  # some parsers know `sw` and not `southwest`
                trial = self.answer(spelling)
                if trial is not None and trial.room_id == target:
                    ways[direction] = (spelling, self.titles.get(target, ""))
                    break
        return tuple(ways[direction] for direction in sorted(ways))

    def _map(self, here: int | None, game_map: MapGraph) -> tuple[str, ...]:
        """This room, then the nearest rooms reachable by walked exits, then the others (the latest found first),
        each with its walked exits (MAP_ROOMS at most; rooms the game printed no title for are left out)."""
        order = [here, *game_map.paths_from(here)] if here in game_map.rooms else []
        others = sorted(set(game_map.rooms) - set(order), key=lambda r: -game_map.rooms[r].first_visit_turn)
        order += others
        lines = []
        for room_id in order:
            title = self.titles.get(room_id)
            if not title:
                continue
            exits = game_map.rooms[room_id].exits
            ways = ", ".join(f"{d} -> {self.titles.get(target) or '(untitled)'}" for d, target in sorted(exits.items()))
            lines.append(f"{title}: {ways or 'no exit walked'}")
            if len(lines) == MAP_ROOMS:
                break
        return tuple(lines)

    def _seen_elsewhere(self, here: int | None, seen_here: tuple[str, ...]) -> tuple[tuple[str, str, int], ...]:
        elsewhere = [
            (name, self.titles.get(room, ""), turn)
            for name, (room, turn) in self.last_seen.items()
            if room != here and name not in seen_here and self.titles.get(room)
        ]
        return tuple(sorted(elsewhere, key=lambda item: -item[2])[:SEEN_ELSEWHERE_SHOWN])

    def _rooms_with_mentions(
        self, here: int | None, game_map: MapGraph
    ) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]:
        found = []
        for room_id, path in game_map.paths_from(here).items():
            room = game_map.rooms[room_id]
            tried = set(room.exits) | set(room.failed_exits)
            _, description = self.descriptions.get(room_id, (0, ""))
            untried = tuple(d for d in directions_named(description) if d not in tried)
            if untried and self.titles.get(room_id):
                found.append((self.titles[room_id], untried, tuple(path)))
            if len(found) >= ROOMS_WITH_MENTIONS_SHOWN:
                break
        return tuple(found)


def _undecorated(line: str) -> str:
    """A printed line without the decoration some games put around a title (`<< Chief's office >>`, seastalker's
    `(Kemp's office)`), its own brackets kept (`Bedroom (in bed)`, yomomma's `Artist hangout (NE corner)`)."""
    text = line.strip(TITLE_DECORATION)
    kept = line.strip()
    for opening, closing in ("()", "[]"):
        if text.count(opening) > text.count(closing) and kept.endswith(closing):
            text += closing
    return text


def _title_lines(lines: list[str], title: str) -> list[int]:
    """The indexes of the lines that print `title` (decoration aside, any case); none for no title."""
    wanted = title.lower()
    return [i for i, line in enumerate(lines) if wanted and _undecorated(line).lower() == wanted]


def _names_room(line: str, name: str) -> bool:
    """The line is the room's title: its name (lower-cased), alone or followed by what games append to it (yomomma's
    `Artist hangout (NE corner)`, `Dam Base, in the magic boat`)."""
    text = line.lower()
    return bool(name) and (text == name or (text.startswith(name) and text[len(name) :].lstrip()[:1] in "(,[-:"))


def is_title(line: str) -> bool:
    """A room title as games print one first in a `look`: title-like (session.outcomes) and in title case, most of
    its longer words capitalised (`West of House`, `Chief's office`, `Darkness`), not a sentence printed without a
    full stop (murdac's `You are in the alley`, `There is a dull brass lamp here`)."""
    words = [word.lstrip("([") for word in line.split()]
    words = [word for word in words if len(word) > 3 or word[:1].isupper()]
    capitalised = sum(word[:1].isupper() for word in words)
    return title_like(line) and bool(words) and capitalised * 2 >= len(words)


def _description(text: str, look: Look) -> str:
    """`text` from the room's title line on, keeping only the room's lines (`room_line`), not passing events."""
    lines = text.splitlines()
    start = next(iter(_title_lines(lines, look.title)), None)
    if start is None:
        return ""
    body = next((i for i in range(start + 1, len(lines)) if lines[i].strip()), None)
    kept = [line.rstrip() for i, line in enumerate(lines[start:], start) if room_line(line, look.text, i == body)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def room_line(line: str, look_text: str, body: bool) -> bool:
    """A line of a printed description is the room's, not a passing event, when a `look` right after prints it too;
    the body (the first line under the title), which many games word otherwise on a first visit or as the room
    changes, also when most of its longer words are that look's. (Blank lines are kept as layout.)"""
    if not line.strip() or _squeeze(line) in {_squeeze(x) for x in look_text.splitlines()}:
        return True
    own = [word for word in words_in(line) if len(word) > 3]
    words = set(words_in(look_text))
    return body and bool(own) and sum(word in words for word in own) >= ROOM_WORDS_SHARE * len(own)


def _printed_name(
    short_name: str, nouns: frozenset[str], printed: str, words: list[str], shared: set[str], word_length: int
) -> str:
    """What the game printed for an object in this room: its short name when printed, else the first printed word
    that is one of its dictionary words and no other object's here; "" when none (never an internal name)."""
    name = " ".join(short_name.lower().split())
    printable = name and len(name) <= NAME_CHARS and not set(name.split()) <= FUNCTION_WORDS
    if printable and re.search(rf"\b{re.escape(name)}\b", printed):
        return name
    for word in words:
        key = word[:word_length]
        if key in nouns and key not in shared and word not in NOT_NAMES and len(word) > 2:
            return word
    return ""


def _shared_words(vocabularies) -> set[str]:
    counts: dict[str, int] = defaultdict(int)
    for vocabulary in vocabularies:
        for word in vocabulary:
            counts[word] += 1
    return {word for word, n in counts.items() if n > 1}


def kept_opening(text: str, title: str) -> str:
    """The opening as the prompt keeps it: whole up to OPENING_CHARS; a longer one keeps its start (the title and
    the premise) and, from the first room's title line on, its end (a long banner must not push the first room out:
    anchor's opening runs past 3,000 characters before it)."""
    if len(text) <= OPENING_CHARS:
        return text
    lines = text.splitlines()
    at = next(reversed(_title_lines(lines, title)), None)
    room = "\n".join(lines[at:]).strip() if at is not None else ""
    room = room[:OPENING_ROOM_CHARS]
    head = text[: max(OPENING_CHARS - len(room) - 3, OPENING_CHARS // 2)].rsplit(" ", 1)[0]
    return f"{head} …\n{room}" if room else head + " …"


def without_clock(answer: str, elsewhere: set[str]) -> str:
    """`answer` without what the game's clock printed after it: the turn an answer on a copy takes lets the game's
    own events happen (a character speaks, a pig runs off), and those are the next turn's, not yet the player's to
    know. They come last, and another command that takes a turn from the same state prints them too (the copy's
    random numbers are the live game's): the trailing lines that `elsewhere` (the lines of such answers) holds are
    left out, never the first line."""
    lines = answer.rstrip().splitlines()
    end = len(lines)
    while end > 1 and (not lines[end - 1].strip() or _squeeze(lines[end - 1]) in elsewhere):
        end -= 1
    return "\n".join(lines[:end])


def _line_set(text: str) -> set[str]:
    return {_squeeze(line) for line in text.splitlines() if line.strip()}


def _without_prompt_lines(text: str) -> str:
    """`text` without the lines that are only the input prompt (sherlock begins every answer with `>`)."""
    return "\n".join(line for line in text.splitlines() if line.strip() != ">")


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= ANSWER_CHARS else line[: ANSWER_CHARS - 2].rsplit(" ", 1)[0] + " …"


def _squeeze(line: str) -> str:
    return " ".join(line.split()).lower()
