"""What a turn changed that the episode never saw before: computed once per turn, stored on the turn record.

Stuck loops revisit the same states; healthy play, even slow and clumsy, keeps reaching states it never reached.
A whole-world hash never saturates (a thief or a clock anywhere makes every state new), so the world is split into
small facts, each of which a loop exhausts quickly, and a fact only counts when the player's command caused it:
the session replays the turn as one idle `look` on a shadow emulator (`GameSession.idle_world`), and what came
out the same there is the game's own doing (a clock, an NPC walking in).

Novelty kinds (NOVELTY_KINDS), each measured on the corpus (benchmarks/corpus.py, README "Results"):
- `new_score`: the score reached a value never seen this episode (taking and dropping a treasure in a loop does not).
- `new_room`: the player's room was never visited.
- `new_room_inventory`: the player never arrived in this room holding exactly this inventory.
- `new_object_state`: an object reached a parent or attributes it never had, and an idle turn would not have, on a
  turn the game did not refuse. Jericho's own noise (the "touched" and "visited" attributes, NPCs that wander on
  their own) is left out, and in a game without Jericho's bindings the flags its library sets on what it lists
  (`GameSession.noise`); so is what changes when a move is made again from a situation it was already made from:
  that is a character reacting to an arrival it has seen before (a dwarf, a gnome waving), not the player changing
  the world.
- `new_game_variable`: a global variable took a value it never had because of the command, on a turn the game did
  not refuse and answered with something it never said (the command's own words left out), or on a move that walked
  within one room id (hollywood's hedge maze keeps the player's spot in a variable, and describes many spots alike).
  Never on a turn the parser noted how it read the command (`(the white onion)`, session.outcomes.PARSER_NOTES): it
  keeps what it inferred in globals of its own, which a first inference sets to values never seen. Nor on a command
  that only looks (`look under bug`, `examine glass`, `read note`): the library notes there what was looked at (a
  TextWorld busy loop restarted its count on `look under bug` answered `You find nothing of interest.`); what looking
  reveals moves things or is news (`new_object_state`, `new_information`). Nor on a turn the game paused in, waiting
  for one key (`GameView.paused`: sherlock's Big Ben strikes the hour in the middle of a walk): the globals it
  sets there take values never seen at every pause, and kept a walk between two streets counting as progress once an
  hour; what the pause itself changed in the world is read as ever.
  The parser's own globals are left out: those that differ between harmless probes (`GameSession.noisy_globals`),
  those that changed on a refused or misunderstood command, those holding a dictionary word or an object within
  reach (the parser's noun), counters (the same step three times running), and any global an idle turn writes too,
  from then on (partyfoul keeps the parser's verb where the start-of-game probes never see it move; an Inform 7
  parser notes the noun it chose for a word several things share, and the next turn clears it).
  Jericho's curated state bytes for the game count as variables too (a submarine's position), but not on a walk
  between two rooms made before with the same things in hand: hhgg counts the player's entries into the Engine
  Room in one of them, and a semi-novel loop that stepped out and back every twelve turns never ended.
- `new_information`: a question, a look-up or an answer to a character (`ask man about eranti`, `look up kebarn in
  encyclopedia`, `reply`) that the game did not refuse, answered with at least INFORMATION_WORDS words it never said
  before (the command's own words left out): reading up or talking is how some games move on, with nothing in memory
  changing.
- `new_position`: a move that kept the room id (a sliding-block puzzle, a maze) and that the game took was answered
  with a text that names the room and that no answer in the room gave before (an arrival's included), as the game
  does when it describes where the player now is inside one room id. A way the game refused is no place, though its
  answer names the room (zork1's `The forest becomes impenetrable to the north.` in a room called Forest), nor is a
  way back into the room it leaves described as the room was on arriving (zork1's coal mine).
- `new_arrangement`: a command that is no move shifted an object the player does not hold (pushed a crate, slid a
  block) and left the objects shifted that way in places they were never in together, though each was in its place
  before (spirit's sliding crates: only their combination is new). Taking and dropping is left out, so juggling an
  inventory is not; so are walks, on which what moves is a character following or reacting (lostpig's pig, Tip in
  seastalker: measured, they kept 5 A-B and semi-novel loops going past their target).
- `new_world_state`: design 000's whole-world hash (docs/design.md) was never seen (for the opt-in
  `new_world_state` signal).

`situation` hashes where the player stands (room, inventory, the room's objects and attributes, the curated state),
leaving out objects seen moving on their own: a loop keeps returning to a few situations, whoever walks by.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from session.commands import QUESTION_PREFIXES, direction_of, is_observation
from session.config import STATE_SIGNALS
from session.game import GameSession
from session.outcomes import PARSER_FAILURE, REFUSED, SUCCESS, parser_noted, without_parser_notes
from session.records import GameView
from session.zmachine import WorldSnapshot, attribute_mask

NOVELTY_KINDS = ("new_score", *STATE_SIGNALS)
"""What a turn can reach that the episode never saw: the state progress signals, and a score never had."""
INFORMATION_WORDS = 5
"""An answer this long at least tells something ("Cholok." is a name, not news; measured on deephome's encyclopedia)."""
COUNTER_RUN = 3
"""A global that moved by the same step this many times running is a counter (a timer, a move count)."""
VARIABLE_CATEGORIES = frozenset({SUCCESS})
"""Outcome categories on which a new variable value counts. A refused or misunderstood command changed nothing; a
"nothing happens" answer ("You feel nothing unexpected", "If you think that'll help") is the parser's bookkeeping
(measured: 55 progress events inside semi-novel stuck loops, none needed by any walkthrough); a move that kept the
room counts as `new_position` instead."""
ECHO_CATEGORIES = frozenset({REFUSED, PARSER_FAILURE})
"""A global the command changed on such a turn holds the parser's words, not the world."""
_DIGITS = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")
_WORDS = re.compile(r"[a-z]+")

IdleWorld = Callable[[], "WorldSnapshot | None"]


@dataclass(frozen=True)
class Novelty:
    kinds: tuple[str, ...]
    """The NOVELTY_KINDS that fired this turn."""
    situation: str
    held: str = ""
    """A short hash of the state of the things in hand (worn, open, lit: their attributes), kept apart from the
    situation: a uniform put on or a canteen shut changes the world in place, which the churn rule counts, while
    the repetition rule compares situations by what is held and what the room holds."""


def response_key(text: str) -> int:
    """The response as compared for novelty: lower case, numbers and spacing ignored."""
    return hash(_SPACES.sub(" ", _DIGITS.sub("#", text.lower())).strip())


def answer_key(text: str, command: str) -> int:
    """The response without the command's own words and the parser's notes on how it read them: "You see nothing
    special about the ceiling" and "... the floor" are one canned answer, and so is "(the white onion) You find
    nothing of interest." after "You find nothing of interest.", while a conversation or a book keeps telling
    something new."""
    echoed = set(_WORDS.findall(command.lower()))
    answer = _DIGITS.sub(" ", without_parser_notes(text).lower())
    return hash(" ".join(word for word in _WORDS.findall(answer) if word not in echoed))


def _unknown() -> None:
    return None


class WorldNovelty:
    """Remembers every fact seen this episode. Bounded by the distinct facts the episode reaches (a loop adds none),
    not by its length."""

    @classmethod
    def of(cls, start: GameView, session: GameSession) -> WorldNovelty:
        """What the episode's first view shows, with what the session knows of the game's noisy state."""
        return cls(start, session.noisy_globals(), session.dictionary_range, session.noise(), session.player)

    def __init__(
        self,
        start: GameView,
        noisy_globals: frozenset[int] = frozenset(),
        dictionary_range: tuple[int, int] = (0, 0),
        jericho_noise: tuple[frozenset[int], frozenset[int]] = (frozenset(), frozenset()),
        player: int = 0,
    ):
        self.noisy_globals = set(noisy_globals) | {0}  # global 0 is the room in version 1-3 games
        self.dictionary_range = dictionary_range
        self.rooms: set[int | None] = {start.room_id}
        self.scores: set[int] = {start.score}
        self.world_states: set[str] = {start.world_hash}
        self.room_inventories: set[tuple] = {self._room_inventory(start)}
        self.positions: set[tuple[int | None, int]] = set()
        self.answers: set[int] = {answer_key(start.text, "")}
        self.object_facts: set[tuple] = set()
        self.variable_facts: set[tuple] = set()
        self.spots: dict[int | None, set[int]] = {}
        """Room -> the globals a move inside it changed (and an idle turn did not): where the player stands inside
        one room id, when the game keeps it in variables (hollywood's hedge maze). Part of the situation there."""
        self._steps: dict[int, tuple[int, int]] = {}
        """Global -> (last step, how many times running) for the counter filter."""
        self._scope: set[int] = set()
        """Objects within reach on the previous turn (the parser's noun may name one of them)."""
        noise_attributes, noise_objects = jericho_noise
        self.ignored_objects = set(noise_objects) | {player}
        """Jericho's noisy objects, and the player (whose place is the room)."""
        self.player = player
        self.pushed: set[int] = set()
        """Objects the player moved without holding them (object numbers)."""
        self.arrangements: set[tuple] = set()
        """Where the pushed objects were together, after every command that moved one of them."""
        self.moves: set[tuple[str, str]] = set()
        """(situation, direction) of every move made: making one again reaches no new object state."""
        self.walks: set[tuple[tuple, str]] = set()
        """(room and inventory, direction) of every move made from a known room: made again, whatever else changed
        in the room, a new game variable it sets is not the player's doing (zork1's thief moved the guidebook, ztuu's
        lights went out meanwhile)."""
        self.autonomous: set[int] = set()
        """Objects seen changing exactly as an idle turn changed them (NPCs, clocks): left out of the situation."""
        world = start.world
        self.attribute_mask = attribute_mask(world.attributes.shape[1] if world is not None else 0, noise_attributes)
        if world is not None:
            for index, parent in enumerate(world.parents.tolist()):
                self.object_facts.add((index + 1, parent))
                self.object_facts.add((index + 1, (world.attributes[index] & self.attribute_mask).tobytes()))
            self.variable_facts.update(("g", g, v) for g, v in enumerate(world.globals.tolist()))
            self.variable_facts.update(("s", i, v) for i, v in enumerate(world.special.tolist()))
        self.situation = self._situation(start)
        """The situation the next command starts from."""

    def observe(
        self,
        before: GameView,
        after: GameView,
        command: str,
        category: str,
        idle_world: IdleWorld = _unknown,
        player: int = 0,
    ) -> Novelty:
        """The turn's novelty. `idle_world()` gives the world after one idle turn from `before` (None: unknown,
        then every change counts as the command's); it is called only when some fact is new, and must cache.
        `player`: the player's object as the session knows it now (0: as before), which a game without Jericho's
        bindings may show only on its first walk: from then on its moves and what it drops are the player's."""
        if player and player != self.player:
            self.ignored_objects = (self.ignored_objects - {self.player}) | {player}
            self.player = player
        kinds: list[str] = []
        if after.score not in self.scores:
            kinds.append("new_score")
        self.scores.add(after.score)
        if after.room_id is not None and after.room_id not in self.rooms:
            kinds.append("new_room")
        self.rooms.add(after.room_id)
        room_inventory = self._room_inventory(after)
        if room_inventory not in self.room_inventories and after.room_id is not None:
            kinds.append("new_room_inventory")
        self.room_inventories.add(room_inventory)
        direction = direction_of(command)
        move = (self.situation, direction or "")
        repeated_move = direction is not None and move in self.moves
        walk = (
            (self._room_inventory(before), direction) if direction is not None and before.room_id is not None else None
        )
        repeated_walk = walk is not None and walk in self.walks
        if direction is not None:
            self.moves.add(move)
        if walk is not None:
            self.walks.add(walk)
        if self._objects(before, after, idle_world) and category not in ECHO_CATEGORIES and not repeated_move:
            kinds.append("new_object_state")
        if direction is None and category not in ECHO_CATEGORIES and self._arrangement(before, after, idle_world):
            kinds.append("new_arrangement")
        answer = answer_key(after.text, command)
        new_answer = answer not in self.answers
        self.answers.add(answer)
        within = direction is not None and after.room_id == before.room_id and category == SUCCESS
        # the globals of a pause take values never seen at every pause (module docstring)
        new_global = not after.paused and self._globals(before, after, category, idle_world, within)
        walked_again = repeated_walk and after.room_id != before.room_id
        inferred = parser_noted(after.text)  # the parser's own globals took what it inferred (module docstring)
        looked = is_observation(command)  # what a look sets is the library's note of what was looked at
        if (new_global and not inferred and not looked and (within or (new_answer and not repeated_walk))) or (
            self._curated(before, after) and not walked_again
        ):
            kinds.append("new_game_variable")
        asked = command.strip().lower().startswith(QUESTION_PREFIXES) and category not in ECHO_CATEGORIES
        if asked and new_answer and len(_WORDS.findall(after.text.lower())) >= INFORMATION_WORDS:
            kinds.append("new_information")
        titled = bool(after.room_name) and after.room_name.lower() in after.text.lower()
        if titled and after.room_id is not None:
            # Every answer that describes the room is a place seen in it, an arrival's too: a way that leads back
            # into the room it left (zork1's coal mine) describes it as the arrival did, and goes nowhere new.
            position = (after.room_id, response_key(after.text))
            if within and position not in self.positions:
                kinds.append("new_position")
            self.positions.add(position)
        if after.world_hash not in self.world_states:
            kinds.append("new_world_state")
        self.world_states.add(after.world_hash)
        self._scope = _within_reach(after)
        self.situation = self._situation(after)
        return Novelty(tuple(kinds), self.situation, self._held(after))

    def restart(self, view: GameView) -> str:
        """The game was put back to `view` (a rewind): the next command starts from its situation, which it returns.
        What the episode saw stays seen."""
        self._scope = _within_reach(view)
        self.situation = self._situation(view)
        return self.situation

    # -- the facts -----------------------------------------------------------------------------------------
    def _objects(self, before: GameView, after: GameView, idle: IdleWorld) -> bool:
        """Whether the command left an object with a parent or attributes it never had."""
        old, new = before.world, after.world
        if old is None or new is None:
            return False
        novel = False
        mask = self.attribute_mask
        changed = (new.parents != old.parents) | ((new.attributes & mask) != (old.attributes & mask)).any(axis=1)
        for index in np.nonzero(changed)[0].tolist():
            if index + 1 in self.ignored_objects:
                continue
            facts = ((index + 1, int(new.parents[index])), (index + 1, (new.attributes[index] & mask).tobytes()))
            fresh = any(fact not in self.object_facts for fact in facts)
            self.object_facts.update(facts)
            if fresh:
                if self._differs_from_idle(idle(), index, new):
                    novel = True
                elif idle() is not None:
                    self.autonomous.add(index + 1)
        return novel

    def _arrangement(self, before: GameView, after: GameView, idle: IdleWorld) -> bool:
        """Whether the command moved an object the player holds neither before nor after, leaving the objects moved
        that way in an arrangement never seen (an idle turn moving them the same way: a character's doing)."""
        old, new = before.world, after.world
        if old is None or new is None:
            return False
        moved = [
            index
            for index in np.nonzero(new.parents != old.parents)[0].tolist()
            if index + 1 not in self.ignored_objects
            and index + 1 not in self.autonomous
            and self.player not in (int(old.parents[index]), int(new.parents[index]))
        ]
        if not moved:
            return False

        def placed(world: WorldSnapshot) -> tuple:
            return tuple((num, int(world.parents[num - 1])) for num in sorted(self.pushed))

        if not self.pushed.issuperset(index + 1 for index in moved):  # where they stood before is seen, too
            self.pushed.update(index + 1 for index in moved)
            self.arrangements.add(placed(old))
        arrangement = placed(new)
        if arrangement in self.arrangements:
            return False
        self.arrangements.add(arrangement)
        return any(self._differs_from_idle(idle(), index, new) for index in moved)

    @staticmethod
    def _differs_from_idle(idle: WorldSnapshot | None, index: int, new: WorldSnapshot) -> bool:
        if idle is None:
            return True
        return bool(
            idle.parents[index] != new.parents[index] or (idle.attributes[index] != new.attributes[index]).any()
        )

    def _globals(self, before: GameView, after: GameView, category: str, idle: IdleWorld, within: bool = False) -> bool:
        """Whether the command gave a global variable a value it never had. `within`: the command was a move inside
        one room id, whose spot a variable may keep: a value it never had on such a move in this room is a spot never
        reached (the same variable may have served other ends elsewhere: hollywood's hedge maze), and walking on in
        a straight line steps it alike (no counter)."""
        old, new = before.world, after.world
        if old is None or new is None:
            return False
        novel = False
        for index in np.nonzero(new.globals != old.globals)[0].tolist():
            value = int(new.globals[index])
            if not within:
                self._count_steps(index, value - int(old.globals[index]))
            fact = ("g", index, value) if not within else ("spot", after.room_id, index, value)
            fresh = fact not in self.variable_facts
            self.variable_facts.add(fact)
            if index in self.noisy_globals:
                continue
            world = idle() if fresh or category in ECHO_CATEGORIES else None
            if (world is not None and world.globals[index] != old.globals[index]) or category in ECHO_CATEGORIES:
                # An idle turn writes it too (alike: a clock; else the parser's verb where the probes never saw it
                # move, or the noun it chose for a word several things share, which the next turn clears), or a
                # command the game refused changed it: never the player's doing, here or later.
                self.noisy_globals.add(index)
                continue
            if category in VARIABLE_CATEGORIES and not self._parser_value(value, before):
                novel = novel or fresh
                if within:
                    self.spots.setdefault(after.room_id, set()).add(index)
        return novel

    def _curated(self, before: GameView, after: GameView) -> bool:
        """Whether one of Jericho's curated state bytes took a value it never had (whoever caused it: a vehicle
        under way is getting somewhere)."""
        old, new = before.world, after.world
        if old is None or new is None:
            return False
        novel = False
        for index in np.nonzero(new.special != old.special)[0].tolist():
            fact = ("s", index, int(new.special[index]))
            novel = novel or fact not in self.variable_facts
            self.variable_facts.add(fact)
        return novel

    def _count_steps(self, index: int, step: int) -> None:
        last, run = self._steps.get(index, (0, 0))
        run = run + 1 if step == last else 1
        self._steps[index] = (step, run)
        if run >= COUNTER_RUN:
            self.noisy_globals.add(index)

    def _parser_value(self, value: int, before: GameView) -> bool:
        """A dictionary word, or an object within reach: what the parser keeps of the command's words."""
        low, high = self.dictionary_range
        if low <= value < high:
            return True
        return value in self._scope or value == before.room_id

    def _room_inventory(self, view: GameView) -> tuple:
        return view.room_id, tuple(sorted(_carried(view)))

    def _held(self, view: GameView) -> str:
        """The attributes of what the player holds (managers.novelty.Novelty.held); "" when memory is unread."""
        if view.world is None:
            return ""
        held = np.array(sorted(num - 1 for num in _carried(view) if num not in self.autonomous), dtype=np.int64)
        return hashlib.blake2b((view.world.attributes[held] & self.attribute_mask).tobytes(), digest_size=6).hexdigest()

    def _situation(self, view: GameView) -> str:
        digest = hashlib.blake2b(repr(self._room_inventory(view)).encode(), digest_size=6)
        world = view.world
        if world is not None:
            here = np.array([num - 1 for num in _around(view) if num not in self.autonomous], dtype=np.int64)
            digest.update(here.tobytes())
            digest.update(world.parents[here].tobytes())
            digest.update((world.attributes[here] & self.attribute_mask).tobytes())
            digest.update(world.special.tobytes())
            spot = sorted(self.spots.get(view.room_id, ()))
            if spot:
                digest.update(world.globals[spot].tobytes())
        return digest.hexdigest()


def _carried(view: GameView) -> list[int]:
    """Object numbers the player carries, named or not (GameView.unnamed)."""
    return [obj.num for obj in view.inventory] + list(view.unnamed_carried)


def _around(view: GameView) -> list[int]:
    """Object numbers in the room, named or not, but what the player carries."""
    carried = set(view.unnamed_carried)
    return [obj.num for obj in view.room_objects] + [num for num in view.unnamed if num not in carried]


def _within_reach(view: GameView) -> set[int]:
    """What the parser may take the next command's nouns for: the things at hand, named or not, and the room."""
    return set(_carried(view) + _around(view)) | {view.room_id or 0}
