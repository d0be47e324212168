"""The loop-break system: progress velocity, room-loop detectors, penalties, warnings, termination.

Fed one TurnRecord per turn (`observe`); asked for the turn's status before the agent runs (`status`) and for
adjusted critic scores while the agent's proposals are judged (`adjust`). It never reaches into the orchestrator.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from managers.loop_break.action_loops import ActionLoops, GateRequest
from managers.loop_break.churn import OBJECT_STATE_SIGNAL, ChurnCount, ChurnTurn
from managers.loop_break.cycle import CycleDetector
from managers.loop_break.destination import DestinationPredictor
from managers.loop_break.fruitless import FruitlessTries
from managers.loop_break.penalties import Detections, adjust_score, room_loop_deltas
from managers.loop_break.progress import ProgressResult, ProgressTracker
from managers.loop_break.repetition import RepetitionDetector, RepetitionResult
from managers.loop_break.room_loops import (
    CampingDetector,
    CampingResult,
    OscillationDetector,
    OscillationResult,
    RegionLoopDetector,
    RegionLoopResult,
)
from managers.loop_break.warnings import NOT_TRIED_RECENTLY, build_stuck_warning
from managers.map_graph import MapGraph
from session.commands import canonical_command, direction_of, is_observation, is_wait
from session.config import ActionLoopsConfig, LoopBreakConfig
from session.events import emit
from session.records import BLOCKING_SOURCES, Ending, GameView, Judgement, TurnRecord

NO_DETECTIONS = Detections(OscillationResult(False), CampingResult(False), RegionLoopResult(False))


@dataclass(frozen=True)
class LoopStatus:
    """What the loop break tells the agent and critic at the start of a turn."""

    turns_stuck: int
    detections: Detections = NO_DETECTIONS
    warning: str = ""
    loop_info: str = ""
    """The seed's `_build_loop_context_info`: active detections, one line each."""
    banned: tuple[str, ...] = ()
    """Commands the loop break rejects outright this turn."""

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


class LoopBreak:
    def __init__(
        self,
        config: LoopBreakConfig,
        game_map: MapGraph,
        predictor: DestinationPredictor,
        rejection_threshold: float = 0.5,
        action_loops: ActionLoopsConfig | None = None,
    ):
        self.config = config
        self.action_loops = ActionLoops(action_loops or ActionLoopsConfig())
        self.game_map = game_map
        self.predictor = predictor
        self.rejection_threshold = rejection_threshold
        signals = set(config.progress_signals)
        if not config.enable_objective_based_progress:
            signals.discard("objective")
        self.signals = tuple(s for s in config.progress_signals if s in signals)
        self.progress = ProgressTracker(signals)
        self.oscillation = OscillationDetector()
        self.camping = CampingDetector(config.camping_window, config.camping_threshold)
        self.region = RegionLoopDetector(config.region_window, config.region_max_rooms)
        self.recent_rooms: deque[int | None] = deque(maxlen=config.location_revisit_window)
        self.recent_commands: deque[str] = deque(maxlen=config.action_novelty_window)
        self.active: Detections = NO_DETECTIONS
        self.repetition = RepetitionDetector(
            config.repetition_window, free_waits=config.wait_allowance, misses=config.repetition_misses
        )
        self.wait_credit = 0
        """Turns since the last progress left out of the stop rules' clock: the first wait_allowance waits, each
        with up to wait_detours of the other turns since the wait before it."""
        self.since_wait: int | None = None
        """Other turns since the last wait (None: no wait since the last progress)."""
        self.fruitless = FruitlessTries()
        """What the turns since the last progress tried: none of it got anywhere."""
        self.fruitless_across = FruitlessTries()
        """The same since the last progress by a signal other than `fruitless_weak_signals`: a semi-novel loop whose
        walks reach rooms it had seen only with other things in hand (zork2's carousel) is one stretch."""
        self.weak_signals = frozenset(config.fruitless_weak_signals)
        self.repeating = RepetitionResult(0, 0)
        """The repetition window after the last turn (empty while repetition detection is off)."""
        self.cycle = CycleDetector(config.cycle_turns, config.cycle_rounds, config.cycle_max_period)
        self.churn = ChurnCount(config.churn_window, config.churn_changes, config.churn_repeats, config.churn_min_turns)
        """Changes in place that reached nothing new, since the last progress by a strong signal (busy camping)."""
        self.situation = ""
        """The situation the last turn left ("" before the first): a churning turn leaves another one."""

    @property
    def enabled(self) -> bool:
        return self.config.enable_velocity_detection

    # -- after each turn ---------------------------------------------------------------------------------
    def observe(self, record: TurnRecord) -> Verdict:
        """Update progress and detectors from one executed turn; decide on termination."""
        before = self.progress.last_progress_turn
        progress = self.progress.observe(record)
        verdict = Verdict(progress)
        if not self.enabled or not record.ran:  # a refused interpreter command is no agent loop
            return verdict
        events = verdict.events
        emit(
            events,
            "progress_check",
            f"Progress check: signals={list(progress.signals)}, turns_stuck={progress.turns_stuck}",
            level="DEBUG",
            turn=record.turn,
            signals=list(progress.signals),
            turns_stuck=progress.turns_stuck,
            last_progress_turn=progress.last_progress_turn,
        )
        if record.score_changed:
            emit(
                events,
                "score_change",
                f"Score changed: {record.score_before} → {record.score_after}",
                turn=record.turn,
                old_score=record.score_before,
                new_score=record.score_after,
            )
        if progress.progress and record.turn - 1 - before > 0:
            emit(
                events,
                "progress_detected",
                f"Progress detected ({', '.join(progress.signals)}) - resetting stuck timer",
                turn=record.turn,
                signals=list(progress.signals),
                turns_stuck_before_reset=record.turn - 1 - before,
            )
        for detector in (self.oscillation, self.camping, self.region):
            detector.observe(record, progress)
        self.recent_rooms.append(record.room_id_after)
        self.recent_commands.append(canonical_command(record.command))
        self._update_detections(progress.turns_stuck, events, record.turn)
        self._update_repetition(record, progress, events)
        verdict.gate = self.action_loops.observe(record, progress, events)
        if verdict.gate is not None and verdict.gate.action == "terminate":
            verdict.terminate, verdict.reason = True, Ending.LOOP_GATE
            return verdict
        self.cycle.observe(record, progress.signals)
        self._count_tries(record.command, progress.signals)
        self._count_churn(record, progress.signals)
        self._count_waits(record, progress.progress)
        rule = self._stop_rule(record.turn, progress.turns_stuck)
        if rule is not None:
            verdict.terminate, verdict.reason = True, Ending.STUCK
            why = self._why(rule, progress.turns_stuck)
            emit(
                events,
                "stuck_termination",
                f"Terminating episode: {why} (score {record.score_after})",
                level="WARNING",
                turn=record.turn,
                turns_stuck=progress.turns_stuck,
                score=record.score_after,
                last_progress_turn=progress.last_progress_turn,
                rule=rule,
                why=why,
            )
        return verdict

    def _why(self, rule: str, turns_stuck: int) -> str:
        """What a stop rule saw, for the log."""
        if rule == "cycle":
            period, span = self.cycle.found() or (0, 0)
            return f"the same {period} commands in the same order for {span} turns"
        if rule == "churn":
            weak = ", ".join(sorted(self.weak_signals))
            if self.churn.by_repeats:
                return (
                    f"{self.churn.repeats} of the last {len(self.churn.repeated)} turns changed things in place by "
                    f"commands made here before, {self.churn.turns_across} turns without progress but {weak} and "
                    "new object states"
                )
            return (
                f"{self.churn.changes} of the last {len(self.churn.changed)} turns changed things in place and "
                f"reached nothing new, {self.churn.turns} turns without progress but {weak}"
            )
        if rule == "fruitless":
            tries = next(t for t, clock in self._fruitless(turns_stuck) if clock >= self.config.fruitless_turns)
            if tries is self.fruitless_across:
                weak = ", ".join(sorted(self.weak_signals))
                return f"no progress but {weak} for {tries.turns} turns, {len(tries.tried)} different things tried"
            return f"no progress for {turns_stuck} turns, {len(tries.tried)} different things tried in them"
        detail = {
            "no_progress": "",
            "repetition": (
                f", {self.repeating.repeats} of the last {self.repeating.window} repeating what they did before"
            ),
        }[rule]
        return f"no progress for {turns_stuck} turns{detail}"

    def _stop_rule(self, turn: int, turns_stuck: int) -> str | None:
        """Which stop rule fires after this turn: `no_progress` (max_turns_stuck turns without progress),
        `repetition` (repetition_min_turns without progress, the repetition window repeating), `fruitless`
        (fruitless_turns without progress, or without progress but by `fruitless_weak_signals`, fruitless_share of
        them, less the waits and the moves made again, trying something not tried since), `churn` (churn_changes of
        the last churn_window turns changed things in place and reached nothing new, or churn_repeats of them did so
        by commands made there before, churn_min_turns after the progress each counts from:
        managers/loop_break/churn.py) or `cycle` (the commands coming round in the
        same order, cycle_turns and cycle_rounds)."""
        if turn % self.config.stuck_check_interval:
            return None
        clock = self.clock(turns_stuck)
        if clock >= self._no_progress_limit():
            return "no_progress"
        if self.repeating.repeating and self._repetition_clock(turns_stuck) >= self.config.repetition_min_turns:
            return "repetition"
        if any(fruitless_clock >= self.config.fruitless_turns for _, fruitless_clock in self._fruitless(turns_stuck)):
            return "fruitless"
        if self.churn.holds():
            return "churn"
        if self.cycle.found() is not None:
            return "cycle"
        return None

    def _count_churn(self, record: TurnRecord, signals: tuple[str, ...]) -> None:
        """A turn churns when it changed the situation in place (no move, no observation, the same known room) and
        made no progress but by the weak signals (managers/loop_break/churn.py)."""
        before, self.situation = self.situation, record.situation
        strong = set(signals) - self.weak_signals
        if strong - {OBJECT_STATE_SIGNAL}:
            self.churn.restart()
            return
        command = record.command
        in_place = record.room_id_before is not None and record.room_id_before == record.room_id_after
        doing = direction_of(command) is None and not is_observation(command)
        made = (record.room_id_before, canonical_command(command))
        churned = bool(before) and in_place and doing and record.situation != before
        self.churn.observe(ChurnTurn(churned, self.churn.made_before(made), bool(strong)))

    def _count_tries(self, command: str, signals: tuple[str, ...]) -> None:
        walked_again = self.repetition.moved_again  # never while repetition detection is off: it is not fed then
        for tries, restart in (
            (self.fruitless, bool(signals)),
            (self.fruitless_across, bool(set(signals) - self.weak_signals)),
        ):
            if restart:
                tries.restart()
            else:
                tries.observe(command, walked_again)

    def _fruitless(self, turns_stuck: int) -> list[tuple[FruitlessTries, int]]:
        """The fruitless rule's counts whose share holds now, each with its clock: the turns since the last progress,
        on the stop rules' clock, and those since the last progress by a signal other than `fruitless_weak_signals`,
        every wait left out. The rule fires when one of them reaches fruitless_turns."""
        if not self.config.fruitless_turns:
            return []
        counts = ((self.fruitless, self.clock(turns_stuck)), (self.fruitless_across, self.fruitless_across.clock))
        return [(tries, clock) for tries, clock in counts if tries.holds(self.config.fruitless_share)]

    def _count_waits(self, record: TurnRecord, progress: bool) -> None:
        if progress:
            self.wait_credit = 0
            self.since_wait = None
        elif is_wait(record.command):  # the fruitless count has this wait already (_count_tries comes first)
            if self.fruitless.waits <= self.config.wait_allowance:
                between = min(self.since_wait, self.config.wait_detours) if self.since_wait is not None else 0
                self.wait_credit += 1 + between
            self.since_wait = 0
        elif self.since_wait is not None:
            self.since_wait += 1

    def clock(self, turns_stuck: int) -> int:
        """The turns since the last progress that count towards the stop rules: the waits and the turns between them
        left out (a timed event needs them; measured: tryst205's jail takes 14 waits in 52-75 turns among detours,
        balances' feather up to 13). Turns after the last wait count: a loop that starts after waiting is a loop."""
        return turns_stuck - self.wait_credit

    def _repetition_clock(self, turns_stuck: int) -> int:
        """The repetition rule's clock: the stop rules' clock, or every turn since the last progress once the player
        has waited more times in a row than the free waits (RepetitionDetector.waited_out): a player who only waits
        is stopped on the first wait past the free ones, not repetition_min_turns later."""
        return turns_stuck if self.repetition.waited_out else self.clock(turns_stuck)

    def _no_progress_limit(self) -> int:
        """max_turns_stuck; when the turns since the last progress went through more than trek_rooms rooms, up to
        trek_extra_turns more, but no more than trek_grace turns after the player last reached a room not yet seen
        since the last progress. A walk back through known rooms keeps reaching rooms (karn's shafts, night's maze,
        zork1's coal mine, with detours); a loop over many rooms has reached all of them in its first round."""
        config = self.config
        if len(self.repetition.stretch_rooms) <= config.trek_rooms:
            return config.max_turns_stuck
        limit = config.max_turns_stuck + config.trek_extra_turns
        if config.trek_grace:
            arrived = self.repetition.last_arrival - self.progress.last_progress_turn  # in turns since the progress
            limit = min(limit, arrived + config.trek_grace)
        return max(config.max_turns_stuck, limit)

    def turns_to_stop(self, turns_stuck: int) -> int:
        """Turns until a stop rule could fire at the earliest, if play goes on as it is."""
        clock = self.clock(turns_stuck)
        remaining = self._no_progress_limit() - clock
        if self.config.enable_repetition_detection:
            until_repeating = self.repetition.turns_until_repeating()
            until_min_turns = self.config.repetition_min_turns - self._repetition_clock(turns_stuck)
            remaining = min(remaining, max(until_min_turns, until_repeating))
        for _, fruitless_clock in self._fruitless(turns_stuck):
            remaining = min(remaining, self.config.fruitless_turns - fruitless_clock)
        cycle = self.cycle.nearest()
        if cycle is not None:
            remaining = min(remaining, cycle[0])
        return max(0, remaining)

    def _update_repetition(self, record: TurnRecord, progress: ProgressResult, events: list[dict]) -> None:
        if not self.config.enable_repetition_detection:
            return
        self.repetition.observe(record, progress.progress)
        previous, self.repeating = self.repeating, self.repetition.result()
        if self._wandering(self.repeating) and not self._wandering(previous):
            names = ", ".join(self.game_map.name_of(room) for room in self.repeating.rooms)
            emit(
                events,
                "loop_detected",
                f"Loop detected: wandering over {len(self.repeating.rooms)} rooms ({names})",
                level="WARNING",
                turn=record.turn,
                kind="wandering",
                detail=names,
                rooms=list(self.repeating.rooms),
                turns_stuck=progress.turns_stuck,
            )

    def _wandering(self, result: RepetitionResult) -> bool:
        """Going round more rooms than a region loop holds, the repetition window repeating."""
        return result.repeating and len(result.rooms) > self.config.region_max_rooms

    def _update_detections(self, turns_stuck: int, events: list[dict], turn: int) -> None:
        previous = self.active
        if not self.config.enable_loop_detection or turns_stuck < self.config.penalty_min_turns_stuck:
            self.active = NO_DETECTIONS
            return
        name_of = self.game_map.name_of
        self.active = Detections(
            self.oscillation.detect(name_of),
            self.camping.detect(name_of),
            self.region.detect(name_of),
            tuple(self.recent_rooms) if self.config.enable_location_penalty else (),
        )
        for kind, now, before in (
            ("oscillation", self.active.oscillation, previous.oscillation),
            ("camping", self.active.camping, previous.camping),
            ("region_loop", self.active.region, previous.region),
        ):
            if now.detected and not before.detected:
                emit(
                    events,
                    "loop_detected",
                    f"Loop detected: {kind} {_describe(now)}",
                    level="WARNING",
                    turn=turn,
                    kind=kind,
                    detail=_describe(now),
                    turns_stuck=turns_stuck,
                )

    # -- before the agent runs ---------------------------------------------------------------------------
    def status(
        self,
        turn: int,
        view: GameView,
        objectives: tuple[str, ...],
        events: list[dict],
        untried_directions: tuple[str, ...] | None = None,
        things: tuple[str, ...] | None = None,
    ) -> LoopStatus:
        """The loop status for this turn. `untried_directions` (directions never tried here, those the room's text
        mentions first) and `things` (what a player has been shown here, in the game's words) keep suggestions to
        what a player knows; None: every untried direction and every object in the room."""
        if not self.enabled:
            return LoopStatus(0)
        turns_stuck = max(0, self.progress.turns_stuck(turn - 1))
        untried = (
            list(untried_directions)
            if untried_directions is not None
            else self.game_map.untried_directions(view.room_id)
        )
        names = list(things) if things is not None else [o.noun for o in view.room_objects]
        banned = self.action_loops.banned(view.room_id, self._walled_in(view.room_id))
        hints = self._novelty_hints(view, untried, names, banned) if self.config.enable_exploration_hints else ()
        warning = ""
        remaining = self.turns_to_stop(turns_stuck)
        lead = self.config.max_turns_stuck - self.config.stuck_warning_threshold
        if self.config.enable_stuck_warnings and turns_stuck > 0 and remaining <= lead:
            cycle = self.cycle.nearest()
            period = cycle[1] if cycle is not None and cycle[0] <= remaining else 0
            unexplored = tuple(untried) if self.config.enable_exploration_hints else ()
            warning = build_stuck_warning(
                turns_stuck,
                remaining,
                self.signals,
                objectives,
                hints,
                unexplored,
                tuple(self.cycle.last_round(period)),
            )
            emit(
                events,
                "loop_break_warning",
                f"No progress for {turns_stuck} turns - approaching termination",
                level="WARNING",
                turn=turn,
                turns_stuck=turns_stuck,
                turns_remaining=remaining,
                last_progress_turn=self.progress.last_progress_turn,
                cycle=period,
            )
        action_status = self.action_loops.status(view.room_id, banned)
        lines = [*(room_loop_lines(self.active) if self._looping(turn) else []), *action_status.lines]
        if lines and hints and not warning:
            lines.append(f"{NOT_TRIED_RECENTLY}: {', '.join(hints)}.")
        return LoopStatus(turns_stuck, self.active, warning, "\n".join(lines), action_status.banned)

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
    def blocked(self, command: str, view: GameView, events: list[dict], turn: int) -> Judgement | None:
        """A blocking judgement when `command` is off the table here (banned, rejected for good), else None.

        Asked before the critic: a verdict that cannot change the outcome is not worth a call."""
        if not self.enabled:
            return None
        return self.action_loops.blocked(command, view, turn, events, self._walled_in(view.room_id))

    def _walled_in(self, room_id: int | None) -> bool:
        """Every known way out of this room is rejected for good here and no direction is left untried."""
        room = self.game_map.rooms.get(room_id) if room_id is not None else None
        if room is None or self.game_map.untried_directions(room_id):
            return False
        final = self.action_loops.banned(room_id)
        return all(canonical_command(way) in final for way in room.exits)

    def adjust(self, command: str, judgement: Judgement, view: GameView, events: list[dict], turn: int) -> Judgement:
        """Apply programmatic penalties/bonuses to the critic's score used for acceptance."""
        if not self.enabled or judgement.source in BLOCKING_SOURCES:
            return judgement
        adjusted = self.action_loops.adjust(command, judgement)
        destination = None
        deltas: list[tuple[float, str]] = []
        looping = self._looping(turn)
        direction = direction_of(command)
        if looping and direction is not None and direction == self._way_out(view.room_id):
            # The way out of a loop runs through the loop's rooms: their penalties would wall it in.
            reason = "Way-out bonus (the next step towards the nearest room with untried exits outside the loop)"
            deltas.append((self.config.way_out_bonus, reason))
        else:
            if self.config.enable_loop_detection and (self.active.any or self.active.recent_rooms):
                destination = self.predictor.predict(view.room_id, command, view.world_hash)
                deltas += room_loop_deltas(destination, self.active, self.config, self.game_map.name_of)
            if looping and self._repeats_move(command, view.room_id):
                reason = "Repeat penalty (this move was already made from here since the last progress)"
                deltas.append((self.config.repeated_move_penalty, reason))
        adjusted = adjust_score(adjusted, deltas)  # summed, then clamped once: the order never matters
        if adjusted is not judgement:
            turned = judgement.score >= self.rejection_threshold > adjusted.score
            emit(
                events,
                "loop_penalty_applied",
                f"Applied loop penalty to '{command}': {judgement.score:.2f} → {adjusted.score:.2f}",
                turn=turn,
                action=command,
                base_score=judgement.score,
                adjusted_score=adjusted.score,
                reason="; ".join(adjusted.adjustments),
                destination=destination,
                turned_to_reject=turned,
            )
        return adjusted

    def _looping(self, turn: int) -> bool:
        """Stuck for penalty_min_turns_stuck turns, and at least half of the recent turns repeat earlier ones."""
        if not (self.config.enable_repetition_detection and self.config.enable_loop_detection):
            return False
        stuck = self.progress.turns_stuck(turn - 1) >= self.config.penalty_min_turns_stuck
        return stuck and self.repeating.share >= 0.5

    def _way_out(self, room_id: int | None) -> str | None:
        """The first step of the shortest known way to a room with untried exits outside the loop (every room since
        the last progress, so a round longer than the repetition window counts whole); None when there is none."""
        loop_rooms = frozenset(self.repetition.stretch_rooms)
        path = self.game_map.path_to_frontier(room_id, avoid=loop_rooms)
        return path[0] if path else None

    def _repeats_move(self, command: str, room_id: int | None) -> bool:
        """A move already made from here since the last progress, when another way out of here is still untried
        (a penalty must steer, never wall the agent in)."""
        if not self.repetition.repeats_move(command):
            return False
        room = self.game_map.rooms.get(room_id) if room_id is not None else None
        ways = set(self.game_map.untried_directions(room_id)) | (set(room.exits) if room else set())
        return any(not self.repetition.repeats_move(way) for way in ways)

    def note_rejection(self, turn: int, room_id: int | None, command: str, events: list[dict]) -> None:
        """A proposal was rejected (after adjustments): agent<->critic loop bookkeeping."""
        if self.enabled:
            self.action_loops.note_rejection(turn, room_id, command, events)

    def accept_guidance(self, guidance: str, turn: int, events: list[dict]) -> None:
        """A human answered a loop gate."""
        self.action_loops.accept_guidance(guidance, turn, events)


def _describe(result) -> str:
    if isinstance(result, OscillationResult):
        return " → ".join(result.pattern_names)
    if isinstance(result, CampingResult):
        return f"{result.camped_location_name} ({result.visit_count} of {result.window_size} turns)"
    return f"{', '.join(result.room_names)} ({result.window_size} turns, no new room, no progress)"


def room_loop_lines(detections: Detections) -> list[str]:
    """The room loops going on, in plain words (shown only while the player repeats itself: a puzzle worked on in
    one room with new commands is no loop)."""
    lines = []
    if detections.oscillation.detected:
        rooms = " and ".join(dict.fromkeys(detections.oscillation.pattern_names))
        lines.append(f"You keep going back and forth between {rooms}.")
    if detections.camping.detected:
        camping = detections.camping
        lines.append(
            f"You have spent {camping.visit_count} of the last {camping.window_size} turns in "
            f"{camping.camped_location_name}, repeating what you did before."
        )
    if detections.region.detected:
        lines.append(f"You keep to {', '.join(detections.region.room_names)} without progress or a new room.")
    return lines
