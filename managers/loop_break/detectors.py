"""The built-in detectors, registered in the order the LoopBreak asks them: the room loops, then the stop rules in
the order they are checked (the first that fires names the stop: the no-progress backstop first), the agent<->critic
loops among them where their events and notes have always come. Each wraps the small counters of its module."""

from __future__ import annotations

from collections import deque

from managers.loop_break.action_loops import ActionLoops
from managers.loop_break.churn import OBJECT_STATE_SIGNAL, VARIABLE_SIGNAL, ChurnCount, ChurnTurn
from managers.loop_break.cycle import CycleDetector
from managers.loop_break.detector import Detector, Moment, Proposal, Stretch, Turn, register
from managers.loop_break.fruitless import FruitlessTries
from managers.loop_break.obstacle import ObstacleRetries
from managers.loop_break.penalties import Detections, room_loop_deltas
from managers.loop_break.repetition import RepetitionResult
from managers.loop_break.room_loops import (
    CampingDetector,
    CampingResult,
    OscillationDetector,
    OscillationResult,
    RegionLoopDetector,
    RegionLoopResult,
)
from managers.novelty import answer_key
from session.commands import PARTICLES, canonical_command, direction_of, is_observation
from session.config import (
    ChurnConfig,
    CycleConfig,
    FruitlessConfig,
    NoProgressConfig,
    ObstacleConfig,
    RepetitionConfig,
    RoomLoopsConfig,
)
from session.events import EventType, emit
from session.records import TurnRecord

NO_DETECTIONS = Detections(OscillationResult(False), CampingResult(False), RegionLoopResult(False))


class RoomLoops(Detector):
    """Oscillation, camping and region loops over the rooms, and the penalties and bonuses that steer out of them
    (also out of loops of any size, while the repetition window repeats)."""

    name = "room_loops"
    config_model = RoomLoopsConfig
    events = {EventType.LOOP_DETECTED: "detection"}
    config: RoomLoopsConfig

    def __init__(self, config: RoomLoopsConfig, tools):
        super().__init__(config, tools)
        self.oscillation = OscillationDetector()
        self.camping = CampingDetector(config.camping_window, config.camping_threshold)
        self.region = RegionLoopDetector(config.region_window, config.region_max_rooms)
        self.recent_rooms: deque[int | None] = deque(maxlen=config.location_revisit_window)
        self.active: Detections = NO_DETECTIONS
        """The room-loop detections that are active this turn."""

    def observe(self, turn: Turn) -> None:
        record, progress = turn.record, turn.progress
        for detector in (self.oscillation, self.camping, self.region):
            detector.observe(record, progress)
        self.recent_rooms.append(record.room_id_after)
        previous = self.active
        stuck = progress.turns_stuck >= turn.stretch.config.penalty_min_turns_stuck
        if not self.config.enabled or not stuck or not turn.stretch.steering:
            self.active = NO_DETECTIONS
            return
        name_of = self.tools.game_map.name_of
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
                    turn.events,
                    EventType.LOOP_DETECTED,
                    f"Loop detected: {kind} {now.describe()}",
                    level="WARNING",
                    turn=record.turn,
                    kind=kind,
                    detail=now.describe(),
                    turns_stuck=progress.turns_stuck,
                )

    def looping(self, turns_stuck: int, stretch: Stretch) -> bool:
        """Stuck for penalty_min_turns_stuck turns, and at least half of the recent turns repeat earlier ones (never
        while repetition detection is off: the window stays empty)."""
        if not self.config.enabled or not stretch.steering:
            return False
        return turns_stuck >= stretch.config.penalty_min_turns_stuck and stretch.repeating.share >= 0.5

    def adjust(self, proposal: Proposal) -> list[tuple[float, str]]:
        command, view, stretch = proposal.command, proposal.view, proposal.stretch
        proposal.facts["destination"] = None
        deltas: list[tuple[float, str]] = []
        looping = self.looping(proposal.turns_stuck, stretch)
        direction = direction_of(command)
        if looping and direction is not None and direction == self._way_out(view.room_id, stretch):
            # The way out of a loop runs through the loop's rooms: their penalties would wall it in.
            reason = "Way-out bonus (the next step towards the nearest room with untried exits outside the loop)"
            deltas.append((self.config.way_out_bonus, reason))
            return deltas
        if self.config.enabled and (self.active.any or self.active.recent_rooms):
            destination = self.tools.predictor.predict(view.room_id, command, view.world_hash)
            proposal.facts["destination"] = destination
            deltas += room_loop_deltas(destination, self.active, self.config, self.tools.game_map.name_of)
        if looping and self._repeats_move(command, view.room_id, stretch):
            reason = "Repeat penalty (this move was already made from here since the last progress)"
            deltas.append((self.config.repeated_move_penalty, reason))
        return deltas

    def _way_out(self, room_id: int | None, stretch: Stretch) -> str | None:
        """The first step of the shortest known way to a room with untried exits outside the loop (every room since
        the last progress, so a round longer than the repetition window counts whole); None when there is none."""
        loop_rooms = frozenset(stretch.window.stretch_rooms)
        path = self.tools.game_map.path_to_frontier(room_id, avoid=loop_rooms)
        return path[0] if path else None

    def _repeats_move(self, command: str, room_id: int | None, stretch: Stretch) -> bool:
        """A move already made from here since the last progress, when another way out of here is still untried
        (a penalty must steer, never wall the agent in)."""
        window = stretch.window
        if not window.repeats_move(command):
            return False
        return any(not window.repeats_move(way) for way in self.tools.game_map.ways_out(room_id))

    def lines(self, moment: Moment) -> list[str]:
        return room_loop_lines(self.active) if self.looping(moment.turns_stuck, moment.stretch) else []


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


class NoProgress(Detector):
    """The backstop: max_turns on the stop rules' clock, more over a walk through many rooms (the trek rule)."""

    name = "no_progress"
    config_model = NoProgressConfig
    stop_rule = "no_progress"
    config: NoProgressConfig

    def observe(self, turn: Turn) -> None:
        """Nothing of its own: it reads the stretch's clock and rooms."""

    def limit(self, stretch: Stretch) -> int:
        """max_turns; when the turns since the last progress went through more than trek_rooms places (rooms, and
        spots inside one room id), up to trek_extra_turns more, but no more than trek_grace turns after the player
        last reached a place not yet seen since the last progress. A walk back through known places keeps reaching
        places (karn's shafts, night's maze, zork1's coal mine, with detours; hollywood's hedge maze, walked out the
        way it was walked in); a loop over many places has reached all of them in its first round."""
        config, window = self.config, stretch.window
        if len(window.stretch_places) <= config.trek_rooms:
            return config.max_turns
        limit = config.max_turns + config.trek_extra_turns
        if config.trek_grace:
            arrived = window.last_arrival - stretch.progress.last_progress_turn  # in turns since the progress
            limit = min(limit, arrived + config.trek_grace)
        return max(config.max_turns, limit)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        if stretch.clock(turns_stuck) >= self.limit(stretch):
            return f"no progress for {turns_stuck} turns"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        return self.limit(stretch) - stretch.clock(turns_stuck)

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        """The clock over max_turns and, on a trek, over the trek's own two limits (the farther of those: either
        fires), the nearer of the two."""
        config, window, clock = self.config, stretch.window, stretch.clock(turns_stuck)
        plain = clock / config.max_turns
        if len(window.stretch_places) <= config.trek_rooms:
            return {"no_progress": plain}
        since_arrival = clock - (window.last_arrival - stretch.progress.last_progress_turn)
        trek = clock / (config.max_turns + config.trek_extra_turns)
        if config.trek_grace:
            trek = max(trek, since_arrival / config.trek_grace)
        return {"no_progress": min(plain, trek)}


class Repetition(Detector):
    """The repetition rule: the window (the stretch's) repeating what the turns since the last progress did, and
    wandering loops over more rooms than a region loop holds."""

    name = "repetition"
    config_model = RepetitionConfig
    stop_rule = "repetition"
    events = {EventType.LOOP_DETECTED: "detection"}
    config: RepetitionConfig

    def __init__(self, config: RepetitionConfig, tools):
        super().__init__(config, tools)
        self.previous = RepetitionResult(0, 0)

    def observe(self, turn: Turn) -> None:
        if not self.config.enabled:
            return
        previous, now = self.previous, turn.stretch.repeating
        self.previous = now
        max_rooms = turn.stretch.config.room_loops.region_max_rooms
        if _wandering(now, max_rooms) and not _wandering(previous, max_rooms):
            names = ", ".join(self.tools.game_map.name_of(room) for room in now.rooms)
            emit(
                turn.events,
                EventType.LOOP_DETECTED,
                f"Loop detected: wandering over {len(now.rooms)} rooms ({names})",
                level="WARNING",
                turn=turn.record.turn,
                kind="wandering",
                detail=names,
                rooms=list(now.rooms),
                turns_stuck=turn.progress.turns_stuck,
            )

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        repeating = stretch.repeating
        if self.config.stop and repeating.repeating and stretch.repetition_clock(turns_stuck) >= self.config.min_turns:
            detail = f"{repeating.repeats} of the last {repeating.window} repeating what they did before"
            return f"no progress for {turns_stuck} turns, {detail}"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        if not (self.config.enabled and self.config.stop):
            return None
        until_min_turns = self.config.min_turns - stretch.repetition_clock(turns_stuck)
        return max(until_min_turns, stretch.window.turns_until_repeating())

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not (self.config.enabled and self.config.stop):
            return {}
        needed = self.config.window - self.config.misses
        clock = stretch.repetition_clock(turns_stuck) / max(1, self.config.min_turns)
        return {"repetition": min(clock, stretch.window.repeats_so_far() / needed)}


def _wandering(result: RepetitionResult, max_rooms: int) -> bool:
    """Going round more rooms than a region loop holds, the repetition window repeating."""
    return result.repeating and len(result.rooms) > max_rooms


class Fruitless(Detector):
    """The fruitless rule: turns without progress that keep trying new things (managers/loop_break/fruitless.py)."""

    name = "fruitless"
    config_model = FruitlessConfig
    stop_rule = "fruitless"
    config: FruitlessConfig

    def __init__(self, config: FruitlessConfig, tools):
        super().__init__(config, tools)
        self.tries = FruitlessTries()
        """What the turns since the last progress tried: none of it got anywhere."""
        self.across = FruitlessTries()
        """The same since the last progress by a signal other than the weak ones: a semi-novel loop whose walks reach
        rooms it had seen only with other things in hand (zork2's carousel) is one stretch."""

    def observe(self, turn: Turn) -> None:
        signals = turn.progress.signals
        walked_again = turn.stretch.window.moved_again  # never while repetition detection is off: it is not fed
        for tries, restart in (
            (self.tries, bool(signals)),
            (self.across, bool(set(signals) - turn.stretch.weak_signals)),
        ):
            if restart:
                tries.restart()
            else:
                tries.observe(turn.record.command, walked_again)

    def holding(self, turns_stuck: int, stretch: Stretch) -> list[tuple[FruitlessTries, int]]:
        """The counts whose share holds now, each with its clock: the turns since the last progress, on the stop
        rules' clock, and those since the last progress by a signal other than the weak ones, every wait left out.
        The rule fires when one of them reaches `turns`."""
        if not self.config.turns:
            return []
        counts = ((self.tries, stretch.clock(turns_stuck)), (self.across, self.across.clock))
        return [(tries, clock) for tries, clock in counts if tries.holds(self.config.share)]

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        tries = next((t for t, clock in self.holding(turns_stuck, stretch) if clock >= self.config.turns), None)
        if tries is None:
            return None
        if tries is self.across:
            weak = ", ".join(sorted(stretch.weak_signals))
            return f"no progress but {weak} for {tries.turns} turns, {len(tries.tried)} different things tried"
        return f"no progress for {turns_stuck} turns, {len(tries.tried)} different things tried in them"

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        clocks = [self.config.turns - clock for _, clock in self.holding(turns_stuck, stretch)]
        return min(clocks) if clocks else None

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not self.config.turns:
            return {}
        counts = ((self.tries, stretch.clock(turns_stuck)), (self.across, self.across.clock))
        return {"fruitless": max(min(clock / self.config.turns, t.share_of(self.config.share)) for t, clock in counts)}


class Churn(Detector):
    """The churn rule: changes in place that reach nothing new (managers/loop_break/churn.py)."""

    name = "churn"
    config_model = ChurnConfig
    stop_rule = "churn"
    config: ChurnConfig

    def __init__(self, config: ChurnConfig, tools):
        super().__init__(config, tools)
        self.count = ChurnCount(config.window, config.changes, config.repeats, config.min_turns)
        """Changes in place that reached nothing new, since the last progress by a strong signal (busy camping)."""
        self.situation = ""
        """The situation the last turn left ("" before the first): a churning turn leaves another one or changes
        `held`."""
        self.held = ""
        """The state of the things in hand the last turn left (TurnRecord.held): wearing and removing, opening and
        shutting what is carried changes it alone."""
        self.last_changed: dict[int | None, str] = {}
        """Room -> what the last turn that changed things in place there was about (`_about`)."""
        self.worked: dict[tuple[int | None, str], tuple[frozenset[int], int]] = {}
        """(room, canonical command) -> (the game's answers, times) of every change it made in place since the last
        progress but by the weak signals and new object states: one device worked alike too often churns."""

    def observe(self, turn: Turn) -> None:
        """A turn churns when it changed the situation or what is held in place (no move, no observation, the same
        known room) and made no progress but by the weak signals (or a new game variable, by a command made here
        before: lostpig's pole taken and dropped steps one every time); not when it is about the same thing as the last
        change in that room: one device worked again and again (curses' sceptre spun until the wanted word comes
        up, its coffin's lid opened and closed four times while the magic inside works, coming back to the same two
        situations) is no fiddling with many things, until the same command has made its change `device_times`
        times, the game answering alike every time (hollywood's flashlight switched off and on among fidgets)."""
        record = turn.record
        before, self.situation = self.situation, record.situation
        held_before, self.held = self.held, record.held
        command = record.command
        in_place = record.room_id_before is not None and record.room_id_before == record.room_id_after
        doing = direction_of(command) is None and not is_observation(command)
        room, canonical = record.room_id_before, canonical_command(command)
        changed = bool(before) and in_place and doing and (record.situation != before or record.held != held_before)
        strong = set(turn.progress.signals) - turn.stretch.weak_signals
        if changed and self.count.was_made((room, canonical)):
            strong -= {VARIABLE_SIGNAL}  # the same act again stepping a variable the game keeps
        if strong - {OBJECT_STATE_SIGNAL}:
            self.count.restart()
            self.worked.clear()
            return
        about = _about(canonical)
        worked_out = changed and self._worked_out(room, canonical, record)
        churned = changed and (self.last_changed.get(room) != about or worked_out)
        if changed:
            self.last_changed[room] = about
        self.count.observe(ChurnTurn(room, churned, self.count.made_before((room, canonical)), bool(strong)))

    def _worked_out(self, room: int | None, canonical: str, record: TurnRecord) -> bool:
        """One more change in place by this command here: whether it has now made it `device_times` times since the
        last progress, the game answering alike every time (one device worked again and again to no end, not a
        gamble whose answer varies)."""
        answers, times = self.worked.get((room, canonical), (frozenset(), 0))
        answers, times = answers | {answer_key(record.response, record.command)}, times + 1
        self.worked[(room, canonical)] = (answers, times)
        return 0 < self.config.device_times <= times and len(answers) == 1

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        """The two counts (ChurnCount.pressure) and `churn.device`: the most one device was worked alike over
        `device_times`."""
        found = self.count.pressure()
        if self.config.device_times:
            alike = (times for answers, times in self.worked.values() if len(answers) == 1)
            found["churn.device"] = max(alike, default=0) / self.config.device_times
        return found

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        churn = self.count
        if not churn.holds():
            return None
        weak = ", ".join(sorted(stretch.weak_signals))
        if churn.by_repeats:
            return (
                f"{churn.repeats} of the last {len(churn.repeated)} turns changed things in place by commands made "
                f"here before, {churn.turns_across} turns without progress but {weak} and new object states"
            )
        return (
            f"{churn.changes} of the last {len(churn.changed)} turns changed things in place and reached nothing "
            f"new, {churn.turns} turns without progress but {weak}"
        )


def _about(canonical: str) -> str:
    """What a command is about: its words after the verb, particles left out (`open lid` and `close lid` are about
    `lid`, `turn on lamp` and `turn lamp off` about `lamp`); the whole command when it names nothing (`pray`)."""
    words = canonical.split()
    return " ".join(word for word in words[1:] if word not in PARTICLES) or canonical


class Cycle(Detector):
    """The cycle rule: the player's commands coming round in the same order (managers/loop_break/cycle.py)."""

    name = "cycle"
    config_model = CycleConfig
    stop_rule = "cycle"
    config: CycleConfig

    def __init__(self, config: CycleConfig, tools):
        super().__init__(config, tools)
        self.cycle = CycleDetector(config.turns, config.rounds, config.max_period)

    def observe(self, turn: Turn) -> None:
        self.cycle.observe(turn.record, turn.progress.signals)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        found = self.cycle.found()
        if found is None:
            return None
        period, span = found
        return f"the same {period} commands in the same order for {span} turns"

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        nearest = self.cycle.nearest()
        return nearest[0] if nearest is not None else None

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        return {"cycle": self.cycle.nearness()} if self.cycle.turns > 0 else {}

    def warning_round(self, remaining: int) -> tuple[str, ...]:
        nearest = self.cycle.nearest()
        if nearest is None or nearest[0] > remaining:
            return ()
        return tuple(self.cycle.last_round(nearest[1]))


class Obstacle(Detector):
    """The obstacle rule: a thing the game refused, tried again and again in other words
    (managers/loop_break/obstacle.py)."""

    name = "obstacle"
    config_model = ObstacleConfig
    stop_rule = "obstacle"
    config: ObstacleConfig

    def __init__(self, config: ObstacleConfig, tools):
        super().__init__(config, tools)
        self.retries = ObstacleRetries()

    def observe(self, turn: Turn) -> None:
        if turn.progress.progress:
            self.retries.restart()
        self.retries.observe(turn.record)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        if not self.config.turns:
            return None
        retries, clock = self.retries.retries, stretch.clock(turns_stuck)
        if retries >= self.config.retries and clock >= self.config.turns:
            return f"no progress for {turns_stuck} turns, {retries} of them trying again what the game refused"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        if not self.config.turns or self.retries.retries < self.config.retries:
            return None
        return self.config.turns - stretch.clock(turns_stuck)

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        if not self.config.turns:
            return {}
        clock = stretch.clock(turns_stuck) / self.config.turns
        return {"obstacle": min(clock, self.retries.retries / self.config.retries)}


BUILT_IN = (ActionLoops, RoomLoops, NoProgress, Repetition, Fruitless, Churn, Cycle, Obstacle)
"""The built-in detectors in the registry's order. Registered when this module is first imported (by loop_break.py)."""
for _detector in BUILT_IN:
    register(_detector)
