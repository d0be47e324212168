"""Builds what the agent and critic may know each turn (session.context.AgentContext) from the turn records.

Only what a player could know goes in. For every agent: the objects the game's text has named in this room (not the
object tree: the leaflet inside the closed mailbox stays hidden until the mailbox is opened), the exits the
description names, the map's way to the nearest place with such an exit still untried, and what was already tried
or changed nothing here (the offline agent and critic read these). For an agent shown a prompt, the game's own
words besides (`readings`, managers.game_reader): the title, the description as last printed with its age, the
inventory answer, the things in sight, the exits that still work. Prompts are rendered on the agents' side
(agents.prompts).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from managers.action_memory import ActionMemory
from managers.game_reader import GameReader
from managers.map_graph import MapGraph
from session.commands import (
    LOOK_COMMANDS,
    PRIMARY_DIRECTIONS,
    GameDictionary,
    directions_named,
    normalize_command,
    words_in,
)
from session.context import AgentContext, Guidance, Readings
from session.game import GameSession
from session.records import NOT_RUN, GameView, TurnRecord


@dataclass(frozen=True)
class Surroundings:
    """What a player can know of where they stand this turn (ContextBuilder.surroundings)."""

    untried: tuple[str, ...]
    """Directions never tried here, in the map's order."""
    readings: Readings | None
    """What the game itself says (agents shown a prompt; None for the others)."""
    visible: tuple[str, ...]
    """The names of this room's objects a player has been told of (`ContextBuilder.visible_objects`)."""
    things: tuple[str, ...]
    """What a player has been shown here, in the game's words."""

    @property
    def untried_primary(self) -> tuple[str, ...]:
        """The untried directions among the primary ones, in their order."""
        return tuple(d for d in self.untried if d in PRIMARY_DIRECTIONS)


@dataclass(frozen=True)
class Shown:
    """What the harness shows beside the game's facts in a turn's context."""

    objectives: tuple[str, ...] = ()
    completed_objectives: tuple[str, ...] = ()
    loop_status: str = ""
    banned: tuple[str, ...] = ()
    rewinds: int = 0
    max_score: int | None = None
    max_turns: int | None = None
    review_objectives: bool = False
    knowledge: Guidance = field(default_factory=Guidance)


FULL_DESCRIPTION_SHARE = 0.7
"""An arrival text this much as long as the room's known description replaces it; shorter ones are brief revisits."""


class ContextBuilder:
    def __init__(self, history_turns: int, game: str = ""):
        self.game = game
        self.recent: deque[tuple[str, str]] = deque(maxlen=history_turns)
        self.nothing_ran: deque[bool] = deque(maxlen=history_turns)
        self.reader: GameReader | None = None
        """Reads what the game itself says, for agents shown a prompt (None: the others need none of it)."""
        self.dictionary: GameDictionary | None = None
        """The game's dictionary, for agents shown a prompt (None: the others need none of it)."""
        self.room_texts: dict[int | None, str] = {}
        """Room id -> its last full description (on arrival or `look`), from its title line on: one per room."""
        self.heard: dict[int | None, set[str]] = {}
        """Room id -> words the game printed while the player was there (which objects a player has been told of)."""

    def read_game(self, session: GameSession) -> None:
        """For agents shown a prompt: read what the game itself says (on copies of the live game) and its
        dictionary."""
        self.reader = GameReader(session.answer_on_copy, session.object_vocabulary(), session.dictionary_word_length)
        self.dictionary = GameDictionary.of(
            (entry.word for entry in session.dictionary()), session.dictionary_word_length
        )

    def begin(self, view: GameView) -> None:
        """The episode's opening text describes the first room (after the banner)."""
        self._hear(view.room_id, view.room_name, view.text.strip(), describes_room=True)
        if self.reader is not None:
            self.reader.begin(view)

    def rewind(self) -> None:
        """The game was put back to an earlier turn: the recent turns are no longer what led to where the player
        stands, so they leave the history (the harness note says what they tried). What rooms said stays known."""
        self.recent.clear()
        self.nothing_ran.clear()

    def observe(self, record: TurnRecord) -> None:
        response = record.response.strip()
        self.recent.append((record.command, response))
        self.nothing_ran.append(not record.ran and record.fallback != NOT_RUN)
        if self.reader is not None:
            self.reader.observe(record)
        looked = record.moved or normalize_command(record.command) in LOOK_COMMANDS
        self._hear(record.room_id_after, record.room_name_after, response, looked)

    def _hear(self, room_id: int | None, title: str, text: str, describes_room: bool) -> None:
        if describes_room:
            described = _from_title(text, title)
            known = self.room_texts.get(room_id, "")
            # A brief revisit ("Kitchen" and the objects) does not replace the full description.
            if len(described) >= FULL_DESCRIPTION_SHARE * len(known):
                self.room_texts[room_id] = described
        self.heard.setdefault(room_id, set()).update(words_in(text))

    def surroundings(self, turn: int, view: GameView, game_map: MapGraph) -> Surroundings:
        """What a player can know of where they stand this turn, read once for the objectives, the loop status and
        the context."""
        visible = self.visible_here(view)
        readings = self.reader.read(turn, view, game_map) if self.reader is not None else None
        things = (
            readings.seen
            if readings is not None
            else tuple(dict.fromkeys(o.noun for o in view.room_objects if o.name in visible))
        )
        return Surroundings(tuple(game_map.untried_directions(view.room_id)), readings, visible, things)

    def for_agent(
        self,
        turn: int,
        view: GameView,
        game_map: MapGraph,
        memory: ActionMemory,
        here: Surroundings,
        shown: Shown,
    ) -> AgentContext:
        """The turn's context, whole: what the game and the map say of `here`, and what the harness `shown`s."""
        room = game_map.rooms.get(view.room_id) if view.room_id is not None else None
        room_text = self.room_texts.get(view.room_id, view.text.strip())
        untried = here.untried
        return AgentContext(
            turn=turn,
            view=view,
            game=self.game,
            recent=tuple(self.recent),
            nothing_ran=tuple(self.nothing_ran),
            readings=here.readings,
            known_exits={d: game_map.name_of(r) for d, r in (room.exits.items() if room else ())},
            untried_exits=untried,
            named_exits=tuple(d for d in directions_named(room_text) if d in untried),
            failed_exits=tuple(sorted(room.failed_exits)) if room else (),
            room_text=room_text,
            visible_objects=here.visible,
            tried_here=memory.tried(view.room_id),
            refused_here=memory.refused(view.room_id),
            failed_here=memory.failed(view.room_id, view.world_hash),
            path_to_frontier=tuple(self._path_to_named_exit(view.room_id, game_map)),
            path_to_primary_frontier=tuple(game_map.path_to_frontier(view.room_id, PRIMARY_DIRECTIONS)),
            objectives=shown.objectives,
            completed_objectives=shown.completed_objectives,
            loop_status=shown.loop_status,
            banned=shown.banned,
            rewinds=shown.rewinds,
            dictionary=self.dictionary,
            max_score=shown.max_score,
            max_turns=shown.max_turns,
            review_objectives=shown.review_objectives,
            knowledge=shown.knowledge,
        )

    def visible_here(self, view: GameView) -> tuple[str, ...]:
        """The names of this room's objects a player has been told of (see `visible_objects`)."""
        return self.visible_objects(view, self._heard_here(view))

    def _heard_here(self, view: GameView) -> frozenset[str]:
        return frozenset(self.heard.get(view.room_id, set()) | set(words_in(view.text)))

    @staticmethod
    def visible_objects(view: GameView, heard: frozenset[str]) -> tuple[str, ...]:
        """The room's objects whose noun the game printed while the player was here (`heard`, what it prints now
        included)."""
        held = {obj.num for obj in view.inventory}
        return tuple(
            dict.fromkeys(obj.name for obj in view.room_objects if obj.num not in held and obj.noun.lower() in heard)
        )

    def _path_to_named_exit(self, start: int | None, game_map: MapGraph) -> list[str]:
        """Known exits to the nearest other room whose description names an exit not yet tried from it."""

        def has_named_untried(room_id: int) -> bool:
            untried = set(game_map.untried_directions(room_id))
            return any(d in untried for d in directions_named(self.room_texts.get(room_id, "")))

        return game_map.path_to(start, has_named_untried)


def _from_title(text: str, title: str) -> str:
    """The description from the line that prints the room's title on: what comes before it (a banner, "You have
    moved into a dark place.", "Time passes...") is not the room."""
    lines = text.splitlines()
    wanted = title.strip().lower()
    for index, line in enumerate(lines):
        if wanted and line.strip().lower().startswith(wanted):
            return "\n".join(lines[index:]).strip()
    return text
