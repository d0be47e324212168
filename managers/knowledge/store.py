"""The knowledge store's file: what earlier episodes of a game learned, as JSON with a Markdown view beside it.

The store holds facts read off turn records and the Z-machine, never a model's claims: the map (room ids are
stable across episodes), exits that failed, dark rooms, score events (where, which command, how many points),
deaths (where, which command, the game's words), the loops that ended episodes (their rooms and the commands that
changed nothing there) and where items were first taken. A store is read whole and checked (version, game, story
file, every command runnable), and written whole through a temporary file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from session.commands import read_command

KNOWLEDGE_VERSION = 1
"""The store's format. A store of another version is refused with a clear error, never misread."""


class KnowledgeError(Exception):
    """The store cannot be used: unreadable, corrupt, of another version, or of another game."""


class _KnowledgeEntry(BaseModel):
    """An entry of the knowledge file, which takes no key it does not define."""

    model_config = ConfigDict(extra="forbid")


def _runnable(command: str) -> str:
    reason = read_command(command).refusal
    if reason is not None:
        raise ValueError(reason)
    return command


Command = Annotated[str, AfterValidator(_runnable)]
"""A command from the store, which may be offered to an agent again. A store is a file anyone can edit or share: one
that could never have run (an interpreter command, too long, not printable ASCII) makes the store corrupt."""


class RoomFacts(_KnowledgeEntry):
    name: str
    exits: dict[str, int] = Field(default_factory=dict)
    """Direction -> room id, from moves that worked."""
    failed_exits: list[str] = Field(default_factory=list)
    """Directions that never moved the player from here in any episode."""
    dark: bool = False


class ScoreEvent(_KnowledgeEntry):
    room_id: int | None
    room_name: str
    command: Command
    points: int
    episode: str
    turn: int


class Death(_KnowledgeEntry):
    room_id: int | None
    room_name: str
    command: Command
    words: str
    episode: str
    turn: int


class Loss(_KnowledgeEntry):
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


class StuckLoop(_KnowledgeEntry):
    episode: str
    reason: str
    rooms: dict[str, str]
    """Room id -> name of the rooms the loop went through after the last progress."""
    failed_commands: dict[str, list[Command]]
    """Room id -> commands that changed nothing there during the loop."""


class StrategyNote(_KnowledgeEntry):
    """A model's note from an episode's end, kept only because the fact it names is in that episode's records."""

    note: str
    episode: str
    turn: int


class ItemFacts(_KnowledgeEntry):
    first_taken_room: str
    first_episode: str
    scored_in: list[str] = Field(default_factory=list)
    """Rooms where a command naming the item scored."""


class RouteStep(_KnowledgeEntry):
    command: Command
    """As it was typed (a canonical form may not parse: `take (empty_milkbottle)`)."""
    room_id: int | None
    room_id_after: int | None
    score_after: int
    inventory_after: list[str]
    """Sorted names of what the player held after the step."""

    def ends_as(self, room_id: int | None, score: int, inventory) -> bool:
        """The player stands where this step left it: the same room and score, holding at least what it held then
        (the dice may have let a take work that was refused then, for a load the player was carrying)."""
        return (
            room_id == self.room_id_after and score == self.score_after and set(self.inventory_after) <= set(inventory)
        )


class Route(_KnowledgeEntry):
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


class EpisodeLine(_KnowledgeEntry):
    episode: str
    turns: int
    best_score: int
    termination_reason: str | None
    died_on_route: bool = False
    """It died before it had played the whole route it followed (its fight there went otherwise)."""


class KnowledgeStore(_KnowledgeEntry):
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
