"""First visits and never-seen world states: computed once per turn, stored on the turn record."""

from __future__ import annotations

from session.records import GameView


class StateNovelty:
    """Remembers visited room ids and seen world-state hashes.

    Bounded by the distinct states an episode reaches (a looping agent adds none), not by its length.
    """

    def __init__(self, start: GameView):
        self.rooms: set[int | None] = {start.room_id}
        self.world_states: set[str] = {start.world_hash}

    def observe(self, view: GameView) -> tuple[bool, bool]:
        """(new_room, new_world_state) for the view after a turn."""
        new_room = view.room_id is not None and view.room_id not in self.rooms
        new_state = view.world_hash not in self.world_states
        self.rooms.add(view.room_id)
        self.world_states.add(view.world_hash)
        return new_room, new_state
