"""The loop-break system: progress velocity, room-loop detectors, penalties, warnings, termination.

Fed one TurnRecord per turn (`observe`); asked for the turn's status before the agent runs (`status`) and for
adjusted critic scores while the agent's proposals are judged (`adjust`). It never reaches into the orchestrator.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from managers.loop_break.destination import DestinationPredictor
from managers.loop_break.detector import (
    REGISTRY,
    Detector,
    GateRequest,
    Moment,
    ScoredProposal,
    Stretch,
    Tools,
    Turn,
)
from managers.loop_break.penalties import Judged, adjust_score, block
from managers.loop_break.progress import ProgressResult, ProgressTracker
from managers.loop_break.rewind import RewindBans
from managers.loop_break.warnings import NOT_TRIED_RECENTLY, build_stuck_warning
from managers.loop_break.window import RepetitionWindow
from managers.map_graph import MapGraph
from session.commands import canonical_command
from session.config import LoopBreakConfig
from session.events import EventType, new_event
from session.records import BLOCKING_SOURCES, NOT_RUN, Ending, GameView, Judgement, TurnRecord

OWN_EVENTS: dict[EventType, str | None] = {
    EventType.PROGRESS_CHECK: None,
    EventType.SCORE_CHANGE: None,
    EventType.PROGRESS_DETECTED: None,
    EventType.STUCK_TERMINATION: "termination",
    EventType.LOOP_BREAK_WARNING: "warning",
    EventType.LOOP_PENALTY_APPLIED: "penalty",
    EventType.REWIND: "rewind",  # raised by the orchestrator on this loop break's stop verdict (on_stuck = "rewind")
}
"""The events the LoopBreak raises itself (its detectors declare theirs), each with its marker on the viewer's chart."""


def marked_events() -> dict[str, str]:
    """Event type -> the viewer's marker kind, for every event the loop break and its registered detectors mark."""
    marks = {**OWN_EVENTS}
    for detector in REGISTRY.values():
        marks.update(detector.events)
    return {str(event): mark for event, mark in marks.items() if mark is not None}


@dataclass(frozen=True)
class LoopStatus:
    """What the loop break tells the agent and critic at the start of a turn."""

    turns_stuck: int
    warning: str = ""
    loop_info: str = ""
    """Design 000's `_build_loop_context_info` (docs/design.md): every detector's notes, one line each."""
    banned: tuple[str, ...] = ()
    """Commands the loop break rejects outright this turn."""
    events: tuple[dict, ...] = ()
    """What making the status raised (the stuck warning)."""

    @property
    def text(self) -> str:
        return "\n\n".join(part for part in (self.warning, self.loop_info) if part)


@dataclass
class Verdict:
    progress: ProgressResult
    terminate: bool = False
    reason: Ending | None = None
    events: list[dict] = field(default_factory=list)
    gate: GateRequest | None = None
    """A failure gate that fired this turn (its action: terminate, human or warn)."""
    rule: str | None = None
    """The stop rule that ended the episode (with `why`, what it saw)."""
    why: str = ""


class LoopBreak:
    """The registered detectors (managers/loop_break/detector.py), built from their config sections in the
    registry's order, and what they share: progress, the wait clock, the repetition window, the warning."""

    def __init__(
        self,
        config: LoopBreakConfig,
        game_map: MapGraph,
        predictor: DestinationPredictor,
        rejection_threshold: float = 0.5,
    ):
        self.config = config
        self.game_map = game_map
        self.predictor = predictor
        self.rejection_threshold = rejection_threshold
        signals = set(config.progress_signals)
        if not config.enable_objective_based_progress:
            signals.discard("objective")
        self.signals = tuple(s for s in config.progress_signals if s in signals)
        self.progress = ProgressTracker(signals)
        self.recent_commands: deque[str] = deque(maxlen=config.action_novelty_window)
        self.situation = ""
        """The situation the last turn left the player in (TurnRecord.situation; "" before the first)."""
        self.bans = RewindBans()
        """What the abandoned loop of the last rewind repeated, refused for a while."""
        self._this_turn: tuple[int, int | None, bool] | None = None
        """(turn, room, walled in) as the turn's status found them, until a rejection or the turn's end."""
        self._start_detectors()

    def _start_detectors(self) -> None:
        """Every registered detector, fresh, and the stretch they share."""
        config = self.config
        repetition = config.repetition
        window = RepetitionWindow(repetition.window, free_waits=config.wait_allowance, misses=repetition.misses)
        self.stretch = Stretch(config, self.progress, window)
        tools = Tools(self.game_map, self.predictor)
        self.detectors: dict[str, Detector] = {
            name: detector(getattr(config, name), tools) for name, detector in REGISTRY.items()
        }

    def rewind(self, turn: int, situation: str, abandoned: Sequence[TurnRecord], note: str, start: str) -> None:
        """The game was put back to the last progress after `turn`, the player in `situation`: the detectors start
        again from here (the stuck clock with them), and what `abandoned` (begun in situation `start`) repeated is
        refused for rewind_ban_turns, with `note` to the agent."""
        self._this_turn = None
        self.bans.start(turn, self.config.rewind_ban_turns, start, abandoned, note)
        self.progress.last_progress_turn = turn
        self.situation = situation
        self._start_detectors()

    @property
    def enabled(self) -> bool:
        return self.config.enabled

    @property
    def last_progress_turn(self) -> int:
        """The last turn that made progress (0: none yet)."""
        return self.progress.last_progress_turn

    def summary(self, turns: int) -> dict:
        """The summary's `loop_break` section, after `turns` turns."""
        return {
            "enabled": self.enabled,
            "progress_signals": list(self.signals),
            "last_progress_turn": self.last_progress_turn,
            "turns_stuck_at_end": turns - self.last_progress_turn,
            "on_stuck": self.config.on_stuck,
        }

    # -- after each turn ---------------------------------------------------------------------------------
    def observe(self, record: TurnRecord) -> Verdict:
        """Update progress and detectors from one executed turn; decide on termination."""
        self._this_turn = None
        before = self.progress.last_progress_turn
        progress = self.progress.observe(record)
        verdict = Verdict(progress)
        self.situation = record.situation
        if progress.progress:
            self.bans.end()
        if not self.enabled or record.fallback == NOT_RUN:  # a script's interpreter command, refused: no agent loop
            return verdict
        events = verdict.events
        events.append(
            new_event(
                EventType.PROGRESS_CHECK,
                f"Progress check: signals={list(progress.signals)}, turns_stuck={progress.turns_stuck}",
                level="DEBUG",
                turn=record.turn,
                signals=list(progress.signals),
                turns_stuck=progress.turns_stuck,
                last_progress_turn=progress.last_progress_turn,
            )
        )
        if record.score_changed:
            events.append(
                new_event(
                    EventType.SCORE_CHANGE,
                    f"Score changed: {record.score_before} → {record.score_after}",
                    turn=record.turn,
                    old_score=record.score_before,
                    new_score=record.score_after,
                )
            )
        if progress.progress and record.turn - 1 - before > 0:
            events.append(
                new_event(
                    EventType.PROGRESS_DETECTED,
                    f"Progress detected ({', '.join(progress.signals)}) - resetting stuck timer",
                    turn=record.turn,
                    signals=list(progress.signals),
                    turns_stuck_before_reset=record.turn - 1 - before,
                )
            )
        self.recent_commands.append(canonical_command(record.command))
        self._update_stretch(record, progress)
        turn = Turn(record, progress, self.stretch)
        for detector in self.detectors.values():
            events += (detector.observe(turn) if record.ran else detector.observe_not_run(turn)) or ()
        self.stretch.pressure = max(
            (
                value
                for detector in self.detectors.values()
                if detector.stop_rule is not None
                for value in detector.pressure(progress.turns_stuck, self.stretch).values()
            ),
            default=0.0,
        )
        verdict.gate = next((gate for d in self.detectors.values() if (gate := d.opened_gate()) is not None), None)
        if verdict.gate is not None and verdict.gate.action == "terminate":
            verdict.terminate, verdict.reason = True, Ending.LOOP_GATE
            return verdict
        stop = self._stop(record.turn, progress.turns_stuck)
        if stop is not None:
            verdict.terminate, verdict.reason = True, Ending.STUCK
            verdict.rule, verdict.why = stop
            events.append(
                new_event(
                    EventType.STUCK_TERMINATION,
                    f"Terminating episode: {verdict.why} (score {record.score_after})",
                    level="WARNING",
                    turn=record.turn,
                    turns_stuck=progress.turns_stuck,
                    score=record.score_after,
                    last_progress_turn=progress.last_progress_turn,
                    rule=verdict.rule,
                    why=verdict.why,
                )
            )
        return verdict

    def _update_stretch(self, record: TurnRecord, progress: ProgressResult) -> None:
        """The shared state, before the detectors see the turn: the repetition window (while repetition detection
        is on) and the wait clock."""
        stretch = self.stretch
        if self.config.repetition.enabled:
            stretch.window.observe(record, progress.progress)
            stretch.repeating = stretch.window.result()
        stretch.count_wait(record, progress.progress)

    def _stop(self, turn: int, turns_stuck: int) -> tuple[str, str] | None:
        """(rule, why) of the first stop rule, in the registry's order, that fires after this turn (checked every
        stuck_check_interval turns); None: play goes on."""
        if turn % self.config.stuck_check_interval:
            return None
        for detector in self.detectors.values():
            if detector.stop_rule is not None and (why := detector.stop(turns_stuck, self.stretch)) is not None:
                return detector.stop_rule, why
        return None

    def clock(self, turns_stuck: int) -> int:
        """The turns since the last progress that count towards the stop rules (Stretch.clock)."""
        return self.stretch.clock(turns_stuck)

    def turns_to_stop(self, turns_stuck: int) -> int | None:
        """Turns until a stop rule could fire at the earliest, if play goes on as it is (None: none can)."""
        turns = [d.turns_to_stop(turns_stuck, self.stretch) for d in self.detectors.values() if d.stop_rule]
        known = [t for t in turns if t is not None]
        return max(0, min(known)) if known else None

    # -- before the agent runs ---------------------------------------------------------------------------
    def status(
        self,
        turn: int,
        view: GameView,
        objectives: tuple[str, ...],
        untried_directions: tuple[str, ...] | None = None,
        things: tuple[str, ...] | None = None,
    ) -> LoopStatus:
        """The loop status for this turn. `untried_directions` (directions never tried here, those the room's text
        mentions first) and `things` (what a player has been shown here, in the game's words) keep suggestions to
        what a player knows; None: every untried direction and every object in the room."""
        if not self.enabled:
            return LoopStatus(0)
        events: tuple[dict, ...] = ()
        turns_stuck = max(0, self.progress.turns_stuck(turn - 1))
        untried = (
            list(untried_directions)
            if untried_directions is not None
            else self.game_map.untried_directions(view.room_id)
        )
        names = list(things) if things is not None else [o.noun for o in view.room_objects]
        walled_in = self._walled_in(view.room_id)
        self._this_turn = (turn, view.room_id, walled_in)
        banned = self._banned(view.room_id, walled_in, turn)
        hints = self._novelty_hints(view, untried, names, banned) if self.config.enable_exploration_hints else ()
        warning = ""
        remaining = self.turns_to_stop(turns_stuck)
        lead = self.config.warning_lead_turns
        near = remaining is not None and remaining <= lead and self.stretch.steering
        if self.config.enable_stuck_warnings and turns_stuck > 0 and near:
            going_round = next(
                (commands for d in self.detectors.values() if (commands := d.warning_round(remaining))), ()
            )
            unexplored = tuple(untried) if self.config.enable_exploration_hints else ()
            warning = build_stuck_warning(
                turns_stuck, remaining, self.signals, objectives, hints, unexplored, going_round
            )
            events = (
                new_event(
                    EventType.LOOP_BREAK_WARNING,
                    f"No progress for {turns_stuck} turns - approaching termination",
                    level="WARNING",
                    turn=turn,
                    turns_stuck=turns_stuck,
                    turns_remaining=remaining,
                    last_progress_turn=self.progress.last_progress_turn,
                    cycle=len(going_round),
                ),
            )
        moment = Moment(turn, view, turns_stuck, self.stretch, tuple(banned))
        lines = [line for detector in self.detectors.values() for line in detector.lines(moment)]
        if self.bans.note and self.bans.active(turn):
            lines.insert(0, self.bans.note)
        if lines and hints and not warning:
            lines.append(f"{NOT_TRIED_RECENTLY}: {', '.join(hints)}.")
        return LoopStatus(turns_stuck, warning, "\n".join(lines), tuple(banned), events)

    def _banned(self, room_id: int | None, walled_in: bool = False, turn: int | None = None) -> list[str]:
        """Every detector's refused commands here, once each, and (given the turn) what a rewind refuses in this
        situation, unless that would wall the player in."""
        banned = [command for d in self.detectors.values() for command in d.banned(room_id, walled_in)]
        if turn is not None and not walled_in:
            banned += sorted(self._rewind_banned(room_id, turn))
        return list(dict.fromkeys(banned))

    def _rewind_banned(self, room_id: int | None, turn: int) -> frozenset[str]:
        """What the last rewind refuses here now (canonical commands), less the ways out of the room when every one
        of them would be refused."""
        banned = self.bans.banned(self.situation, turn)
        if not banned:
            return banned
        final = set(self._banned(room_id)) | banned
        exits = {canonical_command(way) for way in self.game_map.ways_out(room_id)}
        if exits and exits <= final:
            return banned - exits
        return banned

    def _novelty_hints(
        self, view: GameView, untried: list[str], names: list[str], banned: list[str]
    ) -> tuple[str, ...]:
        """Commands not run recently (in canonical form, so `n` counts for `north`) and not banned: moves, and
        looking at or taking what is in sight (never dropping: what is carried may be the only light or weapon)."""
        room = self.game_map.rooms.get(view.room_id) if view.room_id is not None else None
        candidates = (list(room.exits) if room else []) + untried
        for name in names:
            candidates += [f"examine {name}", f"take {name}"]
        off = set(self.recent_commands) | set(banned)
        fresh = [c for c in dict.fromkeys(candidates) if canonical_command(c) not in off]
        return tuple(fresh[:5])

    # -- while proposals are judged ----------------------------------------------------------------------
    def blocked(self, command: str, view: GameView, turn: int) -> Judged | None:
        """A blocking judgement when `command` is off the table here (banned, rejected for good), else None.

        Asked before the critic: a verdict that cannot change the outcome is not worth a call."""
        if not self.enabled:
            return None
        walled_in = self._walled_in_now(view.room_id, turn)
        for detector in self.detectors.values():
            judged = detector.blocked(command, view, turn, walled_in)
            if judged is not None:
                return judged
        if not walled_in and canonical_command(command) in self._rewind_banned(view.room_id, turn):
            reason = "Rewind ban (repeated in this same situation by the loop the game was rewound from)"
            return block(command, "ban", reason, turn)
        return None

    def _walled_in_now(self, room_id: int | None, turn: int) -> bool:
        """`_walled_in` as the turn's status found it, while no rejection since has changed what is refused."""
        if self._this_turn is not None and self._this_turn[:2] == (turn, room_id):
            return self._this_turn[2]
        return self._walled_in(room_id)

    def _walled_in(self, room_id: int | None) -> bool:
        """Every known way out of this room is rejected for good here and no direction is left untried."""
        room = self.game_map.rooms.get(room_id) if room_id is not None else None
        if room is None or self.game_map.untried_directions(room_id):
            return False
        final = self._banned(room_id)
        return all(canonical_command(way) in final for way in room.exits)

    def adjust(self, command: str, judgement: Judgement, view: GameView, turn: int) -> Judged:
        """Apply every detector's penalties and bonuses to the critic's score used for acceptance: each detector's
        summed and clamped as one step, the steps in the registry's order (the action-loop penalty before the room
        loops' steering, as measured)."""
        if not self.enabled or judgement.source in BLOCKING_SOURCES:
            return Judged(judgement)
        proposal = ScoredProposal(command, judgement, view, turn, self.progress.turns_stuck(turn - 1), self.stretch)
        adjusted = judgement
        for detector in self.detectors.values():
            adjusted = adjust_score(adjusted, detector.adjust(proposal))
        if adjusted is judgement:
            return Judged(judgement)
        turned = judgement.score >= self.rejection_threshold > adjusted.score
        facts = {"destination": None}
        for detector in self.detectors.values():
            facts.update(detector.facts())
        event = new_event(
            EventType.LOOP_PENALTY_APPLIED,
            f"Applied loop penalty to '{command}': {judgement.score:.2f} → {adjusted.score:.2f}",
            turn=turn,
            action=command,
            base_score=judgement.score,
            adjusted_score=adjusted.score,
            reason="; ".join(adjusted.adjustments),
            **facts,
            turned_to_reject=turned,
        )
        return Judged(adjusted, (event,))

    def note_rejection(self, turn: int, room_id: int | None, command: str) -> tuple[dict, ...]:
        """A proposal was rejected (after adjustments): agent<->critic loop bookkeeping. Returns the events raised."""
        if not self.enabled:
            return ()
        self._this_turn = None  # a rejection may refuse more here
        return tuple(e for d in self.detectors.values() for e in d.note_rejection(turn, room_id, command) or ())

    def accept_guidance(self, guidance: str, turn: int) -> tuple[dict, ...]:
        """A human answered a loop gate. Returns the events raised."""
        return tuple(e for d in self.detectors.values() for e in d.accept_guidance(guidance, turn) or ())
