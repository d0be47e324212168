"""Scenarios as data: `playthroughs/scenarios/<name>.toml` names a game, a prefix and a loop body.

A prefix is walkthrough steps (`walkthrough_steps = k` or `"all"`), or the walkthrough until the score first reaches
`walkthrough_until_score`, or explicit `commands`; `then` adds commands after it. A loop body is `commands` repeated
to `length` turns, or a seeded random walk among named rooms (`random_walk_rooms`, `seed`), whose moves are found by
trying every direction on a snapshot of the emulator.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import tomli
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from session.commands import DIRECTIONS
from session.config import stop_rules_off
from session.jericho_session import JerichoSession

SCENARIO_DIR = Path(__file__).parent / "scenarios"


def never_stopped(turns: int) -> dict:
    """Configuration overrides that play a loop for `turns` turns with the loop break watching (detectors,
    penalties, warnings, gates) but never ending it: every stop rule off (each section says how, those of detectors
    registered since included), the no-progress backstop out of reach, the failure gate only warning. For the
    measures of a long loop: memory, the loop break's cost while looping, the viewer's long episode."""
    return {
        "gameplay": {"max_turns_per_episode": turns},
        "loop_break": {
            **stop_rules_off(),
            "no_progress": {"max_turns": 100_000},
            "warning_lead_turns": 100_000 - 20,  # the warning from 20 turns without progress on
            "action_loops": {"gate_action": "warn"},
        },
    }


class ScenarioError(Exception):
    """A scenario file is invalid, names another game, or cannot be built (e.g. no walkthrough)."""


class _ScenarioTable(BaseModel):
    """A table of a scenario file: a key it does not know is an error, and each field's docstring says what it is."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class PrefixSpec(_ScenarioTable):
    walkthrough_steps: int | Literal["all"] | None = None
    """Run the first k walkthrough steps (or all of them)."""
    walkthrough_until_score: int | None = Field(None, ge=1)
    """Run the walkthrough until the score first reaches this value."""
    commands: list[str] = Field(default_factory=list)
    """Explicit commands (instead of, or before `then`)."""
    then: list[str] = Field(default_factory=list)
    """Commands run after the walkthrough part (e.g. the walk to the loop's rooms)."""

    @model_validator(mode="after")
    def _one_source(self) -> PrefixSpec:
        if self.walkthrough_steps is not None and self.walkthrough_until_score is not None:
            raise ValueError("give walkthrough_steps or walkthrough_until_score, not both")
        return self


class LoopSpec(_ScenarioTable):
    commands: list[str] = Field(default_factory=list)
    """Commands repeated in order until `length` turns."""
    random_walk_rooms: list[str] = Field(default_factory=list)
    """Room names as Jericho gives them (trimmed, case-insensitive) that a seeded random walk stays among."""
    seed: int = 0
    """Seed of the random walk."""
    length: int = Field(235, ge=1, le=100_000)
    """Turns in the loop body."""

    @model_validator(mode="after")
    def _one_body(self) -> LoopSpec:
        if bool(self.commands) == bool(self.random_walk_rooms):
            raise ValueError("give exactly one of loop.commands or loop.random_walk_rooms")
        return self


class ScenarioSpec(_ScenarioTable):
    description: str
    game: str
    """Jericho's name of the game (e.g. zork1); the story file must be that game."""
    kind: Literal["healthy", "stuck"]
    driver: Literal["replay", "unparseable_llm"] = "replay"
    """`unparseable_llm`: the loop is scripted LLM replies in the wrong format, not game commands."""
    prefix: PrefixSpec = Field(default_factory=PrefixSpec)
    loop: LoopSpec | None = None


@dataclass
class BuiltScenario:
    name: str
    spec: ScenarioSpec
    prefix: list[str]
    loop: list[str] = field(default_factory=list)
    loop_rooms: set[int] = field(default_factory=set)
    """Room ids the loop body moves among (empty for in-room loops: then the prefix's last room)."""

    @property
    def commands(self) -> list[str]:
        return self.prefix + self.loop


def scenario_names() -> list[str]:
    return sorted(path.stem for path in SCENARIO_DIR.glob("*.toml"))


def load_scenario(name_or_path: str | Path) -> tuple[str, ScenarioSpec]:
    path = Path(name_or_path)
    if not path.suffix:
        path = SCENARIO_DIR / f"{name_or_path}.toml"
    if not path.is_file():
        raise ScenarioError(f"unknown scenario {name_or_path!r}; known: {', '.join(scenario_names())}")
    try:
        return path.stem, ScenarioSpec.model_validate(tomli.loads(path.read_text()))
    except (tomli.TOMLDecodeError, ValidationError) as exc:
        raise ScenarioError(f"{path}: {exc}") from None


def build_scenario(name_or_path: str | Path, rom_path: str | Path) -> BuiltScenario:
    """Turn a scenario into concrete commands by playing its prefix on the real emulator."""
    name, spec = load_scenario(name_or_path)
    session = JerichoSession(rom_path)
    if session.game_name != spec.game:
        raise ScenarioError(f"scenario {name} is for {spec.game}, but {rom_path} is {session.game_name}")
    prefix = _build_prefix(name, spec.prefix, session)
    built = BuiltScenario(name, spec, prefix)
    if spec.loop is None:
        return built
    view = session.reset()
    for command in prefix:
        view = session.step(command)
    if spec.loop.commands:
        built.loop = [spec.loop.commands[i % len(spec.loop.commands)] for i in range(spec.loop.length)]
        built.loop_rooms = _rooms_of(session, built.loop, view.room_id)
    elif spec.driver == "replay":
        built.loop, built.loop_rooms = _random_walk(name, spec.loop, session)
    return built


def _build_prefix(name: str, spec: PrefixSpec, session: JerichoSession) -> list[str]:
    commands = list(spec.commands)
    if spec.walkthrough_steps is not None or spec.walkthrough_until_score is not None:
        walkthrough = session.walkthrough()
        if not walkthrough:
            raise ScenarioError(f"scenario {name}: {session.game_name} has no Jericho walkthrough")
        if spec.walkthrough_until_score is not None:
            session.reset()
            for step, command in enumerate(walkthrough, start=1):
                if session.step(command).score >= spec.walkthrough_until_score:
                    commands += walkthrough[:step]
                    break
            else:
                raise ScenarioError(f"scenario {name}: the walkthrough never reaches {spec.walkthrough_until_score}")
        else:
            steps = len(walkthrough) if spec.walkthrough_steps == "all" else spec.walkthrough_steps
            commands += walkthrough[:steps]
    return commands + list(spec.then)


def _rooms_of(session: JerichoSession, loop: list[str], start: int | None) -> set[int]:
    """Room ids one pass of the loop body visits (replayed on a snapshot, then restored)."""
    snapshot = session.snapshot()
    rooms = {start} if start is not None else set()
    for command in loop[: max(12, len(set(loop)) * 4)]:
        room = session.step(command).room_id
        if room is not None:
            rooms.add(room)
    session.restore(snapshot)
    return rooms


def _random_walk(name: str, spec: LoopSpec, session: JerichoSession) -> tuple[list[str], set[int]]:
    wanted = {n.strip().lower() for n in spec.random_walk_rooms}

    def allowed(room_name: str) -> bool:  # Jericho's room names, compared trimmed and case-insensitively
        return room_name.strip().lower() in wanted

    view = session.observe()
    if not allowed(view.room_name):
        raise ScenarioError(
            f"scenario {name}: the prefix ends in {view.room_name!r}, not among {spec.random_walk_rooms}"
        )
    rng = random.Random(spec.seed)
    moves: list[str] = []
    rooms: set[int] = set()
    exits_cache: dict[str, list[tuple[str, int]]] = {}
    for _ in range(spec.length):
        key = view.world_hash
        if key not in exits_cache:
            exits_cache[key] = []
            for direction in DIRECTIONS:
                snapshot = session.snapshot()
                after = session.step(direction)
                if after.room_id not in (None, view.room_id) and allowed(after.room_name) and not after.game_over:
                    exits_cache[key].append((direction, after.room_id))
                session.restore(snapshot)
        if not exits_cache[key]:
            raise ScenarioError(f"scenario {name}: no exit from {view.room_name!r} stays among the named rooms")
        direction, _ = rng.choice(exits_cache[key])
        moves.append(direction)
        view = session.step(direction)
        rooms.add(view.room_id)
    return moves, rooms
