"""Immutable records that flow one way through a turn: view -> judgement -> outcome -> TurnRecord; and the one
reader of the files an episode leaves (EVENTS_FILE, SUMMARY_FILE)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from session.zmachine import WorldSnapshot


def noun_of(name: str) -> str:
    """The last word of an object's short name, which the parser accepts as its noun (`brass lantern` -> lantern)."""
    words = name.replace("-", " ").split()
    return words[-1] if words else name


@dataclass(frozen=True, slots=True)
class GameObject:
    """A Z-machine object: its number and short name (e.g. 12, "brass lantern")."""

    num: int
    name: str

    @property
    def noun(self) -> str:
        """The last word of the short name, which the parser accepts as the object's noun."""
        return noun_of(self.name)


@dataclass(frozen=True, slots=True)
class GameView:
    """What the Z-machine says about the world right now; nothing here is parsed from text."""

    room_id: int | None
    room_name: str
    score: int
    moves: int
    inventory: tuple[GameObject, ...]
    room_objects: tuple[GameObject, ...]
    world_hash: str
    text: str
    game_over: bool = False
    victory: bool = False
    world: WorldSnapshot | None = field(default=None, compare=False, repr=False)
    """The object tree, attributes and globals behind this view (for novelty; never shown to an agent)."""
    held_inside: tuple[GameObject, ...] = field(default=(), compare=False)
    """Objects inside what the player holds (an egg in a carried nest): in hand, not yet taken on their own."""
    rolled_dice: bool = False
    """The command that led here drew random numbers (the emulator's random-number state moved)."""
    paused: bool = False
    """The game stopped in the middle of its answer and waits for one key (sherlock's Big Ben interrupts a walk with
    `[Press any key to continue.]`): the answer goes on with whatever is typed next."""
    came_from: tuple[int, str] | None = None
    """(room, title) this turn walked from, when the room was unknown until this walk showed which object the player
    is (a game without Jericho's bindings whose opening has no way out): the turn's record starts there."""
    unnamed: tuple[int, ...] = field(default=(), compare=False)
    """Object numbers at hand (in the room, two levels deep, and carried) whose short names are empty, so that
    `room_objects` and `inventory` leave them out: Inform 7 games print their names from elsewhere (TextWorld's
    have no other kind). Never shown to an agent; their places and attributes are the world's state all the same."""
    unnamed_carried: tuple[int, ...] = field(default=(), compare=False)
    """Of `unnamed`, those the player carries."""
    unreadable: tuple[str, ...] = ()
    """What this game has not shown so far (`JerichoSession.unreadable`: score, max_score, room): the fields that
    stand for it hold 0, None or "(nowhere)", and no prompt shows them."""


class Ending(StrEnum):
    """Why an episode ended: `summary.json`'s `termination_reason` (a string in every file)."""

    VICTORY = "victory"
    GAME_OVER = "game_over"
    """The game ended without a victory (the player died)."""
    MAX_TURNS = "max_turns"
    STUCK = "stuck_no_progress"
    """A loop-break stop rule."""
    LOOP_GATE = "loop_gate"
    """A failure gate with `gate_action = "terminate"`."""
    BUDGET = "budget"
    LLM_UNAVAILABLE = "llm_unavailable"
    SCRIPT_EXHAUSTED = "script_exhausted"
    INTERRUPTED = "interrupted"
    RECORDS_UNWRITABLE = "records_unwritable"
    EMULATOR_FAILED = "emulator_failed"
    """The live game's Z-machine emulator crashed or hung (session.emulator); summary.json's `emulator_failure`
    says how and on which command."""
    ERROR = "error"


class EpisodeOver(Exception):
    """The episode ends: whatever ends it raises this (the agent's script running out, the LLM failing, the
    emulator failing, the turn's own verdict), and the turn loop catches it in one place. A subclass names its
    ending once (`ending`); the turn raises it with the ending given."""

    ending: Ending = Ending.ERROR

    def __init__(self, detail: str = "", ending: Ending | None = None):
        super().__init__(detail)
        if ending is not None:
            self.ending = ending

    @property
    def detail(self) -> str:
        return str(self)


DEATH_ENDING = Ending.GAME_OVER
"""The termination reason of an episode the game ended without a victory (the player died)."""
LOOP_ENDINGS = frozenset({Ending.STUCK, Ending.LOOP_GATE})
"""Termination reasons by which the loop break ended an episode."""
BROKEN_ENDINGS = frozenset(
    {Ending.LLM_UNAVAILABLE, Ending.INTERRUPTED, Ending.RECORDS_UNWRITABLE, Ending.EMULATOR_FAILED, Ending.ERROR}
)
"""Endings that cut the episode off from outside it: nothing it learned is drawn from (no strategy notes), and
`--resume` goes on from its last record. An emulator's failure is one: the interpreter failed, not the game or the
player. A resume replays to the command that failed; a hang that was the machine's load passes, and an agent that is
no script may propose another command there."""
FINISHED_ENDINGS = frozenset(Ending) - BROKEN_ENDINGS
"""Endings after which there is nothing to resume."""
NOT_RUN = "not_run"
"""TurnRecord.fallback, and a judgement's source, for an interpreter command (files, restart, quit, undo) that the
harness never runs: a script's step, or a proposal refused before it is judged."""
BLOCKING_SOURCES = frozenset({"precheck", "ban", "final_rejection", NOT_RUN})
"""Judgements from these sources reject outright: such a candidate is never run as the best of a bad lot."""
UNPARSEABLE_FALLBACK = "unparseable_reply"
"""TurnRecord.fallback prefix (`unparseable_reply:<kind>`) when no LLM reply of the turn was a command."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """A critic's score in [0, 1] with a one-line reason; `adjustments` are loop-break changes applied after."""

    score: float
    reason: str
    source: str = "critic"
    base_score: float | None = None
    adjustments: tuple[str, ...] = ()

    @property
    def base(self) -> float:
        return self.score if self.base_score is None else self.base_score


@dataclass(frozen=True, slots=True)
class Candidate:
    """One proposal of a turn with its judgement."""

    command: str
    judgement: Judgement
    accepted: bool
    thought: str = ""
    """The agent's thought behind this proposal (LLM agents in `thought` mode)."""
    note: str = ""
    """A fact the agent asked to keep for the episode with this proposal (see agents.base.Proposal.note)."""


@dataclass(slots=True, frozen=True)
class TurnRecord:
    """Everything one turn did, built once and whole as the turn ends (frozen: every manager and detector reads the
    same record). Written to events.jsonl as one line, read by every detector."""

    turn: int
    command: str
    agent_kind: str
    forced: bool
    room_id_before: int | None
    room_name_before: str
    room_id_after: int | None
    room_name_after: str
    score_before: int
    score_after: int
    world_hash_before: str
    world_hash_after: str
    inventory_before: tuple[str, ...]
    inventory_after: tuple[str, ...]
    response: str
    critic_base_score: float
    critic_reason: str
    critic_adjusted_score: float
    adjustments: tuple[str, ...]
    would_reject: bool
    rejections: int
    candidates: list[dict[str, Any]]
    llm_calls: dict[str, int]
    llm_tokens: dict[str, int]
    wall_seconds: float
    game_over: bool = False
    victory: bool = False
    new_room: bool = False
    """The room after this turn was never visited before in this episode."""
    new_world_state: bool = False
    """The world-state hash after this turn was never seen before in this episode."""
    novelty: tuple[str, ...] = ()
    """What this turn reached that the episode never saw (managers.novelty.NOVELTY_KINDS)."""
    situation: str = ""
    """A short hash of where the player stands afterwards (room, inventory, the room's objects, curated state)."""
    held: str = ""
    """A short hash of the state of the things in hand afterwards (worn, open, lit), apart from the situation."""
    rolled_dice: bool = False
    """The command drew random numbers (a fight's blows, a canned answer picked at random): a replay that leaves it
    out meets other dice from then on. `wait` and walking roll none in most games."""
    result_category: str = "success"
    """session.outcomes category: success, parser_failure, refused, no_effect, blocked_exit or death."""
    fallback: str | None = None
    """Why the command was not the agent's own (e.g. `unparseable_reply:prose`: `look` after unparseable replies)."""
    ran: bool = True
    """False when the command was refused before the emulator (an interpreter command such as `save`): the game did
    not move, and no loop detector counts the turn."""
    parse_failures: list[dict[str, Any]] = field(default_factory=list)
    """LLM replies that failed validation this turn (kind, reply)."""
    objectives_completed: list[dict[str, Any]] = field(default_factory=list)
    objectives_added: list[str] = field(default_factory=list)
    """LLM objectives the critic proposed this turn (llm mode): kept so `--resume` restores them exactly."""
    thought: str = ""
    """The agent's thought behind the command (LLM agents in `thought` mode); never sent to the game."""
    note: str = ""
    """A fact the agent asked to keep for the episode with the command that ran (kept and shown in later prompts)."""
    llm_cost_usd: dict[str, float] = field(default_factory=dict)
    """This turn's LLM cost by role, from the configured price table."""
    events: list[dict[str, Any]] = field(default_factory=list)
    branch: int = 0
    """Rewinds before this turn (`on_stuck = "rewind"`): a `rewind` event in a later turn's record says which turns
    of this branch were abandoned."""
    agent_memory: dict[str, Any] | None = None
    """What the agent remembered beyond its context after this turn's proposals (`Agent.memory`), when it changed
    since the last record that gives it; None: unchanged, or an agent that keeps none. `--resume` gives the last one
    back (`Agent.recall`)."""

    @property
    def ended_unparseable(self) -> bool:
        """The turn's last LLM reply was not a command (so the fallback ran)."""
        return (self.fallback or "").startswith(UNPARSEABLE_FALLBACK)

    @property
    def moved(self) -> bool:
        return self.room_id_after != self.room_id_before

    @property
    def score_changed(self) -> bool:
        return self.score_after != self.score_before

    @property
    def changed_nothing(self) -> bool:
        """Same world state, same room, same score: the command had no effect the Z-machine shows."""
        return self.world_hash_after == self.world_hash_before and not self.moved and not self.score_changed

    def to_json(self) -> dict[str, Any]:
        # Shallow on purpose: every value is already JSON-ready, and dataclasses.asdict's deep copy was the
        # single largest cost of a turn.
        return {name: getattr(self, name) for name in _TURN_RECORD_FIELDS}


_TURN_RECORD_FIELDS = tuple(f.name for f in fields(TurnRecord))


# -- an episode's files, read back ----------------------------------------------------------------------------------
EVENTS_FILE = "events.jsonl"
"""An episode folder's turn records: one TurnRecord as JSON per line, each line written whole as the turn ends."""
SUMMARY_FILE = "summary.json"
"""An episode folder's summary, written whole when the episode ends (a running or killed episode has none)."""


class NotATurnRecord(ValueError):
    """A line of an episode's EVENTS_FILE that is not a turn record."""

    def __init__(self, line: int, why: str):
        super().__init__(f"{EVENTS_FILE} line {line} is not a turn record ({why})")
        self.line = line


def read_records(folder: Path | str) -> list[TurnRecord]:
    """The episode's turn records, in the order played. OSError: no EVENTS_FILE; NotATurnRecord: a line that is not
    a record (a partly written last line included)."""
    records = []
    for number, data in _numbered_records(Path(folder)):
        try:
            records.append(TurnRecord(**data))
        except TypeError as exc:
            raise NotATurnRecord(number, str(exc)) from None
    return records


def read_record_dicts(folder: Path | str) -> list[dict[str, Any]]:
    """The episode's turn records as the JSON objects they were written as (errors: `read_records`)."""
    return [data for _, data in _numbered_records(Path(folder))]


def salvage_record_dicts(folder: Path | str, skipped: list[str]) -> Iterator[dict[str, Any]]:
    """The records that can be read, for a reader that shows whatever there is: what cannot be read is skipped and
    said in `skipped` (no EVENTS_FILE; a line that is not JSON or not a record; a last line partly written, as a
    running or killed episode may leave it). Read a line at a time: a long episode's file (30 MB for 10,000 looping
    turns) is never held whole."""
    unreadable: int | None = None
    """The last line that was not JSON: partly written if no record follows it."""
    try:
        lines = (Path(folder) / EVENTS_FILE).open(encoding="utf-8", errors="replace", newline="\n")
    except OSError:
        skipped.append(f"no {EVENTS_FILE}: no turn was recorded")
        return
    with lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            if unreadable is not None:
                skipped.append(f"{EVENTS_FILE} line {unreadable} is not a JSON record: skipped")
                unreadable = None
            try:
                record = json.loads(line)
            except ValueError:
                unreadable = number
                continue
            if not isinstance(record, dict) or "turn" not in record:
                skipped.append(f"{EVENTS_FILE} line {number} is not a turn record: skipped")
                continue
            yield record
    if unreadable is not None:
        skipped.append(
            f"{EVENTS_FILE} line {unreadable} is partly written (the episode is running or was killed): skipped"
        )


def read_summary(folder: Path | str) -> dict[str, Any]:
    """The episode's SUMMARY_FILE. OSError: none yet (the episode is running, or was killed); ValueError: not a
    JSON object."""
    summary = json.loads((Path(folder) / SUMMARY_FILE).read_text(encoding="utf-8"))
    if not isinstance(summary, dict):
        raise ValueError(f"{SUMMARY_FILE} holds no JSON object")
    return summary


def _numbered_records(folder: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each line of the episode's EVENTS_FILE, a line at a time; blank lines skipped."""
    with (folder / EVENTS_FILE).open(encoding="utf-8", newline="\n") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except ValueError as exc:
                raise NotATurnRecord(number, str(exc)) from None
            if not isinstance(data, dict) or "turn" not in data:
                raise NotATurnRecord(number, "not a JSON object with a turn")
            yield number, data
