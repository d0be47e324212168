"""What each command did in each room: the offline agent never repeats a refused command, the critic knows."""

from __future__ import annotations

from collections import Counter, defaultdict

from session.commands import TAKE_VERBS, canonical_command
from session.outcomes import is_failure, not_here
from session.records import TurnRecord

STUBBORN_REFUSALS = 2
"""States of the world in which a command changed nothing in a room before it is not tried there again."""


class ActionMemory:
    """Per room: commands run, and those whose last run changed nothing (same world state, room and score).

    When a command other than a take or drop changes the world in a room (the rug moves), what was refused
    there may work now (the trap door opens): those commands count as untried again, except a command that changed
    nothing there in STUBBORN_REFUSALS different states of the world, and a take the game refused once (`take
    trophy case`, `take small mailbox`: fastened in place whatever else happens). A command whose object was not
    in sight is never stubborn: a change may reveal it.
    After something is put down, a refused take may fit now. Bounded by the distinct (room, command) pairs.
    """

    def __init__(self) -> None:
        self._tried: dict[int | None, set[str]] = defaultdict(set)
        self._refused: dict[int | None, set[str]] = defaultdict(set)
        self._failed: dict[int | None, dict[str, str]] = defaultdict(dict)
        """Room -> command -> the world hash after the game refused it there (its answer stands while that holds)."""
        self._refusals: dict[int | None, Counter] = defaultdict(Counter)
        """Room -> command -> the states of the world in which it changed nothing there (its object in sight)."""

    def observe(self, record: TurnRecord) -> None:
        key = canonical_command(record.command)
        room = record.room_id_before
        self._tried[room].add(key)
        # A move answered by the room's own title moved the player within it (zork3's Royal Puzzle): no refusal.
        within = record.room_name_after and record.response.lstrip().startswith(record.room_name_after)
        if is_failure(record.command, record.result_category) and not within:
            self._failed[room][key] = record.world_hash_after
        else:
            self._failed[room].pop(key, None)
        if record.changed_nothing:
            if key not in self._refused[room] and not not_here(record.response):
                # A thing the game would not let be taken stays so (fixed in place, part of the scenery): a take is
                # stubborn at once; room to carry more is the drop rule's (below).
                self._refusals[room][key] += STUBBORN_REFUSALS if _is_take(key) else 1
            self._refused[room].add(key)
            return
        self._refused[room].discard(key)
        if set(record.inventory_after) < set(record.inventory_before):  # something put down: room to carry more
            self._refused[room] = {c for c in self._refused[room] if not c.startswith(("take ", "get "))}
        changed_room = record.world_hash_after != record.world_hash_before and not record.moved
        if changed_room and record.inventory_after == record.inventory_before:  # not a mere take or drop
            stubborn = {c for c in self._refused[room] if self._refusals[room][c] >= STUBBORN_REFUSALS}
            self._tried[room] -= self._refused[room] - stubborn
            self._refused[room] = stubborn
            self._failed[room].clear()

    def tried(self, room_id: int | None) -> frozenset[str]:
        return frozenset(self._tried.get(room_id, ()))

    def refused(self, room_id: int | None) -> frozenset[str]:
        return frozenset(self._refused.get(room_id, ()))

    def failed(self, room_id: int | None, world_hash: str) -> frozenset[str]:
        """Commands the game refused here whose refusal still stands: nothing in the world has changed since (a
        door opened elsewhere, a lamp lit, time passed for a timed event)."""
        return frozenset(k for k, at in self._failed.get(room_id, {}).items() if at == world_hash)


def _is_take(key: str) -> bool:
    """A canonical `take ...` command (`get`, `pick up` are `take`: session.commands.VERB_SYNONYMS)."""
    return key.split(" ", 1)[0] in TAKE_VERBS
