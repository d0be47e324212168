"""The map: rooms keyed by Z-machine room id, exits learned from moves that changed the room id."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from session.commands import DIRECTIONS, direction_of
from session.records import TurnRecord


@dataclass
class Room:
    room_id: int
    name: str
    exits: dict[str, int] = field(default_factory=dict)
    """Canonical direction -> destination room id, learned from moves that worked."""
    failed_exits: set[str] = field(default_factory=set)
    """Directions tried here that did not move the player."""
    first_visit_turn: int = 0
    visits: int = 0


class MapGraph:
    """Learns the map from turn records; predicts where a movement command leads."""

    def __init__(self) -> None:
        self.rooms: dict[int, Room] = {}

    # -- learning ----------------------------------------------------------------------------------------
    def visit(self, room_id: int | None, name: str, turn: int) -> bool:
        """Record being in a room; True on the first visit."""
        if room_id is None:
            return False
        room = self.rooms.get(room_id)
        if room is None:
            self.rooms[room_id] = Room(room_id, name, first_visit_turn=turn, visits=1)
            return True
        room.visits += 1
        return False

    def observe(self, record: TurnRecord) -> None:
        """Learn from one executed turn: an edge when a move changed the room id, a failed exit otherwise."""
        if record.room_id_before is None:
            self.visit(record.room_id_after, record.room_name_after, record.turn)
            return
        if record.room_id_before not in self.rooms:
            self.visit(record.room_id_before, record.room_name_before, record.turn)
        direction = direction_of(record.command)
        source = self.rooms[record.room_id_before]
        if direction is not None:
            if record.moved and record.room_id_after is not None:
                source.exits[direction] = record.room_id_after
                source.failed_exits.discard(direction)
            elif not record.moved and not record.game_over:
                source.failed_exits.add(direction)
        if record.moved:
            self.visit(record.room_id_after, record.room_name_after, record.turn)

    # -- questions ---------------------------------------------------------------------------------------
    def predict_destination(self, room_id: int | None, command: str) -> int | None:
        """The known destination of a movement command from `room_id`; None when unknown or not a move."""
        direction = direction_of(command)
        room = self.rooms.get(room_id) if room_id is not None else None
        if direction is None or room is None:
            return None
        return room.exits.get(direction)

    def untried_directions(self, room_id: int | None) -> list[str]:
        """Directions never tried from this room (neither a known exit nor a failed one)."""
        room = self.rooms.get(room_id) if room_id is not None else None
        if room is None:
            return list(DIRECTIONS)
        return [d for d in DIRECTIONS if d not in room.exits and d not in room.failed_exits]

    def ways_out(self, room_id: int | None) -> set[str]:
        """Every way a player could still try to leave this room: its known exits and the directions never tried."""
        room = self.rooms.get(room_id) if room_id is not None else None
        return set(self.untried_directions(room_id)) | (set(room.exits) if room else set())

    def name_of(self, room_id: int | None) -> str:
        room = self.rooms.get(room_id) if room_id is not None else None
        return room.name if room else f"Location_{room_id}"

    def path_to_frontier(
        self, start: int | None, wanted: set[str] | None = None, avoid: frozenset[int] = frozenset()
    ) -> list[str]:
        """Shortest list of known exits from `start` to the nearest room that still has untried directions.

        `wanted` restricts which untried directions count (e.g. only the cardinal ones); rooms in `avoid` may be
        walked through but are no destination. Empty when none is known.
        """
        return self.path_to(
            start,
            lambda room_id: (
                room_id not in avoid and any(wanted is None or d in wanted for d in self.untried_directions(room_id))
            ),
        )

    def path_to(
        self, start: int | None, goal: Callable[[int], bool], blocked: Collection[tuple[int, str]] = ()
    ) -> list[str]:
        """Shortest list of known exits from `start` to the nearest other room where `goal(room_id)` holds, never
        through a (room id, direction) in `blocked`."""
        if start is None or start not in self.rooms:
            return []
        seen = {start}
        queue: deque[tuple[int, list[str]]] = deque([(start, [])])
        while queue:
            room_id, path = queue.popleft()
            if path and goal(room_id):
                return path
            for direction, target in self.rooms[room_id].exits.items():
                if target not in seen and target in self.rooms and (room_id, direction) not in blocked:
                    seen.add(target)
                    queue.append((target, path + [direction]))
        return []

    def paths_from(self, start: int | None) -> dict[int, list[str]]:
        """Every other known room reachable from `start` by known exits -> the shortest way there, nearest first."""
        if start is None or start not in self.rooms:
            return {}
        paths: dict[int, list[str]] = {start: []}
        queue: deque[int] = deque([start])
        while queue:
            room_id = queue.popleft()
            for direction, target in self.rooms[room_id].exits.items():
                if target not in paths and target in self.rooms:
                    paths[target] = paths[room_id] + [direction]
                    queue.append(target)
        del paths[start]
        return paths

    def follow(self, start: int | None, path: list[str] | tuple[str, ...]) -> int | None:
        """The room a list of known exits leads to from `start` (None when one of them is unknown)."""
        room_id = start
        for direction in path:
            room = self.rooms.get(room_id) if room_id is not None else None
            room_id = room.exits.get(direction) if room else None
        return room_id

    # -- export ------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "rooms": {
                str(r.room_id): {
                    "name": r.name,
                    "exits": r.exits,
                    "failed_exits": sorted(r.failed_exits),
                    "first_visit_turn": r.first_visit_turn,
                    "visits": r.visits,
                }
                for r in self.rooms.values()
            }
        }

    def to_mermaid(self) -> str:
        lines = ["graph LR"]
        for room in self.rooms.values():
            label = room.name.replace('"', "'")
            lines.append(f'    r{room.room_id}["{label}"]')
        for room in self.rooms.values():
            for direction, target in sorted(room.exits.items()):
                lines.append(f"    r{room.room_id} -->|{direction}| r{target}")
        return "\n".join(lines) + "\n"

    def export(self, folder: Path) -> None:
        (folder / "map.json").write_text(json.dumps(self.to_json(), indent=2))
        (folder / "map.mmd").write_text(self.to_mermaid())
