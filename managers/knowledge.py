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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from managers.map_graph import MapGraph
from session.commands import (
    ATTACK_VERBS, PRIMARY_DIRECTIONS, TAKE_VERBS, canonical_command, command_words, direction_of, is_observation,
)  # fmt: skip
from session.context import Guidance
from session.outcomes import DARK_PHRASES, DEATH
from session.records import LOOP_ENDINGS, GameView, TurnRecord, noun_of

KNOWLEDGE_VERSION = 1
"""The store's format. A store of another version is refused with a clear error, never misread."""
STUCK_TAIL = 100
"""Turns kept to describe the loop that ended an episode (the loop break stops one within about 50)."""
EARLIER_LINES = 8
"""Lines of the "from earlier episodes" block an LLM is shown."""
DEATH_WORDS_CHARS = 300
"""The game's words kept for a death."""


class KnowledgeError(Exception):
    """The store cannot be used: unreadable, corrupt, of another version, or of another game."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


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
    command: str
    points: int
    episode: str
    turn: int


class Death(_Strict):
    room_id: int | None
    room_name: str
    command: str
    words: str
    episode: str
    turn: int


class StuckLoop(_Strict):
    episode: str
    reason: str
    rooms: dict[str, str]
    """Room id -> name of the rooms the loop went through after the last progress."""
    failed_commands: dict[str, list[str]]
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


class EpisodeLine(_Strict):
    episode: str
    turns: int
    best_score: int
    termination_reason: str | None


class KnowledgeStore(_Strict):
    version: int = KNOWLEDGE_VERSION
    game: str
    story_md5: str
    episodes: list[EpisodeLine] = Field(default_factory=list)
    rooms: dict[str, RoomFacts] = Field(default_factory=dict)
    score_events: list[ScoreEvent] = Field(default_factory=list)
    deaths: list[Death] = Field(default_factory=list)
    loops: list[StuckLoop] = Field(default_factory=list)
    items: dict[str, ItemFacts] = Field(default_factory=dict)
    notes: list[StrategyNote] = Field(default_factory=list)


def load_store(path: Path, game: str, story_md5: str) -> KnowledgeStore:
    """The store at `path`, or a new one when there is no file. KnowledgeError for anything else."""
    if not path.exists():
        return KnowledgeStore(game=game, story_md5=story_md5)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise KnowledgeError(f"knowledge store {path} is not readable JSON ({exc}); move it away or pass --no-knowledge") from None
    if not isinstance(data, dict):
        raise KnowledgeError(f"knowledge store {path} is not a JSON object")
    if data.get("version") != KNOWLEDGE_VERSION:
        raise KnowledgeError(
            f"knowledge store {path} has version {data.get('version')!r}; this harness reads version {KNOWLEDGE_VERSION}"
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
        """(room id, canonical command) pairs this episode has run."""
        self.productive: set[tuple[int | None, str]] = set()
        """(room id, canonical command) pairs that changed something this episode (moved, scored, or reached a state
        never seen): a loop that later finds them doing nothing does not make them worth avoiding next time."""
        self.scored: list[ScoreEvent] = []
        self.deaths: list[Death] = []
        self.dark: set[int] = set()
        self.failed: set[tuple[int, str]] = set()
        self.worked: set[tuple[int, str]] = set()
        self.items: dict[str, ItemFacts] = {}
        self.tail: deque[TurnRecord] = deque(maxlen=STUCK_TAIL)

    # -- learning, one record per turn -------------------------------------------------------------------
    def observe(self, record: TurnRecord, episode: str) -> None:
        command = canonical_command(record.command)
        room = record.room_id_before
        self.tried.add((room, command))
        if record.novelty or record.moved or record.score_changed:
            self.productive.add((room, command))
        self.graph.observe(record)
        self.tail.append(record)
        if record.room_id_after is not None and any(p in record.response.lower() for p in DARK_PHRASES):
            self.dark.add(record.room_id_after)
        direction = direction_of(record.command)
        if direction is not None and room is not None:
            if record.moved:
                self.worked.add((room, direction))
                self.failed.discard((room, direction))
            else:
                self.failed.add((room, direction))
        if record.score_after > record.score_before:
            self.scored.append(ScoreEvent(
                room_id=room, room_name=record.room_name_before, command=command,
                points=record.score_after - record.score_before, episode=episode, turn=record.turn,
            ))  # fmt: skip
            for noun in set(command_words(command)[1:]):
                if noun in self.items and record.room_name_before not in self.items[noun].scored_in:
                    self.items[noun].scored_in.append(record.room_name_before)
        if record.result_category == DEATH:
            self.deaths.append(Death(
                room_id=room, room_name=record.room_name_before, command=command,
                words=record.response.strip()[:DEATH_WORDS_CHARS], episode=episode, turn=record.turn,
            ))  # fmt: skip
        for name in set(record.inventory_after) - set(record.inventory_before):
            noun = noun_of(name).lower()
            known = noun in self.items or noun in self.store.items
            if not known:
                self.items[noun] = ItemFacts(first_taken_room=record.room_name_before, first_episode=episode)

    # -- the end of an episode -----------------------------------------------------------------------------
    def merge(self, summary: dict) -> KnowledgeStore:
        """The store with this episode's facts added (idempotent: a resumed episode adds nothing twice)."""
        store = self.store
        episode = summary["episode_id"]
        store.episodes = [e for e in store.episodes if e.episode != episode] + [EpisodeLine(
            episode=episode, turns=summary["turns"], best_score=summary["best_score"],
            termination_reason=summary["termination_reason"],
        )]  # fmt: skip
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
        for noun, item in self.items.items():
            store.items.setdefault(noun, item)
        loop = self._loop(summary)
        if loop is not None:
            store.loops = [x for x in store.loops if x.episode != episode] + [loop]
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
            if r.changed_nothing and r.room_id_before is not None and (r.room_id_before, command) not in self.productive:
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
        open_events = [
            e for e in store.score_events if (e.room_id, e.command) not in scored and not is_observation(e.command)
        ]
        # Here: every known source not realised yet (the agent skips what changed nothing until the room changes),
        # and the valuable items in sight wherever they scored (items move: the thief, the player's own drops).
        valuables = self.valuables()
        held = {obj.num for obj in view.inventory}
        takes = [f"take {o.noun}" for o in view.room_objects if o.noun in valuables and o.num not in held]
        done = {e.command for e in self.scored}
        known_here = tuple(dict.fromkeys([e.command for e in open_events if e.room_id == here] + [t for t in takes if t not in done]))
        # Elsewhere: only sources not attempted in this episode, so a source that cannot work yet draws no shuttle.
        targets = {e.room_id for e in open_events if e.room_id not in (None, here) and (e.room_id, e.command) not in self.tried}
        path = tuple(self._path(here, targets)) if targets else ()
        target = self.graph.follow(here, path) if path else None
        facts = store.rooms.get(str(here))
        explored = tuple(sorted(set(facts.exits) | set(facts.failed_exits))) if facts else ()
        return Guidance(
            known_here=known_here,
            explored_here=explored,
            exits_here=tuple(sorted(facts.exits)) if facts else (),
            path_to_unexplored=tuple(self._path(here, self._unexplored_rooms())),
            avoid_here=self.avoid(here),
            path_to_known=path,
            known_target=self.graph.name_of(target) if target is not None else "",
            valuables=tuple(sorted(valuables)),
            earlier=self.earlier_lines(),
        )

    def valuables(self) -> set[str]:
        """Nouns of items whose `take` or `put` scored in some episode."""
        nouns = set()
        for event in self.store.score_events:
            words = command_words(event.command)
            if len(words) > 1 and (words[0] in TAKE_VERBS or words[0] == "put"):
                nouns.add((words[1:words.index("in")] if "in" in words else words[1:])[-1])
        return nouns

    def _unexplored_rooms(self) -> set[int | None]:
        """Rooms with a primary direction that no episode (this one included) has tried."""
        rooms = set()
        for room_id, room in self.graph.rooms.items():
            facts = self.store.rooms.get(str(room_id))
            tried = set(room.exits) | room.failed_exits | (set(facts.exits) | set(facts.failed_exits) if facts else set())
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
        avoid += self._roaming_fights()
        for loop in store.loops:
            avoid += loop.failed_commands.get(str(room_id), [])
        if facts is not None:
            avoid += [d for d in facts.failed_exits if (room_id, d) not in self.worked]
        return tuple(dict.fromkeys(avoid))

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
        """A death worth avoiding for good: not a fight (blows land at random, and a foe may guard the way on) nor
        a move out of a lit room (the killer was more likely what waited there than the way itself)."""
        words = command_words(death.command)
        if words and words[0] in ATTACK_VERBS:
            return False
        return direction_of(death.command) is None or bool(room and room.dark)

    def earlier_lines(self) -> tuple[str, ...]:
        store = self.store
        lines = []
        if store.episodes:
            best = max(e.best_score for e in store.episodes)
            lines.append(f"{len(store.episodes)} earlier episode(s); best score {best}.")
        events = sorted(store.score_events, key=lambda e: -e.points)
        if events:
            lines.append("Points came from: " + "; ".join(f"{e.command} in {e.room_name} (+{e.points})" for e in events[:5]) + ".")
        if store.deaths:
            lines.append("Deaths: " + "; ".join(f"{d.command} in {d.room_name}" for d in store.deaths[-3:]) + ".")
        lines += [f"Note from episode {n.episode[-6:]}: {n.note}" for n in store.notes[-3:]]
        for loop in store.loops[-2:]:
            lines.append(f"An episode ended stuck ({loop.reason}) in: {', '.join(list(loop.rooms.values())[:5])}.")
        return tuple(lines[:EARLIER_LINES])


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
    lines += ["", "## Deaths", ""] + [f"- {d.room_name}, `{d.command}`: {d.words[:120]!r}" for d in store.deaths]
    lines += ["", "## Loops that ended episodes", ""]
    for loop in store.loops:
        failed = "; ".join(f"{store.rooms[k].name if k in store.rooms else k}: {', '.join(v)}" for k, v in loop.failed_commands.items())
        lines.append(f"- {loop.episode} ({loop.reason}): rooms {', '.join(loop.rooms.values())}; changed nothing: {failed or '-'}")
    lines += ["", "## Items", ""] + [f"- {noun}: first taken in {i.first_taken_room}" + (f"; scored in {', '.join(i.scored_in)}" if i.scored_in else "") for noun, i in store.items.items()]
    lines += ["", f"## Map ({len(store.rooms)} rooms)", ""]
    for key, room in sorted(store.rooms.items(), key=lambda item: item[1].name):
        exits = ", ".join(f"{d} → {store.rooms[str(t)].name if str(t) in store.rooms else t}" for d, t in sorted(room.exits.items()))
        extra = (f"; failed: {', '.join(room.failed_exits)}" if room.failed_exits else "") + ("; dark" if room.dark else "")
        lines.append(f"- {room.name} ({key}): {exits or 'no exit known'}{extra}")
    return "\n".join(lines) + "\n"
