"""What earlier episodes of a game learned, from their records only: a store carried from episode to episode.

The store holds facts read off turn records and the Z-machine, never a model's claims: the map (room ids are
stable across episodes), exits that failed, dark rooms, score events (where, which command, how many points),
deaths (where, which command, the game's words), the loops that ended episodes (their rooms and the commands that
changed nothing there) and where items were first taken. `Knowledge` learns one record per turn and merges what it
learned into the store at the episode's end (also when the episode crashes: the orchestrator calls `save` from its
`finally`). The file is JSON, written whole through a temporary file, with a Markdown view beside it.
"""

from __future__ import annotations

import json
import os
from collections import deque
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from managers.map_graph import MapGraph
from session.commands import (
    ATTACK_VERBS,
    DICE_ROLL,
    HANDING_VERBS,
    PRIMARY_DIRECTIONS,
    TAKE_VERBS,
    canonical_command,
    command_words,
    direction_of,
    is_observation,
    why_not_run,
)
from session.context import Guidance
from session.outcomes import DARK_PHRASES, DEATH, burdened, load_named, not_at_hand, title_like
from session.records import DEATH_ENDING, LOOP_ENDINGS, GameView, TurnRecord, noun_of

KNOWLEDGE_VERSION = 1
"""The store's format. A store of another version is refused with a clear error, never misread."""
STUCK_TAIL = 100
"""Turns kept to describe the loop that ended an episode (the loop break stops one within about 50)."""
EARLIER_LINES = 8
"""Lines of the "from earlier episodes" block an LLM is shown."""
DEATH_WORDS_CHARS = 300
"""The game's words kept for a death."""
ROUTE_TRIES = 2
"""Times a route step is played from its starting state without ending as recorded before the route is left."""
ROUTE_BLOWS = 12
"""Blows a route's fight is carried on for while the foe stays in the room."""
ROUTE_SKIP = 4
"""Route steps that may be passed over at once: those the harness turns down (a thief's things, met by chance in the
route's own episode, are not in sight today), when the player goes on with a step after them."""


class KnowledgeError(Exception):
    """The store cannot be used: unreadable, corrupt, of another version, or of another game."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _runnable(command: str) -> str:
    reason = why_not_run(command)
    if reason is not None:
        raise ValueError(reason)
    return command


Command = Annotated[str, AfterValidator(_runnable)]
"""A command from the store, which may be offered to an agent again. A store is a file anyone can edit or share: one
that could never have run (an interpreter command, too long, not printable ASCII) makes the store corrupt."""


class RoomFacts(_Strict):
    name: str
    exits: dict[str, int] = Field(default_factory=dict)
    """Direction -> room id, from moves that worked."""
    failed_exits: list[str] = Field(default_factory=list)
    """Directions that never moved the player from here in any episode."""
    dark: bool = False


class ScoreEvent(_Strict):
    room_id: int | None
    room_name: str
    command: Command
    points: int
    episode: str
    turn: int


class Death(_Strict):
    room_id: int | None
    room_name: str
    command: Command
    words: str
    episode: str
    turn: int


class Loss(_Strict):
    """A command after which valuables the player held were gone, though it gave or dropped nothing (zork1's
    `take skeleton`: a curse banishes them)."""

    room_id: int | None
    room_name: str
    command: Command
    items: list[str]
    words: str
    """The game's answer (what took them)."""
    episode: str
    turn: int


class StuckLoop(_Strict):
    episode: str
    reason: str
    rooms: dict[str, str]
    """Room id -> name of the rooms the loop went through after the last progress."""
    failed_commands: dict[str, list[Command]]
    """Room id -> commands that changed nothing there during the loop."""


class StrategyNote(_Strict):
    """A model's note from an episode's end, kept only because the fact it names is in that episode's records."""

    note: str
    episode: str
    turn: int


class ItemFacts(_Strict):
    first_taken_room: str
    first_episode: str
    scored_in: list[str] = Field(default_factory=list)
    """Rooms where a command naming the item scored."""


class RouteStep(_Strict):
    command: Command
    """As it was typed (a canonical form may not parse: `take (empty_milkbottle)`)."""
    room_id: int | None
    room_id_after: int | None
    score_after: int
    inventory_after: list[str]
    """Sorted names of what the player held after the step."""


class Route(_Strict):
    """The shortest known way to the best score: an episode's own commands up to the turn it first reached its best,
    leaving out those that changed nothing and walks that came back to where they began having changed nothing
    but the room, and keeping every command that rolled the dice, so that a replay meets the same dice. A later
    episode plays a step when it stands where the step before left the player (room, score, what it holds); a
    fight goes on while the foe is in the room, in case the dice fall otherwise all the same."""

    episode: str
    score: int
    turns: int
    """The turn on which that episode reached the score (its route is usually far shorter)."""
    steps: list[RouteStep] = Field(default_factory=list)
    rerolls: int = 0
    """Dice rolls (`DICE_ROLL`) its episode played before its first step: as many again meet the same dice."""


class EpisodeLine(_Strict):
    episode: str
    turns: int
    best_score: int
    termination_reason: str | None
    died_on_route: bool = False
    """It died before it had played the whole route it followed (its fight there went otherwise)."""


class KnowledgeStore(_Strict):
    version: int = KNOWLEDGE_VERSION
    game: str
    story_md5: str
    episodes: list[EpisodeLine] = Field(default_factory=list)
    rooms: dict[str, RoomFacts] = Field(default_factory=dict)
    score_events: list[ScoreEvent] = Field(default_factory=list)
    deaths: list[Death] = Field(default_factory=list)
    losses: list[Loss] = Field(default_factory=list)
    loops: list[StuckLoop] = Field(default_factory=list)
    items: dict[str, ItemFacts] = Field(default_factory=dict)
    notes: list[StrategyNote] = Field(default_factory=list)
    route: Route | None = None


def _at_hand(command: str, held: set[str]) -> bool:
    """The command does not hand over something, or the player holds what it hands over."""
    words = command_words(command)
    if len(words) < 2 or words[0] not in HANDING_VERBS:
        return True
    return words[1] in held or (len(words) > 2 and words[2] in held)  # `put egg in case`, `give red apple to...`


def load_store(path: Path, game: str, story_md5: str) -> KnowledgeStore:
    """The store at `path`, or a new one when there is no file. KnowledgeError for anything else."""
    if not path.exists():
        return KnowledgeStore(game=game, story_md5=story_md5)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KnowledgeError(
            f"knowledge store {path} is not readable JSON ({exc}); move it away or pass --no-knowledge"
        ) from None
    if not isinstance(data, dict):
        raise KnowledgeError(f"knowledge store {path} is not a JSON object")
    if data.get("version") != KNOWLEDGE_VERSION:
        raise KnowledgeError(
            f"knowledge store {path} has version {data.get('version')!r}; "
            f"this harness reads version {KNOWLEDGE_VERSION}"
        )
    try:
        store = KnowledgeStore.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise KnowledgeError(f"knowledge store {path} is corrupt at {where}: {first['msg']}") from None
    if store.game != game or store.story_md5 != story_md5:
        raise KnowledgeError(
            f"knowledge store {path} is for {store.game} (md5 {store.story_md5}), not this story file "
            f"({game}, md5 {story_md5}); pass another --knowledge PATH"
        )
    return store


def write_store(store: KnowledgeStore, path: Path) -> None:
    """The JSON store and its Markdown view, each written whole (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, text in ((path, store.model_dump_json(indent=1) + "\n"), (path.with_suffix(".md"), to_markdown(store))):
        temporary = target.with_name(target.name + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, target)


class Knowledge:
    """One episode's view of the store: learns from its records, guides its turns, saves at its end."""

    def __init__(self, store: KnowledgeStore, path: Path | None):
        self.store = store
        self.path = path
        """Where `save` writes; None: learn and guide, never write (a store shared read-only)."""
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

    # -- learning, one record per turn -------------------------------------------------------------------
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
            for noun in set(command_words(command)[1:]):
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
            if _ends_as(step, *ended):
                self._advance_route(1, record.turn)
            else:
                self.route_tries += 1
            return
        for skipped, then in enumerate(route.steps[position + 1 : position + 1 + ROUTE_SKIP], 1):
            if command == canonical_command(then.command) and _ends_as(then, *ended):
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

    def rerolls_due(self) -> int:
        """Dice rolls still due now (see `Guidance.rerolls`): at the start, or right after the route's last step,
        while nothing but dice rolls has been played there."""
        at_start, after_route = self._rerolls_wanted()
        if self.turns == self.opening_rolls:
            return max(0, at_start - self.opening_rolls)
        if self.route_done_at is not None and self.turns == self.route_done_at + self.end_rolls:
            return max(0, after_route - self.end_rolls)
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

    def route_then(self, next_step: str) -> tuple[str, ...]:
        """The route's steps after `next_step` (what `route_next` offered), up to ROUTE_SKIP of them, for when the
        harness turns down the ones before."""
        route, position = self.store.route, self.route_position
        if route is None or not next_step or position >= len(route.steps) or route.steps[position].command != next_step:
            return ()
        return tuple(step.command for step in route.steps[position + 1 : position + 1 + ROUTE_SKIP])

    def route_next(self, view: GameView) -> str:
        """The store route's command for where the player stands ("" when it has none here)."""
        route, position = self.store.route, self.route_position
        if route is None:
            return ""
        last = route.steps[position - 1] if position else None
        if last is not None and not _ends_as(last, view.room_id, view.score, [o.name for o in view.inventory]):
            return ""  # off the route: the player's own play may bring it back to where the route goes on
        words = command_words(last.command) if last is not None else []
        if len(words) > 1 and words[0] in ATTACK_VERBS and words[1] in {o.noun for o in view.room_objects}:
            return last.command if self.route_blows < ROUTE_BLOWS else ""  # the fight goes on while the foe is here
        if position >= len(route.steps) or self.route_tries >= ROUTE_TRIES:
            return ""
        step = route.steps[position]
        return step.command if step.room_id == view.room_id else ""  # only where the step begins

    # -- the end of an episode -----------------------------------------------------------------------------
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
        if loop is not None:
            store.loops = [x for x in store.loops if x.episode != episode] + [loop]
        if self.best is not None and _shorter_or_higher(self.best, store.route):
            store.route = self.best
        return store

    def _loop(self, summary: dict) -> StuckLoop | None:
        if summary.get("termination_reason") not in LOOP_ENDINGS:
            return None
        since = summary.get("loop_break", {}).get("last_progress_turn", 0)
        turns = [r for r in self.tail if r.turn > since]
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
        reason = summary["termination_reason"]
        return StuckLoop(episode=summary["episode_id"], reason=reason, rooms=rooms, failed_commands=failed)

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

    def save(self, summary: dict) -> Path | None:
        """Merge this episode and write the store (when it has a path); the path written."""
        store = self.merge(summary)
        if self.path is None:
            return None
        write_store(store, self.path)
        return self.path

    # -- guiding a turn ------------------------------------------------------------------------------------
    def guidance(self, view: GameView) -> Guidance:
        store = self.store
        if not (store.rooms or store.score_events):
            return Guidance()
        here = view.room_id
        scored = {(e.room_id, e.command) for e in self.scored}
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
        valuables = self.valuables()
        held = {obj.num for obj in view.inventory}
        takes = [f"take {o.noun}" for o in view.room_objects if o.noun in valuables and o.num not in held]
        # What this episode put down here and is no longer here went elsewhere (a thief): no use coming back for it.
        here_now = {o.noun for o in view.room_objects}
        self.left = {noun: room for noun, room in self.left.items() if room != here or noun in here_now}
        left = {noun: room for noun, room in self.left.items() if noun in valuables}
        done = {e.command for e in self.scored} - {f"take {noun}" for noun in left}  # scored, then put down again
        # A valuable in hand that this episode has not put away yet scores again where putting one away scored.
        deposits = self._deposits()
        stored = {_put_away(e.command)[0] for e in self.scored}
        carried = [o.noun for o in view.inventory if o.noun in valuables and o.noun not in stored]
        puts = [f"put {noun} in {deposits[here]}" for noun in carried] if here in deposits else []
        known_here = tuple(
            dict.fromkeys(
                [e.command for e in open_events if e.room_id == here] + [t for t in takes if t not in done] + puts
            )
        )
        # Elsewhere: only sources not attempted in this episode, so a source that cannot work yet draws no shuttle.
        targets = {
            e.room_id for e in open_events if e.room_id not in (None, here) and (e.room_id, e.command) not in self.tried
        }
        # With a valuable in hand, where putting one away scored; with none, where this episode put one down.
        targets |= {room for room in (deposits if carried else left.values()) if room not in (None, here)}
        path = tuple(self._path(here, targets)) if targets else ()
        target = self.graph.follow(here, path) if path else None
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
            known_target=self.graph.name_of(target) if target is not None else "",
            valuables=tuple(sorted(valuables)),
            deposits=tuple(sorted(set(deposits.values()))),
            earlier=self.earlier_lines(),
        )

    def _reached(self, event: ScoreEvent) -> bool:
        """A move event whose destination this episode has already been in."""
        direction = direction_of(event.command)
        if direction is None:
            return False
        destination = self.graph.follow(event.room_id, [direction])
        return destination is not None and destination in self.visited

    def valuables(self) -> set[str]:
        """Nouns of items whose `take` or `put` scored in some episode (this one included)."""
        nouns = set()
        for event in [*self.store.score_events, *self.scored]:
            words = command_words(event.command)
            if len(words) > 1 and words[0] in TAKE_VERBS:
                nouns.add(words[-1])
            nouns.add(_put_away(event.command)[0])
        return nouns - {""}

    def _deposits(self) -> dict[int | None, str]:
        """Room -> the container where putting an item away scored (`put egg in case`: the trophy case)."""
        found: dict[int | None, str] = {}
        for event in [*self.store.score_events, *self.scored]:
            item, container = _put_away(event.command)
            if item and container:
                found.setdefault(event.room_id, container)
        return found

    def _unexplored_rooms(self) -> set[int | None]:
        """Rooms with a primary direction that no episode (this one included) has tried."""
        rooms = set()
        for room_id, room in self.graph.rooms.items():
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
        return self.graph.path_to(here, lambda room_id: room_id in targets, blocked=self.failed)

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
            avoid += [d for d in facts.failed_exits if (room_id, d) not in self.worked]
        return tuple(dict.fromkeys(avoid))

    def _dangers(self) -> set[str]:
        """Words the game used at two places or more where the player died or lost valuables: what did it roams
        (zork1's thief and his bag), and lingering beside it is how it happened."""
        places: dict[str, set[str]] = {}
        harms = [(d.words, _death_place(d)) for d in self.store.deaths] + [
            (x.words, x.room_name) for x in self.store.losses
        ]
        for words, place in harms:
            for word in set(command_words(words)):
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
        words = command_words(death.command)
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


def _put_away(command: str) -> tuple[str, str]:
    """(item, container) of `put <item> in <container>`, each its last word (("", "") for any other command; the
    container "" when nothing follows `in`)."""
    words = command_words(command)
    if len(words) < 4 or words[0] != "put" or "in" not in words[2:]:
        return "", ""
    at = words.index("in", 2)
    return words[at - 1], words[-1] if len(words) > at + 1 else ""


def _death_place(death: Death) -> str:
    """Where the player died: the room the command was given in, or the one whose title the game printed first (a
    move that got somewhere: what killed was waiting there)."""
    first = next(iter(death.words.strip().splitlines()), "").strip()
    return first if title_like(first) and first != death.room_name else death.room_name


def _ends_as(step: RouteStep, room_id: int | None, score: int, inventory) -> bool:
    """The player stands where the route step left it: the same room and score, holding at least what it held then
    (the dice may have let a take work that was refused then, for a load the player was carrying)."""
    return room_id == step.room_id_after and score == step.score_after and set(step.inventory_after) <= set(inventory)


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


def to_markdown(store: KnowledgeStore) -> str:
    """A readable view of the store (the JSON beside it is the source)."""
    lines = [f"# What earlier episodes of {store.game} learned", "", f"Story file md5 `{store.story_md5}`.", ""]
    lines += ["## Episodes", "", "| episode | turns | best score | ended |", "|---|---|---|---|"]
    lines += [f"| {e.episode} | {e.turns} | {e.best_score} | {e.termination_reason} |" for e in store.episodes]
    lines += ["", "## Score events", "", "| room | command | points | episode, turn |", "|---|---|---|---|"]
    lines += [f"| {e.room_name} | `{e.command}` | {e.points} | {e.episode}, {e.turn} |" for e in store.score_events]
    if store.route is not None:
        route = store.route
        lines += [
            "",
            f"## The shortest known way to {route.score} points ({len(route.steps)} steps; {route.episode} took "
            f"{route.turns} turns)",
            "",
            ", ".join(f"`{step.command}`" for step in route.steps),
        ]
    lines += ["", "## Deaths", ""] + [f"- {d.room_name}, `{d.command}`: {d.words[:120]!r}" for d in store.deaths]
    lines += ["", "## Valuables lost", ""] + [
        f"- {x.room_name}, `{x.command}`: {', '.join(x.items)}" for x in store.losses
    ]
    lines += ["", "## Loops that ended episodes", ""]
    for loop in store.loops:
        failed = "; ".join(
            f"{store.rooms[k].name if k in store.rooms else k}: {', '.join(v)}" for k, v in loop.failed_commands.items()
        )
        rooms = ", ".join(loop.rooms.values())
        lines.append(f"- {loop.episode} ({loop.reason}): rooms {rooms}; changed nothing: {failed or '-'}")
    lines += ["", "## Items", ""] + [
        f"- {noun}: first taken in {i.first_taken_room}"
        + (f"; scored in {', '.join(i.scored_in)}" if i.scored_in else "")
        for noun, i in store.items.items()
    ]
    lines += ["", f"## Map ({len(store.rooms)} rooms)", ""]
    for key, room in sorted(store.rooms.items(), key=lambda item: item[1].name):
        exits = ", ".join(
            f"{d} → {store.rooms[str(t)].name if str(t) in store.rooms else t}" for d, t in sorted(room.exits.items())
        )
        extra = (f"; failed: {', '.join(room.failed_exits)}" if room.failed_exits else "") + (
            "; dark" if room.dark else ""
        )
        lines.append(f"- {room.name} ({key}): {exits or 'no exit known'}{extra}")
    return "\n".join(lines) + "\n"
