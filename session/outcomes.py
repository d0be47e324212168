"""What a command's outcome was: Z-machine evidence first (room, score, inventory, world state), text second.

This module is the one place that holds the response phrases; they were checked against real zork1 responses
(tests/session/test_outcomes.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from session.commands import direction_of, is_observation
from session.records import GameView

SUCCESS = "success"
PARSER_FAILURE = "parser_failure"
REFUSED = "refused"
NO_EFFECT = "no_effect"
BLOCKED_EXIT = "blocked_exit"
DEATH = "death"
CATEGORIES = (SUCCESS, PARSER_FAILURE, REFUSED, NO_EFFECT, BLOCKED_EXIT, DEATH)
PROBLEMATIC = frozenset({PARSER_FAILURE, REFUSED, NO_EFFECT, BLOCKED_EXIT, DEATH})

# The parser did not understand the command (no game time passes).
PARSER_PHRASES = (
    "i don't know the word",
    "you used the word",
    "that sentence isn't one i recognize",
    "there was no verb in that sentence",
    "i beg your pardon",
    "what do you want to",
    "i don't understand",
    "which do you mean",
    "do you mean",  # "Which vial do you mean, the indigo vial or ...?": the parser asks, the world waits
    "you can't use multiple",
    "there seems to be a noun missing",
    "i couldn't find enough",
)
# Understood, but the game refused or nothing could happen.
REFUSAL_PHRASES = (
    "you can't",
    "you cannot",
    "can't see any",
    "it is already",
    "is already",
    "securely anchored",
    "doesn't seem to work",  # Zork's three "hack" replies, picked at random
    "isn't notably helpful",
    "has no effect",
    "cannot be",
    "you don't have",
    "you have no",
    "there is no",
    "nothing happens",
    "not possible",
    "is locked",
    "too heavy",
    "i don't think",
    "with your bare hands",
    "what a concept",
    "are you enjoying yourself",
    "a hollow voice says",
    "nice weather",
    "you're not",
    "that's not",
    "isn't",
    "won't",
)
NOT_IN_SIGHT = re.compile(
    r"\b(?:can't|cannot|don't|not) see (?:any|that|those)\b"  # any lamp, any such thing, that here; Grunk not see that
    r"|\b(?:can't|cannot) see [^.!?\n]{1,40}\bhere\b"  # You can't see Billy here. You can't see the viewport here.
    r"|\bno such thing\b"
)
"""How a game says the command's object is not in sight (`You can't see any trap door here!`, `I don't see that
around here`): the same command may work once something reveals it. Measured on the 29 corpus games; a bare
"can't see" is no such answer (`you can't seem to get away`, `You can't see inside, since it is closed`)."""
DEATH_PHRASES = ("you have died", "you are dead")
DARK_PHRASES = ("pitch black", "pitch dark", "too dark", "it is dark")
"""How games say the player cannot see: a dark room (grues in the Zork games)."""
YES_NO_QUESTION = re.compile(r"\byes or no\b|\(y/n\)|\byes/no\b")
"""The game waits for a yes or a no (wishbringer's `(Please type YES or NO.)`), in lower case."""
BURDENED_PHRASES = ("with what you're carrying", "with all you're carrying", "too narrow for you and")
"""How a game refuses a move for the load the player carries, not for the way itself (zork1's chimney: `You can't
get up there with what you're carrying.`): the way is there for a lighter load."""
EMPTY_HANDED_PHRASES = ("empty-handed", "empty handed", "nothing", "not carrying anything", "not holding anything")
"""How games answer `inventory` when the player holds nothing (the corpus games' answers at their start: "You are
carrying nothing.", "You are empty-handed.", "You're not holding anything.", "You are holding: Nothing")."""


def title_like(line: str) -> bool:
    """A room title line: short, capitalised, no sentence punctuation at its end, no bracketed aside."""
    return 2 <= len(line) <= 50 and line[0].isupper() and line[-1] not in ".!?,:;'\"]" and line[0] not in "[(>*"


TITLE_MARKS = "-=<>~#"
"""Marks some games print on both sides of a room title (TextWorld's `-= Kitchen =-`, `<< Chief's office >>`)."""


def printed_title(line: str) -> str | None:
    """The room title a line prints (title_like), without the marks a game put on both sides of it; None when the
    line reads as no title."""
    line = line.strip()
    if line[:1] in TITLE_MARKS and line[-1:] in TITLE_MARKS:
        line = line.strip(TITLE_MARKS).strip()
    return line if title_like(line) else None


def refused(response: str) -> bool:
    """The answer says the game refused (REFUSAL_PHRASES)."""
    text = response.lower()
    return any(phrase in text for phrase in REFUSAL_PHRASES)


def walked_within(response: str, room_name: str) -> bool:
    """A move that kept the room id was answered as an arrival: a line of the answer gives this room's title again
    (curses' `Maze (in the garden roller)`, hollywood's `You make your way 20 feet east along the path.` then `Hedge
    Maze`), and no refusal (`You can't go that way.`). One room object can hold many places: a maze whose spot the
    game keeps in a variable, a vehicle's stops."""
    name = room_name.strip().lower()
    if not name or refused(response):
        return False
    return any((title := printed_title(line)) and title.lower().startswith(name) for line in response.splitlines())


def outcome_between(command: str, before: GameView, after: GameView) -> str:
    """The result category of `command`, which took the game from `before` to `after`."""
    return classify_outcome(
        command,
        after.text,
        after.room_id != before.room_id,
        after.score != before.score,
        after.inventory != before.inventory,
        after.world_hash != before.world_hash,
        after.game_over,
        after.victory,
        after.room_name,
    )


def classify_outcome(
    command: str,
    response: str,
    moved: bool,
    score_changed: bool,
    inventory_changed: bool,
    world_changed: bool,
    game_over: bool,
    victory: bool,
    room_name: str = "",
) -> str:
    """The command's result category. A move that kept the room id took the player somewhere inside it when the
    answer describes this room again (`walked_within`: `room_name` is the room) or the world changed and the game
    refused nothing (ballyhoo's tightrope, walked a few steps at a time); else it met a wall."""
    text = response.lower()
    if (game_over and not victory) or any(phrase in text for phrase in DEATH_PHRASES):
        return DEATH
    state_changed = moved or score_changed or inventory_changed
    if not state_changed and any(phrase in text for phrase in PARSER_PHRASES):
        return PARSER_FAILURE
    if direction_of(command) is not None and not moved:
        took = walked_within(response, room_name) or (world_changed and not refused(response))
        return SUCCESS if took else BLOCKED_EXIT
    if state_changed:
        return SUCCESS
    # A refusal beats a changed world hash: NPCs (zork1's thief), timers and first-turn flags change the world
    # while the command itself did nothing.
    if any(phrase in text for phrase in REFUSAL_PHRASES):
        return REFUSED
    return SUCCESS if world_changed else NO_EFFECT


FAILURES = PROBLEMATIC - {NO_EFFECT}
"""Outcomes that say the command failed. `no_effect` only says nothing visible changed: learning a spell a second
time or waiting for a train reads the same, and such steps are in the optimal walkthroughs."""


def not_here(response: str) -> bool:
    """The game answered that the command's object is not in sight."""
    return NOT_IN_SIGHT.search(response.lower()) is not None


PARSER_NOTES = re.compile(r"\A(?:[ \t]*\n)*(?:[ \t]*\([^()\n]{1,100}\)[ \t]*\n+)+")
"""The parser's notes on how it read the command, each a line of its own in brackets before the answer: the thing it
chose for a word several things share (`(the orange bell pepper)`), the thing or the step it took for granted
(`(with the knife)`, `(first taking the lamp)`). They say what the command meant, not what the game answered."""


def without_parser_notes(response: str) -> str:
    """The answer after the parser's notes (PARSER_NOTES); the whole response when it is nothing but notes."""
    rest = PARSER_NOTES.sub("", response, count=1)
    return rest if rest.strip() else response


def parser_noted(response: str) -> bool:
    """The parser noted how it read the command before the answer (PARSER_NOTES)."""
    return without_parser_notes(response) != response


UNKNOWN_WORD_PHRASES = (
    "i don't know the word",  # Infocom: I don't know the word "qzxjw".
    "not a verb i recogni",  # Inform's library: That's not a verb I recognise (recognize in ztuu).
    "doesn't know the word",  # later Infocom: (This story doesn't know the word "qzxjw.")
    "recognize the word",  # (Sorry, but this story doesn't recognize the word "qzxjw.")
    "not in the vocabulary",  # (Sorry, but the word "qzxjw" is not in the vocabulary that you can use ...)
    "need to use the word",  # (You don't need to use the word "qzxjw" to finish this story.)
    "can't use the word",  # I can't use the word "qzxjw" here.
)
"""How a game's parser says a word of the command is not in its vocabulary (measured on the 29 corpus games)."""


def unknown_word(response: str) -> bool:
    """The game answered that a word of the command is unknown to it."""
    text = response.lower()
    return any(phrase in text for phrase in UNKNOWN_WORD_PHRASES)


NOT_HELD_PHRASES = ("you don't have", "you aren't holding", "you're not holding", "you need to be holding")
"""How a game says the player does not hold what the command uses (`put egg in case` without the egg)."""


def not_at_hand(response: str) -> bool:
    """The game could not even try the command: its object is neither in sight nor held."""
    text = response.lower()
    return not_here(text) or any(phrase in text for phrase in NOT_HELD_PHRASES)


def burdened(response: str, held: Collection[str] = ()) -> bool:
    """The game refused a move for what the player carries: in so many words (BURDENED_PHRASES), or naming a thing
    the player holds (see `load_named`)."""
    text = response.lower()
    return any(phrase in text for phrase in BURDENED_PHRASES) or bool(load_named(response, held))


def load_named(response: str, held: Collection[str]) -> list[str]:
    """The nouns of `held` (what the player carries) that the first line of a refused move names (`You haven't a
    prayer of getting the coffin down there.`): the way is there without them. Later lines are the world going on
    (`The lamp appears a bit dimmer.`)."""
    first = next((line for line in response.lower().splitlines() if line.strip()), "")
    words = set(re.findall(r"[a-z]+", first))
    return [noun for noun in held if noun.lower() in words]


ALREADY_PHRASES = ("already",)
"""How a game says what the command would bring about holds already (`You already have that!`, `It is already on.`):
the command was moot, not refused."""


def moot(response: str) -> bool:
    """The game answered that what the command would bring about holds already (ALREADY_PHRASES)."""
    text = response.lower()
    return any(phrase in text for phrase in ALREADY_PHRASES)


def is_failure(command: str, category: str) -> bool:
    """A failed attempt to do something: looking, listening or waiting again is harmless, whatever the answer."""
    return category in FAILURES and not is_observation(command)


def empty_handed(inventory_answer: str) -> bool:
    """The game's answer to `inventory` says the player holds nothing."""
    text = " ".join(inventory_answer.lower().split())
    return any(phrase in text for phrase in EMPTY_HANDED_PHRASES)
