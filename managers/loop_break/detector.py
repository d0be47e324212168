"""The loop-break detector protocol and its registry.

A detector watches play from one angle. The LoopBreak feeds every registered detector each executed turn (`observe`)
and asks each, in the registry's order, whether its stop rule ends the episode now (`stop`), how soon it could
(`turns_to_stop`), what it adds to the critic's score of a proposal (`adjust`) and what it tells the agent
(`lines`). What the turns since the last progress share (the progress clock, the wait clock, the repetition window)
is the `Stretch`, kept by the LoopBreak and handed to every detector: no detector reaches into another. A method that
raises events returns them (`session.events.new_event` makes one); the LoopBreak gathers them into the turn's.

A detector's settings are its own section, `[tool.zorkgpt.loop_break.<name>]`, validated by its `config_model`;
`register` adds both, so a detector defined anywhere (a test module) plays without an edit elsewhere. Subclass
`Detector`: the optional parts answer "nothing" here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from managers.loop_break.penalties import Judged
from managers.loop_break.progress import ProgressResult, ProgressTracker
from managers.loop_break.window import RepetitionResult, RepetitionWindow
from managers.map_graph import MapGraph
from session.commands import is_wait
from session.config import DetectorSection, LoopBreakConfig
from session.events import MARKERS, EventType, is_event_type, register_marker
from session.records import GameView, Judgement, TurnRecord

Events = Sequence[dict]
"""The events a detector's call raised, in order (None or (): none)."""


class Predictor(Protocol):
    def predict(self, room_id: int | None, command: str, world_hash: str) -> int | None: ...


@dataclass
class Stretch:
    """What the turns since the last progress share, for every detector: kept by the LoopBreak, updated before the
    detectors observe a turn."""

    config: LoopBreakConfig
    progress: ProgressTracker
    window: RepetitionWindow
    """The repetition window (fed only while `[loop_break.repetition] enabled`)."""
    repeating: RepetitionResult = RepetitionResult(0, 0)
    """The repetition window after the last turn (empty while repetition detection is off)."""
    pressure: float = 0.0
    """How near the nearest stop rule is after the last turn (the highest of their `Detector.pressure`)."""
    wait_credit: int = 0
    """Turns since the last progress left out of the stop rules' clock: the first wait_allowance waits, each with up
    to wait_detours of the other turns since the wait before it."""
    waits: int = 0
    """Waits since the last progress."""
    since_wait: int | None = None
    """Other turns since the last wait (None: no wait since the last progress)."""

    @property
    def weak_signals(self) -> frozenset[str]:
        return frozenset(self.config.weak_signals)

    def count_wait(self, record: TurnRecord, progress: bool) -> None:
        """The wait clock, after one turn."""
        config = self.config
        if progress:
            self.wait_credit = self.waits = 0
            self.since_wait = None
        elif is_wait(record.command):
            self.waits += 1
            if self.waits <= config.wait_allowance:
                between = min(self.since_wait, config.wait_detours) if self.since_wait is not None else 0
                self.wait_credit += 1 + between
            self.since_wait = 0
        elif self.since_wait is not None:
            self.since_wait += 1

    @property
    def steering(self) -> bool:
        """A stop rule has come far enough (`steering_pressure`) for penalties, warnings and loop notes."""
        return self.pressure >= self.config.steering_pressure

    def clock(self, turns_stuck: int) -> int:
        """The turns since the last progress that count towards the stop rules: the waits and the turns between them
        left out (a timed event needs them; measured: tryst205's jail takes 14 waits in 52-75 turns among detours,
        balances' feather up to 13). Turns after the last wait count: a loop that starts after waiting is a loop."""
        return turns_stuck - self.wait_credit

    def repetition_clock(self, turns_stuck: int) -> int:
        """The repetition rule's clock: the stop rules' clock, or every turn since the last progress once the player
        has waited more times in a row than the free waits (RepetitionWindow.waited_out): a player who only waits
        is stopped on the first wait past the free ones, not repetition.min_turns later."""
        return turns_stuck if self.window.waited_out else self.clock(turns_stuck)


@dataclass(frozen=True)
class Tools:
    """What a detector may consult besides the turns: the learned map and the destination predictor."""

    game_map: MapGraph
    predictor: Predictor | None = None


@dataclass(frozen=True)
class Turn:
    """One executed turn, as every detector observes it."""

    record: TurnRecord
    progress: ProgressResult
    stretch: Stretch


@dataclass(frozen=True)
class ScoredProposal:
    """A command the critic has judged, before the loop break adjusts its score."""

    command: str
    judgement: Judgement
    view: GameView
    turn: int
    turns_stuck: int
    """Turns since the last progress, before this turn."""
    stretch: Stretch


@dataclass(frozen=True)
class Moment:
    """The start of a turn, when the loop status is made."""

    turn: int
    view: GameView
    turns_stuck: int
    stretch: Stretch
    banned: tuple[str, ...] = ()
    """Commands the loop break refuses this turn."""


@dataclass(frozen=True)
class GateRequest:
    """A gate a detector opened: `terminate` ends the episode (`loop_gate`), `human` asks for guidance, `warn` logs."""

    action: str
    loop_count: int
    description: str


class Detector:
    """One angle on loops. Subclass it, set `name` and `config_model`, implement `observe` and what applies."""

    name: ClassVar[str]
    """Its section, `[tool.zorkgpt.loop_break.<name>]`, and its key in LoopBreak.detectors."""
    config_model: ClassVar[type[DetectorSection]]
    stop_rule: ClassVar[str | None] = None
    """The rule name its stops carry (`stuck_termination`'s `rule`, the summary's `stop_rule`); None: it never
    stops an episode."""
    events: ClassVar[dict[EventType | str, str | None]] = {}
    """The event types it emits (built-in, or registered by `session.events.register_event_type`), each with its
    marker on the viewer's chart (None: not marked): a built-in marker or one of `markers`."""
    markers: ClassVar[dict[str, str]] = {}
    """Markers of its own, name -> colour (`#rrggbb`), registered with it (`session.events.register_marker`)."""

    def __init__(self, config: Any, tools: Tools):
        self.config = config
        self.tools = tools

    def observe(self, turn: Turn) -> Events | None:
        """Take in one executed turn; returns the events it raises."""
        raise NotImplementedError

    def observe_not_run(self, turn: Turn) -> Events | None:
        """Take in a turn that ran nothing because no command the model committed to could run (its replies held
        none, or every proposal was refused): the same nothing again and again is a loop like any other, and the
        stop rules see it as a turn that changed nothing. Default: as any turn."""
        return self.observe(turn)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        """Why its stop rule ends the episode after the turn just observed (a sentence for the log); None: it does
        not."""
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        """Turns until its stop rule could fire at the earliest, if play goes on as it is; None: it cannot."""
        return None

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        """How near each of its stops, bans and gates is after the turn just observed, by name: the count reached
        over the count that sets it off (1.0 or more: it does; of several conditions, the one farthest from it).
        benchmarks.margins reads the healthy peak of each: a rule is safe while healthy play stays below 1/1.5."""
        return {}

    def warning_round(self, remaining: int) -> tuple[str, ...]:
        """The commands the player keeps saying in order, when its stop is `remaining` turns off or nearer (the
        warning names them); (): none."""
        return ()

    def adjust(self, proposal: ScoredProposal) -> list[tuple[float, str]]:
        """(delta, reason) for each adjustment it makes to the critic's score of the proposal."""
        return []

    def facts(self) -> dict[str, Any]:
        """What it found out about the proposal it adjusted last that the adjustment's event shows (the room loops'
        predicted destination)."""
        return {}

    def lines(self, moment: Moment) -> list[str]:
        """Its notes for the agent and critic in the loop status (plain words)."""
        return []

    def opened_gate(self) -> GateRequest | None:
        """A gate it opened on the turn just observed."""
        return None

    def banned(self, room_id: int | None, walled_in: bool = False) -> list[str]:
        """Canonical commands it refuses in this room this turn (`walled_in`: no move, see LoopBreak._walled_in)."""
        return []

    def blocked(self, command: str, view: GameView, turn: int, walled_in: bool) -> Judged | None:
        """A blocking judgement, with its events, when it refuses `command` outright (asked before the critic; see
        penalties.block), else None."""
        return None

    def note_rejection(self, turn: int, room_id: int | None, command: str) -> Events | None:
        """The critic (after adjustments) rejected `command`; returns the events it raises."""
        return None

    def accept_guidance(self, guidance: str, turn: int) -> Events | None:
        """A human answered a gate; returns the events it raises."""
        return None


REGISTRY: dict[str, type[Detector]] = {}
"""Detector name -> class, in the order the LoopBreak builds, feeds and asks them (the first stop rule that fires
names the stop). The built-in ones register as their modules are imported, in the order of
managers.loop_break.DETECTOR_MODULES; a plugin's come after them."""


def register(detector: type[Detector]) -> type[Detector]:
    """Add a detector class (usable as a decorator), after those registered before, with its config section and its
    markers. ValueError when its name is taken, or it declares an event type nobody registered or a marker that is
    neither built-in nor its own."""
    if detector.name in REGISTRY:
        raise ValueError(f"a detector named {detector.name!r} is registered already")
    unknown = [str(event) for event in detector.events if not is_event_type(event)]
    if unknown:
        raise ValueError(
            f"detector {detector.name!r} emits {', '.join(unknown)}, no registered event type: "
            "register it first (session.events.register_event_type)"
        )
    strange = [m for m in detector.events.values() if m is not None and m not in MARKERS and m not in detector.markers]
    if strange:
        raise ValueError(
            f"detector {detector.name!r} marks its events with {', '.join(strange)}: not a marker "
            f"({', '.join(MARKERS)}); declare its own in `markers`"
        )
    for marker, colour in detector.markers.items():
        register_marker(marker, colour)
    LoopBreakConfig.register_section(detector.name, detector.config_model)
    REGISTRY[detector.name] = detector
    return detector


def unregister(name: str) -> None:
    """Drop a registered detector and its config section (a test's toy)."""
    REGISTRY.pop(name, None)
    LoopBreakConfig.unregister_section(name)


def stop_rules() -> list[str]:
    """Every stop rule's name, in the order they are asked."""
    return [d.stop_rule for d in REGISTRY.values() if d.stop_rule is not None]
