"""What the agent is shown from the store each turn: `Guidance` (session/context.py) for the room it stands in.

Read from the store and from what this episode has learned so far (`Learning`): score sources still open here and the
way to the nearest one elsewhere, valuables and where putting them away scored, the route's next step, what to avoid
here (deaths, losses, loops, exits that never worked), the dangers in sight and a few lines on earlier episodes.
"""

from __future__ import annotations

from managers.knowledge.learning import ROUTE_SKIP, Learning, put_away
from managers.knowledge.store import Death, KnowledgeStore, RoomFacts, ScoreEvent
from session.commands import (
    ATTACK_VERBS,
    HANDING_VERBS,
    PRIMARY_DIRECTIONS,
    canonical_command,
    direction_of,
    is_observation,
    read_command,
    words_in,
)
from session.context import Guidance
from session.outcomes import title_like
from session.records import DEATH_ENDING, GameView

EARLIER_LINES = 8
"""Lines of the "from earlier episodes" block an LLM is shown."""
ROUTE_TRIES = 2
"""Times a route step is played from its starting state without ending as recorded before the route is left."""
ROUTE_BLOWS = 12
"""Blows a route's fight is carried on for while the foe stays in the room."""


def _at_hand(command: str, held: set[str]) -> bool:
    """The command does not hand over something, or the player holds what it hands over."""
    words = read_command(command).words
    if len(words) < 2 or words[0] not in HANDING_VERBS:
        return True
    return words[1] in held or (len(words) > 2 and words[2] in held)  # `put egg in case`, `give red apple to...`


class Guide:
    """What an episode is shown from the store, given what it has learned so far."""

    def __init__(self, store: KnowledgeStore, learning: Learning):
        self.store = store
        self.learning = learning

    def guidance(self, view: GameView) -> Guidance:
        store = self.store
        if not (store.rooms or store.score_events):
            return Guidance()
        here = view.room_id
        scored = {(e.room_id, e.command) for e in self.learning.scored}
        # Points that came on a look or a wait came from the clock, not from the command: nothing to repeat.
        # A move scored for reaching its room: another way in (zork1's window, `in` or `west`) gives nothing more.
        # Putting or giving something can only work while it is held.
        held_nouns = {obj.noun for obj in view.inventory}
        open_events = [
            e
            for e in store.score_events
            if (e.room_id, e.command) not in scored
            and not is_observation(e.command)
            and not self._reached(e)
            and _at_hand(e.command, held_nouns)
        ]
        # Here: every known source not realised yet (the agent skips what changed nothing until the room changes),
        # and the valuable items in sight wherever they scored (items move: the thief, the player's own drops).
        valuables = self.learning.valuables()
        held = {obj.num for obj in view.inventory}
        takes = [f"take {o.noun}" for o in view.room_objects if o.noun in valuables and o.num not in held]
        here_now = {o.noun for o in view.room_objects}
        self.learning.forget_gone(here, here_now)
        left = {noun: room for noun, room in self.learning.left.items() if noun in valuables}
        done = {e.command for e in self.learning.scored} - {
            f"take {noun}" for noun in left
        }  # scored, then put down again
        # A valuable in hand that this episode has not put away yet scores again where putting one away scored.
        deposits = self._deposits()
        stored = {put_away(e.command)[0] for e in self.learning.scored}
        carried = [o.noun for o in view.inventory if o.noun in valuables and o.noun not in stored]
        puts = [f"put {noun} in {deposits[here]}" for noun in carried] if here in deposits else []
        known_here = tuple(
            dict.fromkeys(
                [e.command for e in open_events if e.room_id == here] + [t for t in takes if t not in done] + puts
            )
        )
        # Elsewhere: only sources not attempted in this episode, so a source that cannot work yet draws no shuttle.
        targets = {
            e.room_id
            for e in open_events
            if e.room_id not in (None, here) and (e.room_id, e.command) not in self.learning.tried
        }
        # With a valuable in hand, where putting one away scored; with none, where this episode put one down.
        targets |= {room for room in (deposits if carried else left.values()) if room not in (None, here)}
        path = tuple(self._path(here, targets)) if targets else ()
        target = self.learning.graph.follow(here, path) if path else None
        facts = store.rooms.get(str(here))
        route_next = self.route_next(view)
        explored = tuple(sorted(set(facts.exits) | set(facts.failed_exits))) if facts else ()
        dangers = self._dangers()
        return Guidance(
            dangers_here=tuple(
                sorted({o.noun for o in view.room_objects if o.noun.lower() in dangers and o.num not in held})
            ),
            known_here=known_here,
            explored_here=explored,
            exits_here=tuple(sorted(facts.exits)) if facts else (),
            path_to_unexplored=tuple(self._path(here, self._unexplored_rooms())),
            avoid_here=self.avoid(here),
            rerolls=self.rerolls_due(),
            path_to_known=path,
            route_next=route_next,
            route_then=self.route_then(route_next),
            known_target=self.learning.graph.name_of(target) if target is not None else "",
            valuables=tuple(sorted(valuables)),
            deposits=tuple(sorted(set(deposits.values()))),
            earlier=self.earlier_lines(),
        )

    def _reached(self, event: ScoreEvent) -> bool:
        """A move event whose destination this episode has already been in."""
        direction = direction_of(event.command)
        if direction is None:
            return False
        destination = self.learning.graph.follow(event.room_id, [direction])
        return destination is not None and destination in self.learning.visited

    def _deposits(self) -> dict[int | None, str]:
        """Room -> the container where putting an item away scored (`put egg in case`: the trophy case)."""
        found: dict[int | None, str] = {}
        for event in [*self.store.score_events, *self.learning.scored]:
            item, container = put_away(event.command)
            if item and container:
                found.setdefault(event.room_id, container)
        return found

    def _unexplored_rooms(self) -> set[int | None]:
        """Rooms with a primary direction that no episode (this one included) has tried."""
        rooms = set()
        for room_id, room in self.learning.graph.rooms.items():
            facts = self.store.rooms.get(str(room_id))
            tried = (
                set(room.exits) | room.failed_exits | (set(facts.exits) | set(facts.failed_exits) if facts else set())
            )
            if PRIMARY_DIRECTIONS - tried:
                rooms.add(room_id)
        return rooms

    def _path(self, here: int | None, targets: set[int | None]) -> list[str]:
        """Known exits to the nearest target, leaving out the exits that failed in this episode since they last
        worked (a closed window), so a blocked way draws no shuttle back and forth."""
        return self.learning.graph.path_to(here, lambda room_id: room_id in targets, blocked=self.learning.failed)

    def avoid(self, room_id: int | None) -> tuple[str, ...]:
        """Deaths here, what changed nothing here in a loop that ended an episode, exits that never worked here."""
        store = self.store
        facts = store.rooms.get(str(room_id))
        avoid = [d.command for d in store.deaths if d.room_id == room_id and self._deadly(d, facts)]
        avoid += [loss.command for loss in store.losses if loss.room_id == room_id]
        avoid += self._roaming_fights()
        for loop in store.loops:
            avoid += loop.failed_commands.get(str(room_id), [])
        if facts is not None:
            avoid += [d for d in facts.failed_exits if (room_id, d) not in self.learning.worked]
        return tuple(dict.fromkeys(avoid))

    def _dangers(self) -> set[str]:
        """Words the game used at two places or more where the player died or lost valuables: what did it roams
        (zork1's thief and his bag), and lingering beside it is how it happened."""
        places: dict[str, set[str]] = {}
        harms = [(d.words, _death_place(d)) for d in self.store.deaths] + [
            (x.words, x.room_name) for x in self.store.losses
        ]
        for words, place in harms:
            for word in set(words_in(words)):
                places.setdefault(word, set()).add(place)
        return {word for word, where in places.items() if len(where) >= 2}

    def _roaming_fights(self) -> list[str]:
        """Attacks on a foe that killed the player in two rooms or more: that foe roams (zork1's thief), so it guards
        no way on, and fighting it only risks the episode. A guard that killed once where it stands may still be
        beaten."""
        rooms: dict[str, set] = {}
        attacks: dict[str, list[str]] = {}
        for death in self.store.deaths:
            words = canonical_command(death.command).split()
            if len(words) > 1 and words[0] in ATTACK_VERBS:
                rooms.setdefault(words[1], set()).add(death.room_id)
                attacks.setdefault(words[1], []).append(" ".join(words))
        return [attack for foe, where in rooms.items() if len(where) >= 2 for attack in attacks[foe]]

    @staticmethod
    def _deadly(death: Death, room: RoomFacts | None) -> bool:
        """A death worth avoiding for good: not a fight (blows land at random, and a foe may guard the way on), nor
        a move out of a lit room (the killer was more likely what waited there than the way itself), nor a move
        that got somewhere (the game printed another room's title: what killed was waiting there)."""
        words = read_command(death.command).words
        if words and words[0] in ATTACK_VERBS:
            return False
        if direction_of(death.command) is None:
            return True
        return bool(room and room.dark) and _death_place(death) == death.room_name

    def earlier_lines(self) -> tuple[str, ...]:
        store = self.store
        lines = []
        if store.episodes:
            best = max(e.best_score for e in store.episodes)
            lines.append(f"{len(store.episodes)} earlier episode(s); best score {best}.")
        events = sorted(store.score_events, key=lambda e: -e.points)
        if events:
            lines.append(
                "Points came from: "
                + "; ".join(f"'{e.command}' at {e.room_name} (+{e.points})" for e in events[:5])
                + "."
            )
        if store.deaths:
            lines.append("Deaths: " + "; ".join(f"'{d.command}' at {d.room_name}" for d in store.deaths[-3:]) + ".")
        lines += [f"Note from episode {n.episode[-6:]}: {n.note}" for n in store.notes[-3:]]
        for loop in store.loops[-2:]:
            lines.append(f"An episode ended stuck ({loop.reason}) in: {', '.join(list(loop.rooms.values())[:5])}.")
        return tuple(lines[:EARLIER_LINES])

    def rerolls_due(self) -> int:
        """Dice rolls still due now (see `Guidance.rerolls`): at the start, or right after the route's last step,
        while nothing but dice rolls has been played there."""
        at_start, after_route = self._rerolls_wanted()
        learning = self.learning
        if learning.turns == learning.opening_rolls:
            return max(0, at_start - learning.opening_rolls)
        if learning.route_done_at is not None and learning.turns == learning.route_done_at + learning.end_rolls:
            return max(0, after_route - learning.end_rolls)
        return 0

    def _rerolls_wanted(self) -> tuple[int, int]:
        """(at the start, after the route): the route's own start, then one per later death where it happened."""
        route, episodes = self.store.route, self.store.episodes
        ids = [e.episode for e in episodes]
        since = ids.index(route.episode) + 1 if route is not None and route.episode in ids else 0
        died = [e for e in episodes[since:] if e.termination_reason == DEATH_ENDING]
        if route is None:
            return len(died), 0
        on_route = sum(e.died_on_route for e in died)
        return route.rerolls + on_route, len(died) - on_route

    def route_then(self, next_step: str) -> tuple[str, ...]:
        """The route's steps after `next_step` (what `route_next` offered), up to ROUTE_SKIP of them, for when the
        harness turns down the ones before."""
        route, position = self.store.route, self.learning.route_position
        if route is None or not next_step or position >= len(route.steps) or route.steps[position].command != next_step:
            return ()
        return tuple(step.command for step in route.steps[position + 1 : position + 1 + ROUTE_SKIP])

    def route_next(self, view: GameView) -> str:
        """The store route's command for where the player stands ("" when it has none here)."""
        route, position = self.store.route, self.learning.route_position
        if route is None:
            return ""
        last = route.steps[position - 1] if position else None
        if last is not None and not last.ends_as(view.room_id, view.score, [o.name for o in view.inventory]):
            return ""  # off the route: the player's own play may bring it back to where the route goes on
        words = read_command(last.command).words if last is not None else ()
        if len(words) > 1 and words[0] in ATTACK_VERBS and words[1] in {o.noun for o in view.room_objects}:
            return (
                last.command if self.learning.route_blows < ROUTE_BLOWS else ""
            )  # the fight goes on while the foe is here
        if position >= len(route.steps) or self.learning.route_tries >= ROUTE_TRIES:
            return ""
        step = route.steps[position]
        return step.command if step.room_id == view.room_id else ""  # only where the step begins


def _death_place(death: Death) -> str:
    """Where the player died: the room the command was given in, or the one whose title the game printed first (a
    move that got somewhere: what killed was waiting there)."""
    first = next(iter(death.words.strip().splitlines()), "").strip()
    return first if title_like(first) and first != death.room_name else death.room_name
