"""Where will a command take the player? From the learned map, or exactly by lookahead on the session's shadow
emulator (the game itself is never stepped: Jericho's restore is not exact on every game)."""

from __future__ import annotations

from managers.map_graph import MapGraph
from session.game import GameSession


class DestinationPredictor:
    """`predict()` returns the room id a command leads to when that is another room, else None.

    None means "no penalty": unknown destinations and in-room commands are never penalised (safe fallback).
    """

    def __init__(self, mode: str, game_map: MapGraph, session: GameSession | None = None):
        if mode == "lookahead" and session is None:
            raise ValueError("lookahead destination prediction needs the Jericho session")
        self.mode = mode
        self.game_map = game_map
        self.session = session
        self._cache: dict[tuple[str, str], int | None] = {}

    def predict(self, room_id: int | None, command: str, world_hash: str = "") -> int | None:
        if self.mode == "lookahead":
            destination = self._lookahead(command, world_hash)
        else:
            destination = self.game_map.predict_destination(room_id, command)
        return destination if destination != room_id else None

    def _lookahead(self, command: str, world_hash: str) -> int | None:
        key = (world_hash, command)
        if world_hash and key in self._cache:
            return self._cache[key]
        assert self.session is not None
        destination = self.session.room_after(command)
        if world_hash:
            if len(self._cache) > 256:  # bounded: only the current turn's proposals matter
                self._cache.clear()
            self._cache[key] = destination
        return destination
