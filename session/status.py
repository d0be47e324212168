"""What every Z-machine game shows a player, read without Jericho's per-game bindings.

Jericho knows the score, the moves, the player object and the endings of the games in its suite from bindings
written for each one (memory addresses, the death text). Any other story file (a TextWorld game, a new release of an
old one) has none: Jericho then reads the score as 0, the player as object 20 and never sees an ending. What every
game exposes instead, and what this module reads:

- the status line's variables (Z-Machine Standard 8.2): in version 1-3 story files the interpreter draws the status
  line from global 0 (the room), 1 and 2 (the score and the moves; the hours and minutes in a "time game", Flags 1
  bit 1), and prints it in front of the next answer;
- the game's answer to `score`, as a player would type it (played on the shadow emulator): Inform's "You have so far
  scored 5 out of a possible 50, in 12 turns", Infocom's "Your score is 5 of a possible 350, in 12 moves";
- the standard endings: a `*** ... ***` banner on a line of its own, and the closing question ("Would you like to
  RESTART, RESTORE a saved game or QUIT?");
- the status line a version 4+ game draws itself in the upper window, which an unbound game's answers carry after
  the prompt (`>` and the title, `Score: 0`, `0/3`): it is not part of the answer and is cut off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TIME_GAME_FLAG = 0x02
"""Flags 1 bit 1 (Standard 8.2.3.2): the status line shows the time (globals 1 and 2: hours, minutes), not the score."""
SCORE_COMMAND = "score"
"""What a player types to be told the score; games without scoring answer it in words ("There is no score in this
story"), which read as no score."""

_NUMBER = r"(-?\d{1,6})"
_SCORE_ANSWER = re.compile(
    _NUMBER + r"(?:\s+points?)?[ \t]*[(,]?\s*"
    r"(?:out\s+of|of\s+a\s+possible|of\s+a\s+maximum\s+of|(?:a\s+)?total\s+of)\s+(?:a\s+(?:possible|maximum\s+of)\s+)?"
    + _NUMBER,
    re.IGNORECASE,
)
"""A score out of a maximum, as games answer `score` and close: `You have so far scored 5 out of a possible 50`,
`Your score is 284 (total of 350 points)`, `Your potential is 0 of a possible 7`, `Grunk have 0 out of 7 so far`,
`you will have scored 10 points out of\na maximum of 250`, `[You have 0 out of 100 points ...]`. Read only from an
answer to `score` or from the closing words of a game that ended; the numbers are bounded."""
_SCORE_ALONE = re.compile(r"\b(?:your score is|you have (?:so far )?scored)\s+" + _NUMBER + r"\b", re.IGNORECASE)
"""A score with no maximum (`Your score is 12.`)."""
_SCORE_WORD = re.compile(r"\b(?:score|scored|potential|points)\b", re.IGNORECASE)
_VERDICT = re.compile(r"\A[^\n]{0,12}\bin\s+\d{1,7}\s+(?:turns?|moves?)\b|\brank(?:ing)?\b", re.IGNORECASE)
"""What follows a final verdict on the score: the moves it took, right after it, or the rank it earns."""
_MOVES = re.compile(r"\bin\s+(\d{1,7})\s+(?:turns?|moves?)\b", re.IGNORECASE)

_BANNER = re.compile(r"^[ \t]*\*{2,}[ \t]*([^*\n]{1,60}?)[ \t]*\*{2,}[ \t]*$", re.MULTILINE)
"""A banner on a line of its own: Inform's `*** You have died ***`, Infocom's `****  You have won  ****`, TextWorld's
`*** The End ***` and `*** You lost! ***`. What the game does next tells an ending from a banner in the story
(planetfall prints `*** ALURT! ***` in a printout): JerichoSession asks it `look`."""
DEATH_WORDS = ("died", "dead", "death", "lost", "killed", "over", "fail", "defeat", "perished")
"""Words of an ending banner that say the player lost. Any other banner closes a won story: Inform's `*** You have
won ***`, Inform 7's and TextWorld's `*** The End ***`, lostpig's `***  Grunk bring pig back to farm  ***`."""
_CLOSING_LINE = re.compile(r"\?|\(type\b", re.IGNORECASE)
CLOSING_CHARS = 300
"""The closing question is looked for in this much of the end of an answer, and its last line must offer one of
the choices and ask (a `?` or `(Type ...`): a game that ended asks last, while help text that names RESTART, RESTORE
and QUIT tells, and may be followed by a prompt of its own (`What next?`)."""

_PROMPT_TAIL = re.compile(r"\n>[^\n]*(?:\n[^\n]{0,200}){0,2}\Z")
"""The prompt and what a version 4+ game drew in its status line after it (one or two lines: tryst205's title, then
`Score: 105Moves: 237`), at the end of an unbound game's answer."""
_PROMPT_HEAD = re.compile(r"\A[ \t]*>[ \t]*\n")
"""A prompt alone on the first line (Infocom's version 4+ games print it in front of the next answer)."""
_V3_STATUS = re.compile(
    r"^[ \t]*>?[ \t]*[^\n]{0,200}?[ \t]{2,}"
    r"(?:Score:[ \t]*-?\d+[ \t]+Moves:[ \t]*\d+|Time:[ \t]*\d+:\d+[ \t]*[ap]m)[ \t]*(?:\n|\Z)",
    re.MULTILINE,
)
"""The status line the interpreter draws for a version 1-3 game (Standard 8.2): the room, then `Score: 0  Moves: 0`
or `Time: 7:02 am`, in front of the next answer or at the end of a game's last one."""


@dataclass(frozen=True)
class ScoreReading:
    """A score the game printed, with what it said around it."""

    score: int
    max_score: int | None = None
    moves: int | None = None


def read_score_answer(text: str) -> ScoreReading | None:
    """The score (and the maximum and the moves, when given) in a game's answer to `score` or in its closing words
    (`You scored 1 out of a possible 1, in 4 turns`); None when it gives no number as a score."""
    text = text[-4000:]
    found = _SCORE_ANSWER.search(text)
    moves = _MOVES.search(text)
    turns = int(moves.group(1)) if moves else None
    if found is not None:
        return ScoreReading(int(found.group(1)), int(found.group(2)), turns)
    alone = _SCORE_ALONE.search(text)
    return ScoreReading(int(alone.group(1)), None, turns) if alone else None


def read_ending(text: str, score: int | None = None, max_score: int | None = None) -> tuple[bool, bool]:
    """(game over, victory) as the answer `text` says it, Jericho's way: game over is an ending without a victory.
    The game ended when a banner on a line of its own says how (`*** You have died ***`), or when the answer ends in
    the closing question (RESTART, RESTORE and QUIT, asked last). A banner says who won; the question alone is a
    victory only at the full score."""
    banners = [m.group(1).lower() for m in _BANNER.finditer(text[-4000:])]
    if any(word in banner for banner in banners for word in DEATH_WORDS):
        return True, False
    if banners:  # a story's own closing words (`***  Grunk bring pig back to farm  ***`): deaths say so
        return False, True
    if closing_question(text):
        won = score is not None and max_score is not None and 0 < max_score <= score
        return not won, won
    return False, False


def closing_question(text: str) -> bool:
    """The answer ends by asking what a game asks once it has ended: restart, restore or quit (Inform's `Would you
    like to RESTART, RESTORE a saved game or QUIT?`, Infocom's `(Type RESTORE, RESTART, or QUIT.)`, `end this
    session of the game?`)."""
    tail = text.rstrip()[-CLOSING_CHARS:]
    lower = tail.lower()
    last = lower.rsplit("\n", 1)[-1]
    offers = "restart" in lower and "restore" in lower and ("quit" in lower or "end this session" in lower)
    asked_last = any(word in last for word in ("restart", "restore", "quit", "session")) and _CLOSING_LINE.search(last)
    return offers and bool(asked_last)


def full_score(text: str) -> bool:
    """The answer gives the full score as a verdict, unprompted: how Infocom's games close a won story, with no
    banner and no question (`Your score is 350 (total of 350 points), in 394 moves. This gives you the rank of Master
    Adventurer`). A verdict is called a score and comes with the moves it took or a rank; a running total (trinity's
    `[Your score just went up by 5 points. The total is now 100 out of 100.]`) is news of one more score, and the
    story goes on. Never read from an answer to `score` itself."""
    text = text[-4000:]
    found = _SCORE_ANSWER.search(text)
    if found is None or not 0 < int(found.group(2)) <= int(found.group(1)):
        return False
    around = text[max(0, found.start() - 60) : found.end() + 20]
    return bool(_SCORE_WORD.search(around)) and bool(_VERDICT.search(text[found.end() : found.end() + 200]))


def status_globals(story: bytes, globals_: tuple[int, int]) -> tuple[int, int] | None:
    """(score, moves) a version 1-3 game's status line shows from globals 1 and 2 (signed, Standard 8.2.3.1);
    None for a later version or a time game, whose status line holds no score."""
    if story[0] > 3 or story[1] & TIME_GAME_FLAG:
        return None
    score = globals_[0] - 0x10000 if globals_[0] >= 0x8000 else globals_[0]
    return score, globals_[1]


def without_status_line(text: str, version: int) -> str:
    """An unbound game's answer without the prompt and the status line the interpreter or the game drew into it:
    a version 1-3 game's status line (a whole line), a prompt alone on the first line, and the prompt at the end
    with what a version 4+ game drew after it. Jericho's bindings cut these for the games it knows."""
    if version <= 3:
        text = _V3_STATUS.sub("", text)
    return _PROMPT_TAIL.sub("", _PROMPT_HEAD.sub("", text))
