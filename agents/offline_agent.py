"""The offline agent: a deterministic explorer driven by the map and the Z-machine's object tree. Not an LLM.

Each turn it takes the first command, in this order, that it has not already tried in this room and that the
critic has not rejected this turn:
1. light a held light source when the room is dark, or leave the way it came when it holds none; attack a
   hostile creature with a held weapon when it bars the way (the move's answer names it) or the fight is on
   (again and again: fights take several blows); a foe that bars nothing is left alone (a fight can kill);
2. take / open / move / read what the room's objects and its description suggest;
3. an untried exit the description mentions, or north/south/east/west/up/down;
4. after a rewind (`on_stuck = "rewind"`: its first ideas led nowhere), second thoughts: answer a yes-or-no
   question, get up, a way the description names that was refused before the world here changed, a look at each
   thing in sight or held, then push, search, pull, touch... each thing in sight;
5. the next step towards the nearest room with an untried exit of 3;
6. the other untried exits here (diagonals, in, out), then the next step towards any untried exit;
7. a known exit, rotating so it does not bounce between two rooms.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from agents.base import Agent, Proposal
from session.commands import (
    ATTACK_VERBS,
    COMPASS_DIRECTIONS,
    DICE_ROLL,
    DIRECTIONS,
    OPPOSITE,
    PRIMARY_DIRECTIONS,
    TAKE_VERBS,
    canonical_command,
    direction_of,
    directions_named,
    every_way_named,
    spellings_of,
)
from session.context import AgentContext
from session.outcomes import DARK_PHRASES, YES_NO_QUESTION, burdened, load_named, not_here

_LIGHTS = ("lantern", "lamp", "torch", "candles", "match")
# Common interactive-fiction affordances: nouns worth a verb when the room description mentions them.
_OPENABLE = frozenset(
    "window door mailbox trapdoor trap case box bag sack chest bottle coffin lid grating gate cage basket".split()
)
_MOVABLE = frozenset("rug carpet leaves mat".split())
_TYING = frozenset("rope cord cable line vine".split())
_FIXTURES = frozenset("railing rail banister bannister hook post pole beam peg stake ring bar".split())
"""A rope (_TYING) tied to a fixture (_FIXTURES) lets a player climb down (zork1's rope and railing)."""
_CONTAINERS = frozenset("case chest box basket cabinet coffin urn vase".split())
"""Nouns of things that hold others: where a valuable item may be worth putting."""
_HOSTILE = frozenset("troll thief cyclops orc goblin dragon wolf bear spider snake guard".split())
_WEAPONS = ("sword", "axe", "knife", "dagger", "stiletto", "blade")
_READABLE = frozenset("leaflet book note sign label paper guidebook manual inscription map advertisement".split())
_OVERLOADED = ("load is too heavy", "carrying too much", "hands are full", "can't carry any more", "too many things")
_CLOSED = re.compile(r"\bthe ((?:[a-z]+ )?[a-z]+) is closed")
"""How a game refuses a move through a closed door (`The trap door is closed.`): the door to open."""
_EXIT_WORDS = {
    "stairs": "up",
    "staircase": "up",
    "chimney": "up",
    "ladder": "up",
    "window": "in",
    "entrance": "in",
    "doorway": "in",
    "entry": "in",
    "in": "in",
    "out": "out",
}
"""Words that hint at an exit beyond the directions a description names (session.commands.directions_named)."""
_GETTING_UP = ("stand up",)
"""A stuck player's first second thought (see OfflineAgent._second_thoughts): it may be lying or sitting."""
_SECOND_VERBS = ("push", "search", "pull", "touch", "look in", "look behind", "turn", "climb", "enter", "look under")
"""Verbs a stuck player tries on each thing in sight after looking at them all, in this order (common
interactive-fiction verbs)."""
_LAST_THOUGHTS = ("get out", "listen")
"""Second thoughts once everything in sight was handled: the player may be inside something, or a sound may tell."""
_KEYS = frozenset("key keys keycard card".split())
"""Nouns of things held that may unlock something in sight."""


class OfflineMemory(BaseModel):
    """What the offline agent remembers beyond its context (each field is the OfflineAgent attribute of that name):
    recorded with the turns, given back on `--resume`."""

    model_config = ConfigDict(extra="forbid")
    read: list[str] = []
    retake: str = ""
    reopen: str = ""
    left_behind: list[str] = []
    stored: list[str] = []
    known_tried: list[tuple[int | None, str]] = []
    unpacked: list[str] = []
    engaged: str = ""
    probed: list[str] = []
    treasures: list[str] = []
    score: int | None = None
    room: int | None = None
    way_out: str | None = None
    absent_foes: list[str] = []


class OfflineAgent(Agent):
    kind = "offline"

    def __init__(self, words: frozenset[str] = frozenset(), word_length: int = 9):
        self.words = words
        """Words the game's dictionary knows (as stored: cut to `word_length`); other description words are never
        tried. Empty: every word may be tried."""
        self.word_length = word_length
        self.read: set[str] = set()
        """Items already read this episode (reading the same leaflet in every room teaches nothing)."""
        self.retake = ""
        """A `take` refused because the load was too heavy: tried again once something was dropped."""
        self.reopen = ""
        """`open <door>` when a move was refused for that door being closed: opened before, it may open again (a
        trap door that crashed shut behind the player, seen from the other side)."""
        self.left_behind: set[str] = set()
        """Nouns dropped to make room: not picked up again."""
        self.stored: set[str] = set()
        """Valuables put into a container: never taken out again (that would give the points back)."""
        self.known_tried: set[tuple[int | None, str]] = set()
        """(room, command) of earlier episodes' score sources tried since the score last rose: once is enough until
        something changes (a trap door shut since)."""
        self.unpacked: set[str] = set()
        """Nouns of things inside carried containers already taken out (or tried): once per episode."""
        self.engaged = ""
        """The foe a fight was begun with in this room."""
        self.probed: set[str] = set()
        """Nouns of second lights and weapons taken once to see whether they score."""
        self.treasures: set[str] = set()
        """Nouns whose taking scored in this episode: never dropped to make room."""
        self.score: int | None = None
        self.room: int | None = None
        self.way_out: str | None = None
        """The way back where the player came from into this room (None when it came by no move)."""
        self.absent_foes: set[str] = set()
        """Foes the game said are not here (`You can't see any thief here!`) since the player came into this room:
        an object in the room's tree can be hidden (zork1's thief), and attacking it only burns turns."""

    def propose(self, context: AgentContext) -> Proposal:
        return Proposal(self._command(context))

    def memory(self) -> dict[str, Any]:
        remembered = {name: getattr(self, name) for name in OfflineMemory.model_fields}
        # Sets in a fixed order, so that equal memories are equal records.
        listed = {
            name: sorted(value, key=str) if isinstance(value, set) else value for name, value in remembered.items()
        }
        return OfflineMemory(**listed).model_dump(mode="json")

    def recall(self, memory: dict[str, Any]) -> None:
        try:
            recalled = OfflineMemory.model_validate(memory)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise ValueError(f"{'.'.join(map(str, error['loc']))}: {error['msg']}") from None
        for name in OfflineMemory.model_fields:
            value = getattr(recalled, name)
            setattr(self, name, set(value) if isinstance(value, list) else value)

    def _command(self, context: AgentContext) -> str:
        self._note_score(context)
        for command in self._candidates(context):
            key = canonical_command(command)
            on_route = key in _route_keys(context)  # the way that scored, failed moves and all
            if (
                key in context.rejected
                or key in context.banned
                or (_avoided(key, context.knowledge.avoid_here) and not on_route)
            ):
                continue
            if key in DIRECTIONS:
                command = self._spoken(key)
                if not command:
                    continue
            # Dropping something held always does something, however often it was dropped here before.
            retry = on_route or key in (self.retake, self.reopen, DICE_ROLL) or key.startswith("drop ")
            if (
                key in context.tried_here
                and command not in DIRECTIONS
                and key.split()[0] not in ATTACK_VERBS
                and not retry
            ):
                continue
            if retry:
                self.retake = "" if key == self.retake else self.retake
                self.reopen = "" if key == self.reopen else self.reopen
            if key.startswith("drop ") and self.retake and key.split()[-1] not in self._keep(context):
                self.left_behind.add(key[len("drop ") :])  # a valuable put down to get through is fetched later
            if key.startswith("read "):
                self.read.add(key[len("read ") :])
            if key.startswith("put "):
                self.stored.add(key.split()[1])
            if key in context.knowledge.known_here:
                self.known_tried.add((context.view.room_id, key))
            return command
        return self._leave(context) or ("look" if "look" not in context.rejected else "wait")

    def _spoken(self, direction: str) -> str:
        """The direction in a spelling the game's dictionary has (enchanter knows `ne` but not `northeast`); "" when
        it has none (a move the game would not understand is no way out). The full word when the dictionary is
        unknown."""
        spellings = (direction, *spellings_of(direction))
        return next((word for word in spellings if self._knows(word)), "")

    def _leave(self, context: AgentContext) -> str:
        """Every idea here is spent: a way out rather than looking or waiting again (without it, streaks of up to
        28 turns). Known ways, the least recently taken first, then ways never tried, the way back, those earlier
        episodes took. One turned down earlier this turn is proposed again: the harness then runs the best of the
        turn's candidates, and a move judged poor still gets somewhere where a look does not. Never a way that failed
        here, that the loop break forbids, that earlier episodes say to avoid, or whose word the game does not know;
        "" when there is none (a room every way out of failed)."""
        newest_first = [canonical_command(command) for command, _ in reversed(context.recent)]
        unused = len(newest_first)
        known = sorted(context.known_exits, key=lambda d: -(newest_first.index(d) if d in newest_first else unused))
        ways = (*known, *context.untried_exits, self.way_out, *context.knowledge.exits_here)
        ways = dict.fromkeys(way for way in ways if way)
        usable = [
            way
            for way in ways
            if way not in context.failed_exits
            and way not in context.banned
            and self._spoken(way)
            and not _avoided(way, context.knowledge.avoid_here)
        ]
        fresh = [way for way in usable if way not in context.rejected]
        return self._spoken(next(iter(fresh or usable))) if usable else ""

    def _second_thoughts(self, context: AgentContext, mentioned: set[str]):
        """After a rewind its first ideas led nowhere: what a stuck player tries next, in each room once. An answer
        when the game asks for a yes or a no, getting up, a named way that may be open now, a look at every thing in
        sight and held, then every verb of _SECOND_VERBS on the things in sight, verb by verb, leaving out a thing
        the game would not examine (not in sight, a word it does not take). Only words the game's dictionary knows.
        Measured with benchmarks/studies/rewind.py (docs/results/rewind.md)."""
        if YES_NO_QUESTION.search(context.view.text.lower()):
            yield from ("yes", "no")
        seen = [o.noun for o in context.view.room_objects if o.name in context.visible_objects]
        held = [o.noun for o in context.view.inventory if o.noun.isalpha()]
        yield from (command for command in _GETTING_UP if self._knows(command))
        # A way the description names that was refused before the world here changed (standing up, a door pushed).
        yield from (d for d in context.failed_exits if d in mentioned and d not in context.failed_here)
        yield from (f"examine {thing}" for thing in dict.fromkeys(seen + held) if self._knows(f"examine {thing}"))
        here = [thing for thing in dict.fromkeys(seen) if f"examine {thing}" not in context.failed_here]
        keys = [noun for noun in held if noun in _KEYS]
        for verb in _SECOND_VERBS:
            yield from (f"{verb} {thing}" for thing in here if self._knows(f"{verb} {thing}"))
            if verb == "pull":  # a lock after the things were handled: the key may be the way on
                yield from (f"unlock {thing} with {key}" for thing in here for key in keys)
        yield from (command for command in _LAST_THOUGHTS if self._knows(command))

    def _knows(self, command: str) -> bool:
        """Every word of `command` is in the game's dictionary (always, when the dictionary is unknown)."""
        return not self.words or all(word[: self.word_length] in self.words for word in command.lower().split())

    def _note_score(self, context: AgentContext) -> None:
        """The score rose: what was taken last is a treasure, and earlier episodes' sources are worth a new try."""
        last = _last_command(context).split()
        if self.score is not None and context.view.score > self.score:
            self.known_tried.clear()
            if len(last) > 1 and last[0] in TAKE_VERBS:
                self.treasures.add(last[-1])
        self.score = context.view.score

    def _keep(self, context: AgentContext) -> set[str]:
        """Nouns of the valuables: what scored when taken here or in an earlier episode."""
        return self.treasures | set(context.knowledge.valuables)

    def _note_room(self, context: AgentContext) -> None:
        """A new room: foes and fights start afresh, and the way back is the opposite of the move that came in."""
        if context.view.room_id != self.room:
            self.room, self.absent_foes, self.engaged = context.view.room_id, set(), ""
            self.way_out = _way_back(context)

    def _note_absent_foes(self, context: AgentContext) -> None:
        last = _last_command(context).split()
        if len(last) > 1 and last[0] in ATTACK_VERBS and not_here(context.view.text):
            self.absent_foes.add(last[1])

    # -- candidates, best first ---------------------------------------------------------------------------
    def _candidates(self, context: AgentContext):
        view = context.view
        self._note_room(context)
        if context.knowledge.rerolls:
            yield DICE_ROLL  # new dice where an earlier episode died (see Guidance.rerolls)
        if context.knowledge.route_next:  # an earlier episode's way to its best score, where it still holds
            yield context.knowledge.route_next
            steps = (context.knowledge.route_next, *context.knowledge.route_then)
            for before, step in zip(steps, steps[1:]):
                if canonical_command(before) not in context.rejected:
                    break
                yield step  # the harness turned the step down: the route goes on past it
        if context.knowledge.dangers_here:  # what killed or robbed earlier episodes in several places is here: go
            ways = [self.way_out] + sorted(set(context.known_exits) | set(context.knowledge.exits_here))
            yield from dict.fromkeys(way for way in ways if way and way not in context.failed_exits)
        text = view.text.lower()
        if any(marker in text for marker in DARK_PHRASES):
            lights = [obj.noun for obj in view.inventory if obj.noun in _LIGHTS]
            yield from (f"turn on {noun}" for noun in lights)
            if not lights and _way_back(context):
                yield _way_back(context)  # grues eat players who linger in the dark
        held = {obj.noun for obj in view.inventory}
        has_light = bool(held & set(_LIGHTS))
        last = _last_command(context)
        keep = self._keep(context)
        if any(marker in text for marker in _OVERLOADED):
            # Make room, keeping what keeps us alive: drop the last thing picked up that is no light or weapon,
            # then take again what did not fit.
            self.retake = last if last.startswith("take ") else self.retake
            yield from (f"drop {name}" for name in _spare(view.inventory) if name.split()[-1] not in keep)
        elif direction_of(last) is not None and burdened(text, held):
            # A way that only lets a light load through (a chimney): drop one thing and go again, what the game
            # named first (it will never pass: left for good), then the rest, the light last of all and the treasures
            # last but one (what is left behind here can be fetched on another trip).
            self.retake = last
            named = load_named(text, held)
            self.left_behind.update(named)
            light = next((o.num for o in reversed(view.inventory) if o.noun in _LIGHTS), None)
            spare = [o for o in view.inventory if o.num != light or o.noun in named]
            yield from (f"drop {o.noun}" for o in sorted(spare, key=lambda o: (o.noun not in named, o.noun in keep)))
        if self.retake:
            yield self.retake
        probe = last.split()
        if len(probe) > 1 and probe[0] in TAKE_VERBS and probe[-1] in self.probed and probe[-1] not in keep:
            if any(o.noun == probe[-1] for o in view.inventory):
                self.left_behind.add(probe[-1])
                yield f"drop {probe[-1]}"  # a second light or weapon that did not score: hands stay free
        closed = _CLOSED.search(text) if direction_of(last) is not None else None
        if closed:
            self.reopen = f"open {closed.group(1)}"
            yield self.reopen
        weapons = [weapon for weapon in _WEAPONS if weapon in held]  # the best weapon first
        self._note_absent_foes(context)
        for foe in (obj.noun for obj in view.room_objects if obj.noun in _HOSTILE and obj.noun not in self.absent_foes):
            if weapons and (_confronts(foe, last, text) or self.engaged == foe):
                self.engaged = foe  # until the player leaves the room
                yield f"kill {foe} with {weapons[0]}"
            elif not weapons and _way_back(context):
                yield _way_back(context)  # unarmed before a foe: no way on past it, so find a weapon first
        # A light and a weapon before anything else: known points often lie in the dark, past a foe.
        for obj in view.room_objects:
            needed = (obj.noun in _LIGHTS and not has_light) or (obj.noun in _WEAPONS and not weapons)
            if needed and obj.noun not in self.left_behind:
                yield f"take {_object_phrase(obj.name, obj.noun)}"
        # What scored here in an earlier episode, unless it changed nothing the last time (until the room changes).
        here = view.room_id
        yield from (
            c
            for c in context.knowledge.known_here
            if c not in context.refused_here and (here, c) not in self.known_tried
        )
        # Items that scored when taken may score again when stored: try each container here once.
        containers = [
            o.noun for o in view.room_objects if o.noun in _CONTAINERS and o.num not in {i.num for i in view.inventory}
        ]
        if context.knowledge.deposits:  # where putting valuables away scored: never into another container
            containers = [noun for noun in containers if noun in context.knowledge.deposits]
        for item in (o.noun for o in view.inventory if o.noun in keep):
            yield from (f"put {item} in {container}" for container in containers)
        described = set(re.findall(r"[a-z]+", context.room_text.lower() + " " + text))
        # A light first (grues), then weapons, then the rest in the game's order.
        for obj in sorted(view.room_objects, key=lambda o: (o.noun not in _LIGHTS, o.noun not in _WEAPONS)):
            name = _object_phrase(obj.name, obj.noun)
            # One light and one weapon are enough: a second of either is taken once, to see whether it scores (a
            # torch may be a treasure), and put down again if it does not: it would fill the hands a treasure needs.
            second = (obj.noun in _LIGHTS and has_light) or (obj.noun in _WEAPONS and weapons)
            if (
                obj.noun not in self.left_behind
                and obj.noun not in self.stored
                and not (second and obj.noun in self.probed)
            ):
                if second:
                    self.probed.add(obj.noun)
                yield f"take {name}"
            if obj.noun in _OPENABLE:
                yield f"open {name}"
            if obj.noun in _MOVABLE:
                yield f"move {name}"
            if obj.noun in _FIXTURES:
                yield from (f"tie {rope} to {name}" for rope in (o.noun for o in view.inventory if o.noun in _TYING))
        for noun in sorted(described & (_OPENABLE | _MOVABLE)):
            if self._knows(noun):
                yield f"move {noun}" if noun in _MOVABLE else f"open {noun}"
        for obj in view.held_inside:  # taken out once: a treasure in a carried nest scores when taken on its own
            if obj.noun not in self.unpacked:
                self.unpacked.add(obj.noun)
                yield f"take {obj.noun}"
        for obj in view.inventory:
            if obj.noun in _READABLE and obj.noun not in self.read:
                yield f"read {obj.noun}"
        mentioned = set(directions_named(context.room_text + " " + text))
        mentioned |= {d for word, d in _EXIT_WORDS.items() if word in described}
        if every_way_named(context.room_text + " " + text):
            mentioned |= COMPASS_DIRECTIONS  # the diagonals too: they are tried only where the text names them
        if context.knowledge.path_to_known:  # towards a room where an earlier episode scored
            yield context.knowledge.path_to_known[0]
        fresh = [d for d in context.untried_exits if d not in context.knowledge.explored_here]
        first = [d for d in fresh if d in mentioned or d in PRIMARY_DIRECTIONS]
        if not first and context.knowledge.path_to_unexplored:  # earlier episodes saw everything here: move on
            yield context.knowledge.path_to_unexplored[0]
        first = first or [d for d in context.untried_exits if d in mentioned or d in PRIMARY_DIRECTIONS]
        yield from sorted(first, key=lambda d: (d not in mentioned, DIRECTIONS.index(d)))
        if context.rewinds:
            yield from self._second_thoughts(context, mentioned)
        if context.path_to_primary_frontier:
            yield context.path_to_primary_frontier[0]
        yield from (d for d in context.untried_exits if d not in first)
        if context.path_to_frontier:
            yield context.path_to_frontier[0]
        exits = sorted(context.known_exits)
        if exits:
            # Least recently used first, so it does not bounce between two rooms.
            newest_first = [cmd for cmd, _ in reversed(context.recent)]
            yield from sorted(
                exits, key=lambda d: -newest_first.index(d) if d in newest_first else -len(newest_first) - 1
            )
        yield from context.knowledge.exits_here  # ways out earlier episodes took, though they failed here today


def _last_command(context: AgentContext) -> str:
    """The last command run, in canonical form ("" on the first turn)."""
    return canonical_command(context.recent[-1][0]) if context.recent else ""


def _route_keys(context: AgentContext) -> set[str]:
    """The canonical forms of the route's next steps (see Guidance.route_next and route_then)."""
    return {canonical_command(c) for c in (context.knowledge.route_next, *context.knowledge.route_then) if c}


def _way_back(context: AgentContext) -> str | None:
    """The move back the way the player came, when the last command was a move."""
    came = direction_of(_last_command(context))
    return OPPOSITE[came] if came is not None else None


def _confronts(foe: str, last: str, text: str) -> bool:
    """The foe stands in the way or the fight is on: the game names it in answer to a move (`The troll fends you off`,
    or a room it guards), or to an attack on it. A foe the game passes over in silence is left alone."""
    words = last.split()
    acting = direction_of(last) is not None or (len(words) > 1 and words[0] in ATTACK_VERBS and words[1] == foe)
    return acting and foe in re.findall(r"[a-z]+", text)


def _avoided(key: str, avoid: tuple[str, ...]) -> bool:
    """Earlier episodes say not to: the command itself, or an attack on a foe they say not to fight, whatever the
    verb or weapon (`attack thief with axe` when `kill thief with sword` killed the player)."""
    if key in avoid:
        return True
    words = key.split()
    if len(words) < 2 or words[0] not in ATTACK_VERBS:
        return False
    return any(a.split()[0] in ATTACK_VERBS and a.split()[1:2] == words[1:2] for a in avoid)


def _spare(inventory) -> list[str]:
    """What may be dropped to make room, in order: a second light or weapon first, then the rest, oldest first. One
    light (the first taken) and the best weapon stay."""
    oldest_first = list(reversed(inventory))  # the inventory lists the newest first
    light = next((o.num for o in oldest_first if o.noun in _LIGHTS), None)
    weapon = next((o.num for w in _WEAPONS for o in oldest_first if o.noun == w), None)
    kept = {light, weapon}
    extra = [o.name.lower() for o in oldest_first if (o.noun in _LIGHTS or o.noun in _WEAPONS) and o.num not in kept]
    rest = [o.noun for o in oldest_first if o.noun not in _LIGHTS and o.noun not in _WEAPONS]
    return list(dict.fromkeys(extra + rest))


def _object_phrase(name: str, noun: str) -> str:
    """`trap door` rather than `door` when the short name is two plain words, so two doors stay apart."""
    words = name.lower().split()
    return " ".join(words) if len(words) == 2 and all(w.isalpha() for w in words) else noun
