"""What an episode learns from its records, one turn record at a time, and adds to the store at its end.

`Learning` keeps what this episode's records show (the map, exits that worked or failed, dark rooms, score events,
deaths, valuables lost, what it put down, the loop that ended it, its shortest way to its best score, how far it
followed the store's route) and merges it into the store (idempotent: a resumed episode adds nothing twice).
A model's notes are kept only where this episode's records back them.
"""

from __future__ import annotations

from collections import deque

from managers.knowledge.store import (
    Death,
    EpisodeLine,
    ItemFacts,
    KnowledgeStore,
    Loss,
    RoomFacts,
    Route,
    RouteStep,
    ScoreEvent,
    StrategyNote,
    StuckLoop,
)
from managers.map_graph import MapGraph
from session.commands import DICE_ROLL, HANDING_VERBS, TAKE_VERBS, canonical_command, direction_of, read_command
from session.outcomes import DARK_PHRASES, DEATH, burdened, load_named, not_at_hand
from session.records import DEATH_ENDING, LOOP_ENDINGS, TurnRecord, noun_of

STUCK_TAIL = 100
"""Turns kept to describe the loop that ended an episode (the loop break stops one within about 50)."""
DEATH_WORDS_CHARS = 300
"""The game's words kept for a death."""
ROUTE_SKIP = 4
"""Route steps that may be passed over at once: those the harness turns down (a thief's things, met by chance in the
route's own episode, are not in sight today), when the player goes on with a step after them."""


class Learning:
    """What this episode's records show, kept turn by turn, and the store with it added at the episode's end."""

    def __init__(self, store: KnowledgeStore):
        self.store = store
        self.graph = MapGraph()
        for key, room in store.rooms.items():
            self.graph.visit(int(key), room.name, 0)
            self.graph.rooms[int(key)].exits.update(room.exits)
        self.tried: set[tuple[int | None, str]] = set()
        """(room id, canonical command) pairs this episode has run, leaving out those the game could not try for
        want of their object (worth going back for once it is held)."""
        self.productive: set[tuple[int | None, str]] = set()
        """(room id, canonical command) pairs that changed something this episode (moved, scored, or reached a state
        never seen): a loop that later finds them doing nothing does not make them worth avoiding next time."""
        self.scored: list[ScoreEvent] = []
        self.visited: set[int | None] = set()
        """Rooms this episode has been in: a move that scored for reaching one has nothing left to give."""
        self.deaths: list[Death] = []
        self.losses: list[Loss] = []
        self.dark: set[int] = set()
        self.failed: set[tuple[int, str]] = set()
        self.worked: set[tuple[int, str]] = set()
        self.items: dict[str, ItemFacts] = {}
        self.left: dict[str, int | None] = {}
        """Noun -> room of what this episode dropped and has not taken again (a treasure put down to squeeze through
        a narrow way): a valuable among them is worth fetching for where putting one away scores."""
        self.unfit: set[str] = set()
        """Nouns of things a way refused by name (`You haven't a prayer of getting the coffin down there.`): put down
        for it, they stay where they are."""
        self.tail: deque[TurnRecord] = deque(maxlen=STUCK_TAIL)
        self.rewound: list[StuckLoop] = []
        """The loops this episode was rewound from (`on_stuck = "rewind"`)."""
        self.steps: list[RouteStep] = []
        """This episode's way so far, shortened as a `Route` is."""
        self.walks: list[bool] = []
        """Per step: a walk that changed nothing but the room (a walk back to a step's room cuts from that step)."""
        self.best: Route | None = None
        """This episode's way to its best score."""
        self.route_position = 0
        """Steps of the store's route this episode has played, each ending as recorded."""
        self.route_tries = 0
        """Plays of the step at `route_position` that did not end as recorded."""
        self.route_blows = 0
        """Blows struck since the route's last fight step, while the foe stayed."""
        self.route_done_at: int | None = None
        """The turn the route's last step was played."""
        self.opening_rolls = 0
        """Dice rolls played from the first turn on, before any other command."""
        self.end_rolls = 0
        """Dice rolls played right after the route's last step."""
        self.turns = 0

    def observe(self, record: TurnRecord, episode: str) -> None:
        command = canonical_command(record.command)
        room = record.room_id_before
        if not (record.changed_nothing and not_at_hand(record.response)):  # the egg not held: not yet tried
            self.tried.add((room, command))
        if record.novelty or record.moved or record.score_changed:
            self.productive.add((room, command))
        self.graph.observe(record)
        self.visited.update((record.room_id_before, record.room_id_after))
        self.tail.append(record)
        self._count_rolls(record)
        self._follow_route(record)
        self._extend_route(record, episode)
        if record.room_id_after is not None and any(p in record.response.lower() for p in DARK_PHRASES):
            self.dark.add(record.room_id_after)
        direction = direction_of(record.command)
        if direction is not None and room is not None:
            if record.moved:
                self.worked.add((room, direction))
                self.failed.discard((room, direction))
            else:
                held = [noun_of(name).lower() for name in record.inventory_before]
                self.unfit.update(load_named(record.response, held))
                if not burdened(record.response, held):
                    self.failed.add((room, direction))  # a way refused for the load is there for a lighter one
        elif not record.changed_nothing and not record.moved and record.inventory_after == record.inventory_before:
            # Something here changed, not a mere take or drop (a trap door opened): a way shut before may be open.
            self.failed = {(at, way) for at, way in self.failed if at != room}
        if record.score_after > record.score_before:
            self.scored.append(
                ScoreEvent(
                    room_id=room,
                    room_name=record.room_name_before,
                    command=command,
                    points=record.score_after - record.score_before,
                    episode=episode,
                    turn=record.turn,
                )
            )
            for noun in set(read_command(command).words[1:]):
                if noun in self.items and record.room_name_before not in self.items[noun].scored_in:
                    self.items[noun].scored_in.append(record.room_name_before)
        if record.result_category == DEATH:
            self.deaths.append(
                Death(
                    room_id=room,
                    room_name=record.room_name_before,
                    command=command,
                    words=record.response.strip()[:DEATH_WORDS_CHARS],
                    episode=episode,
                    turn=record.turn,
                )
            )
        self._note_gone(record, command, episode)
        for name in set(record.inventory_after) - set(record.inventory_before):
            noun = noun_of(name).lower()
            self.left.pop(noun, None)
            known = noun in self.items or noun in self.store.items
            if not known:
                self.items[noun] = ItemFacts(first_taken_room=record.room_name_before, first_episode=episode)

    def _note_gone(self, record: TurnRecord, command: str, episode: str) -> None:
        """What left the player's hands: dropped (`left` where it lies), or valuables gone though nothing was dropped
        or handed over (a `Loss`)."""
        room, verb = record.room_id_before, command.split(" ", 1)[0]
        gone = set(record.inventory_before) - set(record.inventory_after)
        if verb == "drop":
            self.left.update(
                (noun, room) for noun in (noun_of(name).lower() for name in gone) if noun not in self.unfit
            )
        lost = sorted(name for name in gone if noun_of(name).lower() in self.valuables())
        if lost and verb not in HANDING_VERBS | {"drop"} and direction_of(command) is None and not record.game_over:
            self.losses.append(
                Loss(
                    room_id=room,
                    room_name=record.room_name_before,
                    command=command,
                    items=lost,
                    words=record.response.strip()[:DEATH_WORDS_CHARS],
                    episode=episode,
                    turn=record.turn,
                )
            )

    def _follow_route(self, record: TurnRecord) -> None:
        route, position = self.store.route, self.route_position
        if route is None or position >= len(route.steps):
            return
        command, step = canonical_command(record.command), route.steps[position]
        ended = (record.room_id_after, record.score_after, record.inventory_after)
        if command == canonical_command(step.command):
            if step.ends_as(*ended):
                self._advance_route(1, record.turn)
            else:
                self.route_tries += 1
            return
        for skipped, then in enumerate(route.steps[position + 1 : position + 1 + ROUTE_SKIP], 1):
            if command == canonical_command(then.command) and then.ends_as(*ended):
                self._advance_route(skipped + 1, record.turn)  # the steps before it were turned down
                return
        if position and command == canonical_command(route.steps[position - 1].command):
            self.route_blows += 1

    def _advance_route(self, steps: int, turn: int) -> None:
        self.route_position += steps
        self.route_tries = self.route_blows = 0
        if self.store.route is not None and self.route_position == len(self.store.route.steps):
            self.route_done_at = turn

    def _extend_route(self, record: TurnRecord, episode: str) -> None:
        """This episode's way so far, kept shortened as it grows; its state at each new best score is `best`. What
        changed nothing is left out, unless it rolled the dice (a replay without it would meet other dice); a walk
        that came back is cut whatever it rolled (replayed, it would be a loop)."""
        if record.changed_nothing and not record.rolled_dice:
            return
        walk = record.moved and not record.score_changed and record.inventory_after == record.inventory_before
        if walk:
            for index in range(len(self.steps) - 1, -1, -1):
                if not self.walks[index]:
                    break
                if self.steps[index].room_id == record.room_id_after:  # back where that walk began
                    del self.steps[index:], self.walks[index:]
                    return
        self.steps.append(
            RouteStep(
                command=record.command.strip(),
                room_id=record.room_id_before,
                room_id_after=record.room_id_after,
                score_after=record.score_after,
                inventory_after=sorted(record.inventory_after),
            )
        )
        self.walks.append(walk)
        if record.score_after > record.score_before and (self.best is None or record.score_after > self.best.score):
            self.best = Route(
                episode=episode,
                score=record.score_after,
                turns=record.turn,
                steps=list(self.steps),
                rerolls=self.opening_rolls,
            )

    def _count_rolls(self, record: TurnRecord) -> None:
        self.turns = record.turn
        if canonical_command(record.command) != DICE_ROLL:
            return
        if record.turn == self.opening_rolls + 1:
            self.opening_rolls += 1
        elif self.route_done_at is not None and record.turn == self.route_done_at + self.end_rolls + 1:
            self.end_rolls += 1

    def _route_done(self) -> bool:
        route = self.store.route
        return route is None or self.route_position >= len(route.steps)

    def merge(self, summary: dict) -> KnowledgeStore:
        """The store with this episode's facts added (idempotent: a resumed episode adds nothing twice)."""
        store = self.store
        episode = summary["episode_id"]
        died_on_route = summary["termination_reason"] == DEATH_ENDING and not self._route_done()
        store.episodes = [e for e in store.episodes if e.episode != episode] + [
            EpisodeLine(
                episode=episode,
                turns=summary["turns"],
                best_score=summary["best_score"],
                termination_reason=summary["termination_reason"],
                died_on_route=died_on_route,
            )
        ]
        for room_id, room in self.graph.rooms.items():
            facts = store.rooms.setdefault(str(room_id), RoomFacts(name=room.name))
            facts.exits.update(room.exits)
            facts.dark = facts.dark or room_id in self.dark
        for room_id, direction in self.failed - self.worked:  # failed in this episode and never worked in it
            facts = store.rooms.get(str(room_id))
            if facts is not None and direction not in facts.exits and direction not in facts.failed_exits:
                facts.failed_exits.append(direction)
        for room_id, direction in self.worked:
            facts = store.rooms.get(str(room_id))
            if facts is not None and direction in facts.failed_exits:
                facts.failed_exits.remove(direction)
        _add_new(store.score_events, self.scored)
        _add_new(store.deaths, self.deaths)
        _add_new(store.losses, self.losses)
        for noun, item in self.items.items():
            store.items.setdefault(noun, item)
        loop = self._loop(summary)
        loops = self.rewound + ([loop] if loop is not None else [])
        if loops:
            store.loops = [x for x in store.loops if x.episode != episode] + loops
        if self.best is not None and _shorter_or_higher(self.best, store.route):
            store.route = self.best
        return store

    def note_loop(self, turns: list[TurnRecord], reason: str, episode: str) -> None:
        """A loop the episode was rewound from (its turns since the last progress): kept like one that ended it."""
        loop = self._loop_of(turns, reason, episode)
        if loop is not None:
            self.rewound.append(loop)

    def _loop(self, summary: dict) -> StuckLoop | None:
        if summary.get("termination_reason") not in LOOP_ENDINGS:
            return None
        since = summary.get("loop_break", {}).get("last_progress_turn", 0)
        turns = [r for r in self.tail if r.turn > since]
        return self._loop_of(turns, summary["termination_reason"], summary["episode_id"])

    def _loop_of(self, turns: list[TurnRecord], reason: str, episode: str) -> StuckLoop | None:
        if not turns:
            return None
        rooms = {str(r.room_id_after): r.room_name_after for r in turns if r.room_id_after is not None}
        failed: dict[str, list[str]] = {}
        for r in turns:
            command = canonical_command(r.command)
            if (
                r.changed_nothing
                and r.room_id_before is not None
                and (r.room_id_before, command) not in self.productive
            ):
                commands = failed.setdefault(str(r.room_id_before), [])
                if command not in commands:
                    commands.append(command)
        return StuckLoop(episode=episode, reason=str(reason), rooms=rooms, failed_commands=failed)

    def episode_facts(self) -> list[str]:
        """This episode's score events and deaths, one line each with its turn (what a synthesis may rest on)."""
        lines = [f"turn {e.turn}: +{e.points} points for '{e.command}' in {e.room_name}" for e in self.scored]
        lines += [f"turn {d.turn}: died after '{d.command}' in {d.room_name}: {d.words[:120]!r}" for d in self.deaths]
        return sorted(lines, key=lambda line: int(line.split(":")[0].split()[1]))

    def add_notes(self, notes: list[tuple[str, int]], episode: str) -> int:
        """Keep the notes whose turn is a recorded score event or death of this episode; how many were kept."""
        evidence = {e.turn for e in self.scored} | {d.turn for d in self.deaths}
        kept = [StrategyNote(note=n, episode=episode, turn=t) for n, t in notes if t in evidence]
        self.store.notes = [n for n in self.store.notes if n.episode != episode] + kept
        return len(kept)

    def forget_gone(self, here: int | None, nouns_here: set[str]) -> None:
        """What this episode put down here and is no longer here went elsewhere (a thief): no use coming back for
        it."""
        self.left = {noun: room for noun, room in self.left.items() if room != here or noun in nouns_here}

    def valuables(self) -> set[str]:
        """Nouns of items whose `take` or `put` scored in some episode (this one included)."""
        nouns = set()
        for event in [*self.store.score_events, *self.scored]:
            words = read_command(event.command).words
            if len(words) > 1 and words[0] in TAKE_VERBS:
                nouns.add(words[-1])
            nouns.add(put_away(event.command)[0])
        return nouns - {""}


def put_away(command: str) -> tuple[str, str]:
    """(item, container) of `put <item> in <container>`, each its last word (("", "") for any other command; the
    container "" when nothing follows `in`)."""
    words = read_command(command).words
    if len(words) < 4 or words[0] != "put" or "in" not in words[2:]:
        return "", ""
    at = words.index("in", 2)
    return words[at - 1], words[-1] if len(words) > at + 1 else ""


def _shorter_or_higher(route: Route, known: Route | None) -> bool:
    """A route worth keeping over the known one: a higher score, or the same in fewer steps."""
    if known is None or route.score != known.score:
        return known is None or route.score > known.score
    return len(route.steps) < len(known.steps)


def _add_new(known: list, found: list) -> None:
    """Append the facts of `found` whose (room, command) is not in `known` yet (a resumed episode adds none twice)."""
    seen = {(fact.room_id, fact.command) for fact in known}
    for fact in found:
        if (fact.room_id, fact.command) not in seen:
            seen.add((fact.room_id, fact.command))
            known.append(fact)
