"""Object pre-check: reject, without any LLM call, a command naming an object that is somewhere else.

Lenient by design: a word rejects a command only when every object it can name (synonyms included, read from the
story file) is in another room, and the game has never printed it in this room. Objects held, in the player's room, or where we cannot place them (Zork's global
and local-global objects such as the house's window live outside the room tree) all count as present.
"""

from __future__ import annotations

from collections import defaultdict

from session.commands import DIRECTION_WORDS, FUNCTION_WORDS, TOPIC_VERBS, TRAVEL_VERBS, command_words
from session.jericho_session import JerichoSession
from session.records import Judgement

_IGNORED_WORDS = DIRECTION_WORDS | FUNCTION_WORDS
_MAX_DEPTH = 16
OUT_OF_PLAY = -1
"""Placement of an object whose parent is 0 (not in the game yet, or gone): never present."""


class ObjectPrecheck:
    def __init__(self, session: JerichoSession):
        self.session = session
        self.word_length = session.dictionary_word_length
        self.rooms = session.room_ids()
        self.objects_by_word: dict[str, set[int]] = defaultdict(set)
        for num, words in session.object_vocabulary().items():
            if num not in self.rooms:
                for word in words:
                    self.objects_by_word[word].add(num)

    def check(self, command: str, heard_here: frozenset[str] = frozenset()) -> Judgement | None:
        """A 0.0 judgement when the command names an object that is only in other rooms; else None.

        A word the game has printed in this room passes whatever the object tree says (a door shared by two rooms
        sits in one of them), and so does every word after a verb of talk, spells or writing (a topic) and after the
        `to` of a verb of travel (a destination)."""
        here = self._player_room()
        words = command_words(command)
        if here is None or not words or words[0] in TOPIC_VERBS:
            return None
        if words[0] in TRAVEL_VERBS and "to" in words:
            words = words[: words.index("to")]  # a destination: somewhere else by definition
        for word in head_nouns(words[1:]):
            if word in heard_here:
                continue
            matches = self.objects_by_word.get(word[: self.word_length])
            if matches and all(self._room_of(num) not in (here, None) for num in matches):  # None: a global
                return Judgement(0.0, f"there is no '{word}' here or in your inventory", source="precheck")
        return None

    def _player_room(self) -> int | None:
        return self._room_of(self.session.env.player_obj_num)

    def _room_of(self, num: int) -> int | None:
        """The room an object is in (through containers, vehicles and the player); OUT_OF_PLAY when its chain
        ends at parent 0; None when it cannot be placed (globals live under objects Jericho cannot read)."""
        env = self.session.env
        for _ in range(_MAX_DEPTH):
            if num in self.rooms:
                return num
            obj = env.get_object(num)
            if obj is None:
                return None
            if obj.parent == 0:
                return OUT_OF_PLAY
            num = obj.parent
        return None


def head_nouns(words: list[str]) -> list[str]:
    """The last word of each noun phrase (`gray rod`, `clown mask` -> rod, mask): the words before it may be
    adjectives, which the story file's noun vocabulary does not hold. Phrases end at a function word or a comma's
    `and`."""
    heads, phrase = [], []
    for word in [*words, "and"]:
        if word in _IGNORED_WORDS or word == "and":
            if phrase:
                heads.append(phrase[-1])
            phrase = []
        else:
            phrase.append(word)
    return heads
