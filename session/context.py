"""What an agent and its critic may know at the start of a turn: a plain record, built by managers.context from the
turn records and rendered into prompts by agents.prompts. Nothing here is hidden from a human player: objects
count as seen only once the game's text has named them, and the room is called by the title the game prints."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from session.commands import GameDictionary, canonical_command
from session.records import GameView

FORMAT_RULE = "ONE game command on one line, nothing else: no heading, no label, no explanation"
"""How a command must look; the loop status and the agent's retry prompt both say it in these words."""
HARNESS_NOTE = "[harness note, not game text]"
"""Marks every line the harness adds (warnings, loop detections, bans), so no model reads them as the story."""


@dataclass(frozen=True)
class Guidance:
    """What the knowledge store of earlier episodes suggests where the player stands (plain data)."""

    known_here: tuple[str, ...] = ()
    """Commands that scored in this room in an earlier episode and have not scored in this one, and `take` for
    an item here whose taking scored anywhere."""
    valuables: tuple[str, ...] = ()
    """Nouns of items whose taking (or putting somewhere) scored in an earlier episode."""
    deposits: tuple[str, ...] = ()
    """Nouns of the containers where putting a valuable away scored in an earlier episode (a trophy case)."""
    avoid_here: tuple[str, ...] = ()
    """Commands that killed the player here, or changed nothing here in a loop that ended an episode, and exits
    that never worked from here."""
    rerolls: int = 0
    """Dice rolls (`session.commands.DICE_ROLL`) still due before going on: at the start, as many as the route's own
    episode played (its luck) plus one per later episode that died on the route; right after the route's last
    step, one per later episode that died beyond it. The emulator is deterministic: the same play would meet the
    same dice, and a fight lost once would be lost again."""
    route_next: str = ""
    """The next command of the shortest known way to the best score an earlier episode reached (its own commands
    that changed something), while this episode has kept to it step by step."""
    route_then: tuple[str, ...] = ()
    """The route's steps after `route_next` (a few): each played when the harness turns down the ones before it (an
    object not in sight), so that the route goes on."""
    dangers_here: tuple[str, ...] = ()
    """Nouns of things here that the game named at two places or more where earlier episodes died or lost valuables:
    a killer or robber that roams (a thief), to be left rather than handled."""
    path_to_known: tuple[str, ...] = ()
    """Known exits to the nearest room where an earlier episode scored and this one has not tried yet."""
    known_target: str = ""
    exits_here: tuple[str, ...] = ()
    """Directions that led somewhere from this room in an earlier episode (a way may open only later)."""
    explored_here: tuple[str, ...] = ()
    """Directions earlier episodes tried from this room (they worked or failed: nothing new to learn there)."""
    path_to_unexplored: tuple[str, ...] = ()
    """Known exits to the nearest room with a north/south/east/west/up/down no episode has tried."""
    earlier: tuple[str, ...] = ()
    """A few lines for an LLM: where points came from, deaths, loops."""


@dataclass(frozen=True)
class Readings:
    """What the game itself says where the player stands, for an agent that is shown a prompt (an LLM): each field
    is the game's own words, or a claim checked against them on a copy of the state (managers.game_reader)."""

    title: str = ""
    """The room's title line as `look` prints it now; "" when it prints none."""
    dark: bool = False
    """`look` says it is too dark to see."""
    description: str = ""
    """The room's description from its title line on: as `look` prints it now (`description_now`), else the latest
    the game printed here, without the lines of passing events; "" when there is none."""
    description_turn: int = 0
    """The turn that printed `description` (0: the opening text)."""
    description_now: bool = False
    """`description` is the room as `look` prints it now (on a copy), not as it was last printed here."""
    inventory: str = ""
    """The game's answer to `inventory`, as it would print it now."""
    seen: tuple[str, ...] = ()
    """Things in this room, under the words the game printed here, that `examine` finds in sight now."""
    exits: tuple[tuple[str, str], ...] = ()
    """(direction, room title): moves that led somewhere from here and still lead there now."""
    mentioned_exits: tuple[str, ...] = ()
    """Directions the description mentions that were never tried from here: not verified, they may lead nowhere."""
    tried: tuple[tuple[str, int, str], ...] = ()
    """(command, turn, the first line of the game's answer) of what was done here (no moves), latest first."""
    thoughts: tuple[tuple[int, str], ...] = ()
    """(turn, thought): the agent's own last thoughts, oldest first."""
    seen_elsewhere: tuple[tuple[str, str, int], ...] = ()
    """(name, room title, turn): things last seen in another room, latest first."""
    notes: tuple[tuple[int, str], ...] = ()
    """(turn, note) of the facts the agent asked to keep for the episode (its reply's `note`), oldest first
    (bounded)."""
    map: tuple[str, ...] = ()
    """One line per room the player walked between, nearest first, this room first (bounded): `Kitchen: west ->
    Living Room, up -> Attic`, the exits as walked (not checked now)."""
    opening: str = ""
    """The game's opening text, as it printed it before the first command (the title and the premise)."""
    scored: tuple[tuple[int, str, str, int], ...] = ()
    """(turn, room title, command, points) of every turn that raised the score this episode, latest last (bounded)."""
    texts_read: tuple[tuple[int, str, str], ...] = ()
    """(turn, command, the game's whole answer) of the last things the player read (`read` a note, a book, a sign)."""
    rooms_with_mentions: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = ()
    """(room title, directions its description mentions that were never tried there, the known way there), nearest
    first."""


@dataclass(frozen=True)
class AgentContext:
    """What an agent (and the critic) may know at the start of a turn."""

    turn: int
    view: GameView
    max_score: int | None = None
    """The most points the game gives (Jericho's, or as the game printed it); None: unknown."""
    max_turns: int | None = None
    """The turns this episode may last (`max_turns_per_episode`); None: not said."""
    game: str = ""
    """The game's name, from the story file (Jericho's bindings, else the file name)."""
    recent: tuple[tuple[str, str], ...] = ()
    """(command, game response) of the last turns, oldest first."""
    known_exits: dict[str, str] = field(default_factory=dict)
    """Direction -> destination room title, from the map."""
    untried_exits: tuple[str, ...] = ()
    """Directions never tried from this room (all twelve at first)."""
    named_exits: tuple[str, ...] = ()
    """Directions the room's description names (`passages lead north and east`): the likely exits."""
    failed_exits: tuple[str, ...] = ()
    room_text: str = ""
    """The game's description of this room when the player last arrived (or looked)."""
    visible_objects: tuple[str, ...] = ()
    """Objects in this room that the game's text has named while the player was here: what a player could know."""
    tried_here: frozenset[str] = frozenset()
    """Canonical commands already run in this room (this episode)."""
    refused_here: frozenset[str] = frozenset()
    """Canonical commands that changed nothing the last time they ran in this room."""
    failed_here: frozenset[str] = frozenset()
    """Canonical commands the game refused or did not understand the last time they ran in this room (never an
    observation: waiting or looking again is harmless)."""
    path_to_frontier: tuple[str, ...] = ()
    """Known exits leading to the nearest room whose description names a direction not tried from it (the offline
    agent's next way)."""
    path_to_primary_frontier: tuple[str, ...] = ()
    """Known exits leading to the nearest room with an untried north/south/east/west/up/down."""
    objectives: tuple[str, ...] = ()
    completed_objectives: tuple[str, ...] = ()
    loop_status: str = ""
    """Warnings and loop detections, rendered for the agent and the critic (empty when all is well)."""
    banned: tuple[str, ...] = ()
    """Canonical commands the loop break forbids this turn."""
    rewinds: int = 0
    """Times this episode the harness put the game back to its last progress (`on_stuck = "rewind"`): what the agent
    tried since then led nowhere, and the harness note says so."""
    feedback: tuple[str, ...] = ()
    """`command: reason` for each proposal rejected earlier in this turn."""
    rejected: tuple[str, ...] = ()
    """Commands rejected earlier in this turn, in canonical form (`session.commands.canonical_command`)."""
    review_objectives: bool = False
    """The critic is asked, this call, which objectives the last turn completed and which are worth adding."""
    knowledge: Guidance = field(default_factory=lambda: Guidance())
    """What earlier episodes of this game suggest here (empty without a knowledge store)."""
    readings: Readings | None = None
    """What the game itself says here, for prompted agents (None for the others: it costs a few steps on a copy)."""
    nothing_ran: tuple[bool, ...] = ()
    """For each turn of `recent`: nothing ran (no reply of the agent's could be used, or every proposal was
    refused), and nothing was typed in its place."""
    proposal_thought: str = ""
    """The agent's thought behind the command being judged (LLM agents in thought mode): shown to the critic only."""
    dictionary: GameDictionary | None = None
    """The words the game's parser knows, for agents shown a prompt (an LLM's reply is read against them: a line
    of words the game knows is a command, a sentence it cannot parse is prose); None for the others."""

    def with_feedback(self, command: str, reason: str) -> AgentContext:
        return replace(
            self,
            feedback=self.feedback + (f"{command}: {reason}",),
            rejected=self.rejected + (canonical_command(command),),
        )


@dataclass(frozen=True)
class ObjectiveReview:
    """What a critic said of the objectives in its verdict: claims to verify against the game's text, and new ones."""

    completed: tuple[tuple[str, str], ...] = ()
    """(objective text, evidence quoted from the last game response)."""
    proposed: tuple[str, ...] = ()
    """New objectives worth pursuing."""
