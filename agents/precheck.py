"""Object pre-check: refuse, without any LLM call and without a turn, a command the game itself would refuse as
naming something not in sight or a word it does not know.

The command is played on the session's shadow emulator from the live state (`GameSession.trial`), and it is
refused only when the game's own answer says so (session.outcomes: not in sight, unknown word) and the command
changed nothing there (room, score, what the player holds, the world hash), or nothing more than the same verb with
a word the game does not know changes (some parsers mark what they weighed). The reason is the game's answer,
quoted: the agent reads exactly what a player typing the command would have read. Nothing is guessed from the
object table: Inform objects answer to words through routines no table holds, to plurals, to orders given to a
character, and scenery is often no object at all.
"""

from __future__ import annotations

from session.commands import read_command
from session.game import GameSession
from session.outcomes import not_here, unknown_word
from session.records import Judgement

MAX_QUOTED_ANSWER = 200
"""Characters of the game's answer quoted in a refusal's reason (a not-in-sight answer is one short line)."""
NONSENSE_WORDS = ("qxzvj", "zqvxj", "vjxqz")
"""Words for a command the game surely refuses (the first one its dictionary does not hold): `take qxzvj` leaves
the parser's own marks, which are no change the command made."""


class ObjectPrecheck:
    def __init__(self, session: GameSession):
        self.session = session
        length = session.dictionary_word_length
        known = {entry.word[:length] for entry in session.dictionary()}
        self.nonsense = next((word for word in NONSENSE_WORDS if word[:length] not in known), None)

    def check(self, command: str) -> Judgement | None:
        """A 0.0 judgement quoting the game's answer when the game would refuse `command` as naming something not
        in sight or an unknown word, changing nothing; else None (the command goes on to the critic).

        Only a command that names something can be out of sight: `look` in the dark answers "you can't see a
        thing", which is no refusal of an object. Interpreter commands never reach the shadow (they are refused
        before, with their own reason). A command the shadow emulator crashed or hung on is not refused: the game's
        answer is unknown."""
        read = read_command(command)
        words = read.words
        if not words or read.refusal is not None:
            return None
        refused_anyway = f"{words[0]} {self.nonsense}" if self.nonsense else None
        trial = self.session.trial(command, refused_anyway)
        if trial is None:  # the shadow emulator could not play it: nothing to quote, nothing refused
            return None
        names_something = len(words) > 1 and read.direction is None
        refused = unknown_word(trial.text) or (names_something and not_here(trial.text))
        if not refused or trial.changed:
            return None
        return Judgement(0.0, f'the game answers: "{quoted(trial.text)}"', source="precheck")


def quoted(text: str) -> str:
    """The game's answer on one line, bounded, without the input prompt some games print around it."""
    line = " ".join(text.split()).strip("> ")
    return line if len(line) <= MAX_QUOTED_ANSWER else line[: MAX_QUOTED_ANSWER - 3].rstrip() + "..."
