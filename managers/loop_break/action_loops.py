"""Loops beyond rooms, each counted by a small class with typed state fed one record per turn:

- SignatureLoopCount (design 004): the same (verb, argument hash, problematic result) repeated; progress trumps it.
- IdenticalActionCount (design 003): the same command many turns in a row -> warning, then a temporary ban.
- ParseFailureCount (design 003): LLM replies that are not one command -> format guidance.
- CollaborationLoopCount (design 002): the agent re-proposing what the critic rejected -> final rejection.
- FailureGate (design 002): identical failures (command, room, game response) -> gate (terminate, human, warn).

`ActionLoops` composes them into one detector (managers/loop_break/detector.py): observe, status text, bans, gates
and score adjustments. The designs are described in docs/design.md.
"""

from __future__ import annotations

import hashlib
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, model_validator

from managers.loop_break.detector import Detector, Events, GateRequest, Moment, ScoredProposal, Tools, Turn, register
from managers.loop_break.penalties import Judged, block
from managers.loop_break.progress import ProgressResult
from managers.novelty import response_key
from session.commands import DIRECTIONS, canonical_command, command_similarity, direction_of, is_wait
from session.config import DetectorSection
from session.context import FORMAT_RULE
from session.events import EventType, new_event
from session.outcomes import BLOCKED_EXIT, is_failure
from session.records import GameView, TurnRecord

GateAction = Literal["terminate", "human", "warn"]


class ActionLoopsConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.action_loops]`: loops beyond rooms (action signatures, identical commands,
    unparseable replies, agent-critic loops, failure gates)."""

    enable_signature_detection: bool = True
    """Flag the same (verb, arguments, problematic result) repeated with no progress (design 004)."""
    signature_loop_threshold: int = Field(3, ge=2, le=1000)
    """Repetitions of one problematic signature within signature_window that make a loop."""
    signature_window: int = Field(10, ge=2, le=1000)
    """Recent turns examined for signature loops."""
    signature_repeat_penalty: float = Field(-0.5, ge=-1.0, le=0.0)
    """Added to the critic score of a proposal that repeats a looping signature's verb and arguments."""
    enable_identical_action_detection: bool = True
    """Warn, then ban, when the same command runs many turns in a row without progress (design 003)."""
    identical_action_warning: int = Field(5, ge=2, le=1000)
    """Consecutive identical commands that bring a warning with guidance into the agent's context."""
    identical_action_recovery: int = Field(10, ge=3, le=1000)
    """Consecutive identical commands that trigger recovery: the command is banned for recovery_ban_turns."""
    recovery_ban_turns: int = Field(10, ge=1, le=1000)
    """Turns a recovered command stays forbidden (the critic rejects it programmatically)."""
    enable_parse_failure_detection: bool = True
    """Count LLM replies that fail validation and recover with explicit format guidance (design 003)."""
    parse_failure_threshold: int = Field(5, ge=2, le=1000)
    """The same unparseable reply this many times triggers recovery."""
    parse_failure_streak: int = Field(5, ge=2, le=1000)
    """This many unparseable replies in a row (any text) trigger recovery; a valid reply ends the streak."""
    parse_failure_memory: int = Field(50, ge=2, le=10_000)
    """Recent unparseable replies among which parse_failure_threshold identical ones are counted."""
    enable_collaboration_loop_detection: bool = True
    """Agent re-proposing what the critic rejected (design 002's collaboration loops)."""
    rejection_similarity: float = Field(0.85, gt=0.0, le=1.0)
    """Similarity (session.commands.command_similarity, word by word: 1.0 the same command, 0.91 `examine troll`/
    `examine trolls`, 0.89 `take lamp`/`take lamps`, 0.4 `turn on lamp`/`turn off lamp`) at or above which a
    proposal counts as a rejected one again."""
    rejection_window: int = Field(20, ge=1, le=1000)
    """Turns a rejection is remembered for re-proposal matching."""
    collaboration_loop_threshold: int = Field(3, ge=1, le=100)
    """Re-proposals of a rejected command after which its rejection is final in that room."""
    enable_failure_gate: bool = True
    """Count identical failures (same command, room and game response) and open a gate (design 002)."""
    gate_after_loops: int = Field(4, ge=1, le=100)
    """Repeated identical failures, without progress or a human in between, that fire the gate (and again at every
    further multiple: 4, 8, 12...)."""
    gate_min_turns_stuck: int = Field(14, ge=0, le=100_000)
    """Turns without progress before the gate may open: a few identical slips soon after progress are clumsy play,
    not a loop."""
    gate_max_gap: int = Field(4, ge=0, le=1000)
    """Largest mean gap, in turns, between the repeats of one failure for the gate to open: a loop types it again and
    again; clumsy healthy play tries a wrong verb now and then while it waits for something. 0: any spacing."""
    gate_action: GateAction = "warn"
    """`terminate` (termination_reason "loop_gate"), `human` (pause and read guidance from stdin) or `warn`."""
    failure_memory: int = Field(50, ge=1, le=10_000)
    """Recent failures remembered for exact-match comparison (a bounded window)."""

    @model_validator(mode="after")
    def _check_relations(self) -> ActionLoopsConfig:
        if self.identical_action_warning >= self.identical_action_recovery:
            raise ValueError(
                f"identical_action_warning ({self.identical_action_warning}) must be < identical_action_recovery "
                f"({self.identical_action_recovery})"
            )
        if self.signature_loop_threshold > self.signature_window:
            raise ValueError(
                f"signature_loop_threshold ({self.signature_loop_threshold}) must be <= signature_window "
                f"({self.signature_window})"
            )
        return self


# -- signatures ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Signature:
    verb: str
    args_hash: str
    category: str

    @property
    def action(self) -> tuple[str, str]:
        return self.verb, self.args_hash


def action_key(command: str) -> tuple[str, str]:
    """(verb, hash of the arguments) of the canonical command: `n`, `north` and `go north` share one key."""
    words = canonical_command(command).split()
    if not words:
        return "", ""
    if len(words) == 1 and words[0] in DIRECTIONS:
        return "go", words[0]
    return words[0], hashlib.md5(" ".join(words[1:]).encode()).hexdigest()[:8]


def action_signature(command: str, category: str) -> Signature:
    verb, args_hash = action_key(command)
    return Signature(verb, args_hash, category)


@dataclass(frozen=True)
class SignatureLoopResult:
    detected: bool
    signature: Signature | None = None
    command: str = ""
    count: int = 0
    window: int = 0
    suppressed: bool = False
    """A pattern was there but progress happened in the window: not a loop (a false positive avoided)."""


class SignatureLoopCount:
    def __init__(self, window: int, threshold: int):
        self.window = window
        self.threshold = threshold
        self.history: deque[tuple[int, Signature, str]] = deque(maxlen=window)
        self.last_progress_turn: int | None = None
        """Last turn on which a progress signal fired (the episode's start is not progress)."""
        self.turn = 0

    def observe(self, record: TurnRecord, progress: ProgressResult) -> None:
        self.turn = record.turn
        if progress.progress:
            self.last_progress_turn = record.turn
        self.history.append((record.turn, action_signature(record.command, record.result_category), record.command))

    def most_failing(self) -> int:
        """How often the most repeated failing signature came in the window, 0 when progress came in it."""
        if self.last_progress_turn is not None and self.last_progress_turn >= self.turn - self.window + 1:
            return 0
        counts = Counter(sig for _, sig, command in self.history if is_failure(command, sig.category) and sig.verb)
        return max(counts.values(), default=0)

    def detect(self) -> SignatureLoopResult:
        counts = Counter(sig for _, sig, command in self.history if is_failure(command, sig.category) and sig.verb)
        if not counts:
            return SignatureLoopResult(False)
        signature, count = counts.most_common(1)[0]
        if count < self.threshold:
            return SignatureLoopResult(False)
        command = next(cmd for _, sig, cmd in reversed(self.history) if sig == signature)
        window_start = self.turn - self.window + 1
        # Progress trumps pattern (design 004).
        suppressed = self.last_progress_turn is not None and self.last_progress_turn >= window_start
        return SignatureLoopResult(not suppressed, signature, command, count, self.window, suppressed)


# -- identical consecutive commands ---------------------------------------------------------------------------
class IdenticalActionCount:
    """The same command again and again, each time changing nothing and answered as before. A command that changes
    the world each time (curses' sceptre, spun until the wanted word comes up) is the game reacting: trying one's
    luck, as waiting for a timed event is, and the stop rules end it when it leads nowhere; so is one the game
    answers with something it has not said since the run began (seastalker's `n`, answering Tip's questions one
    after another). A few canned answers picked at random (zork1 refuses a push with one of three) come round."""

    def __init__(self, warning: int, recovery: int, ban_turns: int):
        self.warning = warning
        self.recovery = recovery
        self.ban_turns = ban_turns
        self.last_command = ""
        self.count = 0
        """The same command in a row, each after the first changing nothing and answered as before in the run."""
        self.answers: set[int] = set()
        """The answers (novelty.response_key) the current run of the same command was given."""
        self.warned = False
        """The current run has been warned about (its warning shows until the run ends)."""
        self.bans: dict[str, int] = {}
        """Normalised command -> last turn of its ban."""

    def observe(self, record: TurnRecord, progress: ProgressResult, steering: bool = True) -> list[dict]:
        """One turn; the events it raises. The warning and the ban come only while `steering` (Stretch.steering): a
        stop rule is near."""
        events: list[dict] = []
        command = canonical_command(record.command)
        answer = response_key(record.response)
        same = command == self.last_command
        if not same:
            self.answers = set()
        again = same and record.changed_nothing and answer in self.answers
        self.answers.add(answer)
        self.count = self.count + 1 if again else 1
        if is_wait(command):
            self.count = 0  # waiting for a timed event is play; an endless wait ends by the stop rules
        self.last_command = command
        if progress.progress:
            self.count = 0
        for banned, until in list(self.bans.items()):
            if until < record.turn + 1:
                del self.bans[banned]
        if self.count >= self.warning and not self.warned and steering:
            self.warned = True
            events.append(
                new_event(
                    EventType.IDENTICAL_ACTION_WARNING,
                    f"'{command}' repeated {self.count} times in a row",
                    level="WARNING",
                    turn=record.turn,
                    command=command,
                    count=self.count,
                )
            )
        if self.count >= self.recovery and steering:
            self.bans[command] = record.turn + self.ban_turns
            events.append(
                new_event(
                    EventType.IDENTICAL_ACTION_RECOVERY,
                    f"'{command}' repeated {self.count} times: forbidden for {self.ban_turns} turns",
                    level="WARNING",
                    turn=record.turn,
                    command=command,
                    count=self.count,
                    until_turn=self.bans[command],
                )
            )
            self.count = 0
        if self.count < self.warning:
            self.warned = False
        return events

    @property
    def warning_active(self) -> bool:
        return self.warned


# -- unparseable replies --------------------------------------------------------------------------------------
class ParseFailureCount:
    """design 003's two triggers: the same unparseable reply `threshold` times among the last `memory` failures, or
    `streak_limit` unparseable replies in a row. A valid reply ends the streak, and the guidance once it worked."""

    def __init__(self, threshold: int, streak_limit: int, memory: int):
        self.threshold = threshold
        self.streak_limit = streak_limit
        self.recent: deque[str] = deque(maxlen=memory)
        self.streak = 0
        self.total = 0
        self.guidance_active = False
        self.last_kind = ""

    def observe(self, record: TurnRecord) -> list[dict]:
        """One turn; the events it raises."""
        events: list[dict] = []
        for failure in record.parse_failures:
            self.total += 1
            self.streak += 1
            self.last_kind = failure["kind"]
            self.recent.append(" ".join(failure["reply"].lower().split()))
            repeated = Counter(self.recent).most_common(1)[0][1]
            if repeated >= self.threshold or self.streak >= self.streak_limit:
                events.append(self._recover(record.turn, repeated))
        if not record.ended_unparseable:  # the turn ended on a valid reply
            self.streak = 0
            if not record.parse_failures:
                self.guidance_active = False  # a clean turn: the guidance worked
        return events

    def _recover(self, turn: int, repeated: int) -> dict:
        """Format guidance from now on; its event."""
        self.guidance_active = True
        event = new_event(
            EventType.PARSE_FAILURE_RECOVERY,
            f"Unparseable replies: same reply {repeated}x, {self.streak} in a row: format guidance given",
            level="WARNING",
            turn=turn,
            same_reply_count=repeated,
            streak=self.streak,
            kind=self.last_kind,
        )
        self.recent.clear()
        self.streak = 0
        return event


# -- agent <-> critic loops ------------------------------------------------------------------------------------
@dataclass
class _Rejection:
    turn: int
    room: int | None
    command: str


class CollaborationLoopCount:
    def __init__(self, similarity: float, window: int, threshold: int):
        self.similarity = similarity
        self.window = window
        self.threshold = threshold
        self.rejections: deque[_Rejection] = deque(maxlen=256)
        self.loops: Counter = Counter()
        self.final: dict[int | None, set[str]] = {}
        """Room -> commands whose rejection is final there."""

    def note_rejection(self, turn: int, room: int | None, command: str, may_be_final: bool = True) -> list[dict]:
        """The critic rejected `command` in `room`; re-proposed after rejections `threshold` times, its rejection is
        final there (`may_be_final`: False for a command that must stay possible there, a move the game took).
        Returns the events it raises."""
        events: list[dict] = []
        command = canonical_command(command)
        while self.rejections and self.rejections[0].turn < turn - self.window:
            self.rejections.popleft()
        first = next((r.command for r in self.rejections if r.room == room and self._same(r.command, command)), None)
        self.rejections.append(_Rejection(turn, room, command))
        if first is None:
            return events
        key = (room, first)
        self.loops[key] += 1
        # DEBUG: several a turn while looping; the record keeps every one, rejection_final is the outcome
        events.append(
            new_event(
                EventType.COLLABORATION_LOOP,
                f"'{command}' re-proposed after the critic rejected it ({self.loops[key]}x)",
                level="DEBUG",
                turn=turn,
                command=command,
                count=self.loops[key],
            )
        )
        if may_be_final and self.loops[key] >= self.threshold and first not in self.final.get(room, set()):
            self.final.setdefault(room, set()).add(first)
            events.append(
                new_event(
                    EventType.REJECTION_FINAL,
                    f"'{first}' is now rejected for good in this room",
                    level="WARNING",
                    turn=turn,
                    command=first,
                    room_id=room,
                )
            )
        return events

    def is_final(self, room: int | None, command: str) -> str | None:
        command = canonical_command(command)
        return next((f for f in self.final.get(room, ()) if self._same(f, command)), None)

    def _same(self, a: str, b: str) -> bool:
        return command_similarity(a, b) >= self.similarity


# -- failure signatures and gates ------------------------------------------------------------------------------
class FailureGate:
    def __init__(self, gate_after: int, action: str, memory: int, min_turns_stuck: int = 0, max_gap: int = 0):
        self.gate_after = gate_after
        self.min_turns_stuck = min_turns_stuck
        self.max_gap = max_gap
        self.action = action
        self.history: deque[tuple[int | None, str, str]] = deque(maxlen=memory)
        self.repeats: Counter = Counter()
        """Failure signature -> times it repeated since the last progress (only signatures still in history)."""
        self.seen_at: dict[tuple[int | None, str, str], deque[int]] = {}
        """Failure signature -> the turns of its last gate_after + 1 occurrences (for `max_gap`)."""
        self.loop_count = 0
        self.last_loop: tuple[str, str] = ("", "")
        self.guidance = ""

    def observe(
        self,
        record: TurnRecord,
        progress: ProgressResult,
        steering: bool = True,
        clock: int | None = None,
    ) -> tuple[GateRequest | None, list[dict]]:
        """One turn; the gate request it opens, which it does only while `steering` (Stretch.steering), and the
        events it raises. The gate
        waits for `min_turns_stuck` turns without progress on `clock`, the stop rules' clock (Stretch.clock: a
        player waiting for a timed event, trying a wrong verb between waits, is not stuck); None: every turn since
        the last progress."""
        events: list[dict] = []
        if progress.progress:
            if self.loop_count:
                events.append(
                    new_event(
                        EventType.LOOP_COUNTER_RESET,
                        "Loop counter reset: progress",
                        turn=record.turn,
                        reason="progress",
                        previous_count=self.loop_count,
                    )
                )
            self._reset()
            self.guidance = ""
            return None, events
        if not is_failure(record.command, record.result_category):
            return None, events
        response = " ".join(record.response.lower().split())
        signature = (record.room_id_before, canonical_command(record.command), response)
        repeated = signature in self.history
        self.history.append(signature)
        if len(self.seen_at) > self.history.maxlen:  # forget what has left the history
            live = set(self.history)
            self.seen_at = {s: turns for s, turns in self.seen_at.items() if s in live}
        self.seen_at.setdefault(signature, deque(maxlen=self.gate_after + 1)).append(record.turn)
        if not repeated:
            return None, events
        # One failure repeated again and again is a loop; different harmless slips now and then are not.
        self.repeats[signature] += 1
        for stale in [s for s in self.repeats if s not in self.history]:
            del self.repeats[stale]
        self.loop_count = self.repeats[signature]
        self.last_loop = (signature[1], record.response.strip()[:200])
        events.append(
            new_event(
                EventType.FAILURE_LOOP,
                f"Identical failure again ({self.loop_count}): '{signature[1]}'",
                level="INFO",
                turn=record.turn,
                command=signature[1],
                loop_count=self.loop_count,
            )
        )
        if self.loop_count % self.gate_after:  # the gate opens at every gate_after-th loop (3, 6, 9...)
            return None, events
        stuck = progress.turns_stuck if clock is None else clock
        if stuck < self.min_turns_stuck or not self._dense(signature) or not steering:
            return None, events
        description = (
            f"The agent repeated an identical failure {self.loop_count} times without progress. "
            f"Last: '{self.last_loop[0]}' in {record.room_name_before} -> {self.last_loop[1]!r}"
        )
        events.append(
            new_event(
                EventType.LOOP_GATE,
                f"Loop gate ({self.action}): {description}",
                level="WARNING",
                turn=record.turn,
                action=self.action,
                loop_count=self.loop_count,
                command=signature[1],
            )
        )
        return GateRequest(self.action, self.loop_count, description), events

    def _dense(self, signature: tuple[int | None, str, str]) -> bool:
        """The failure's last gate_after repeats came on average at most `max_gap` turns apart: typed again and
        again, not now and then among other play (a player waiting for a timed event who tries a wrong verb every
        few waits). 0 accepts any spacing."""
        turns = self.seen_at[signature]
        return not self.max_gap or turns[-1] - turns[0] <= self.max_gap * (len(turns) - 1)

    def accept_guidance(self, guidance: str, turn: int) -> dict:
        """A human answered the gate: the guidance goes to the agent and the counter resets. Returns its event."""
        event = new_event(
            EventType.LOOP_COUNTER_RESET,
            "Loop counter reset: human intervention",
            turn=turn,
            reason="human",
            previous_count=self.loop_count,
            guidance=guidance[:300],
        )
        self._reset()
        self.guidance = guidance.strip()
        return event

    def _reset(self) -> None:
        """Progress or a human answer: earlier failures are history, not a loop to continue (design 002)."""
        self.loop_count = 0
        self.repeats.clear()
        self.history.clear()
        self.seen_at.clear()


# -- the composite ---------------------------------------------------------------------------------------------
FORMAT_GUIDANCE = (
    "FORMAT: your recent replies held no usable game command. Reply exactly in the format your instructions "
    f"give; the command itself is {FORMAT_RULE}. Example: open mailbox"
)


@dataclass
class ActionLoopsStatus:
    lines: list[str] = field(default_factory=list)
    banned: tuple[str, ...] = ()


@register
class ActionLoops(Detector):
    name = "action_loops"
    config_model = ActionLoopsConfig
    events = {
        EventType.LOOP_DETECTED: "detection",
        EventType.SIGNATURE_LOOP_SUPPRESSED: None,
        EventType.IDENTICAL_ACTION_WARNING: "warning",
        EventType.IDENTICAL_ACTION_RECOVERY: None,
        EventType.PARSE_FAILURE_RECOVERY: None,
        EventType.COLLABORATION_LOOP: "detection",
        EventType.REJECTION_FINAL: None,
        EventType.FAILURE_LOOP: "detection",
        EventType.LOOP_GATE: "termination",
        EventType.LOOP_COUNTER_RESET: None,
        EventType.COMMAND_BLOCKED: None,
    }
    config: ActionLoopsConfig

    def __init__(self, config: ActionLoopsConfig, tools: Tools | None = None):
        super().__init__(config, tools)
        self.signatures = SignatureLoopCount(config.signature_window, config.signature_loop_threshold)
        self.identical = IdenticalActionCount(
            config.identical_action_warning, config.identical_action_recovery, config.recovery_ban_turns
        )
        self.parse_failures = ParseFailureCount(
            config.parse_failure_threshold, config.parse_failure_streak, config.parse_failure_memory
        )
        self.collaboration = CollaborationLoopCount(
            config.rejection_similarity, config.rejection_window, config.collaboration_loop_threshold
        )
        self.gate = FailureGate(
            config.gate_after_loops,
            config.gate_action,
            config.failure_memory,
            config.gate_min_turns_stuck,
            config.gate_max_gap,
        )
        self.signature_result = SignatureLoopResult(False)
        self.opened: GateRequest | None = None
        """The gate opened on the last turn observed."""
        self.taken_moves: set[tuple[int | None, str]] = set()
        """(room, move) of every move the game took from that room: it moved the player, or changed the world
        without refusing the way. Such a move is never rejected for good there: a maze or a passage walked again
        and again needs it, and a loop made of it ends by the stop rules."""

    def observe(self, turn: Turn) -> Events:
        self.opened, events = self._observe(turn)
        return events

    def observe_not_run(self, turn: Turn) -> Events:
        """No command ran: nothing to ban or to count as a failed action, but replies with no usable command, turn
        after turn, are a loop of their own (design 003's parse failures)."""
        self.opened = None
        return self.parse_failures.observe(turn.record) if self.config.enable_parse_failure_detection else ()

    def opened_gate(self) -> GateRequest | None:
        return self.opened

    def pressure(self, turns_stuck: int, stretch) -> dict[str, float]:
        """The identical-command ban, the signature loop, the failure gate (its count and turns stuck) and the final
        rejection of a command re-proposed after rejections: each acts only while a stop rule is near (steering),
        so these say how close healthy play comes to what would act then."""
        config, found = self.config, {}
        if config.enable_identical_action_detection:
            found["identical.ban"] = self.identical.count / config.identical_action_recovery
        if config.enable_signature_detection:
            found["signature"] = self.signatures.most_failing() / config.signature_loop_threshold
        if config.enable_failure_gate:
            clock = stretch.clock(turns_stuck)
            stuck = clock / config.gate_min_turns_stuck if config.gate_min_turns_stuck else 1.0
            found["failure_gate"] = min(self.gate.loop_count / config.gate_after_loops, stuck)
        if self._collaboration_on:
            most = max(self.collaboration.loops.values(), default=0)
            found["final_rejection"] = most / config.collaboration_loop_threshold
        return found

    def lines(self, moment: Moment) -> list[str]:
        return self.status(moment.view.room_id, list(moment.banned), moment.stretch.steering).lines

    def _observe(self, turn: Turn) -> tuple[GateRequest | None, list[dict]]:
        """One turn: the gate it opens and the events it raises; its warnings, bans and gate only while a stop rule
        is near (Stretch.steering)."""
        config, record, progress = self.config, turn.record, turn.progress
        events: list[dict] = []
        steering = turn.stretch.steering
        move = direction_of(record.command)
        if move is not None and record.result_category != BLOCKED_EXIT and (record.moved or not record.changed_nothing):
            self.taken_moves.add((record.room_id_before, move))
        if config.enable_signature_detection:
            self.signatures.observe(record, progress)
            previous, self.signature_result = self.signature_result, self.signatures.detect()
            result = self.signature_result
            if result.detected and (not previous.detected or previous.signature != result.signature):
                events.append(
                    new_event(
                        EventType.LOOP_DETECTED,
                        f"Loop detected: signature_loop '{result.command}' "
                        f"({result.signature.category}) {result.count}x in {result.window} turns",
                        level="WARNING",
                        turn=record.turn,
                        kind="signature_loop",
                        command=result.command,
                        category=result.signature.category,
                        count=result.count,
                    )
                )
            elif result.suppressed and not previous.suppressed:
                events.append(
                    new_event(
                        EventType.SIGNATURE_LOOP_SUPPRESSED,
                        f"Pattern '{result.command}' {result.count}x, but progress in the window: not a loop",
                        level="INFO",
                        turn=record.turn,
                        command=result.command,
                        count=result.count,
                    )
                )
        if config.enable_identical_action_detection:
            events += self.identical.observe(record, progress, steering)
        if config.enable_parse_failure_detection:
            events += self.parse_failures.observe(record)
        if not config.enable_failure_gate:
            return None, events
        gate, raised = self.gate.observe(record, progress, steering, turn.stretch.clock(progress.turns_stuck))
        return gate, events + raised

    def banned(self, room_id: int | None, walled_in: bool = False) -> list[str]:
        """Canonical commands off the table in this room this turn: banned identical actions, final rejections (but
        no move when `walled_in`: see `blocked`)."""
        banned = sorted(self.identical.bans) if self.config.enable_identical_action_detection else []
        final = sorted(self.collaboration.final.get(room_id, ())) if self._collaboration_on else []
        final = [c for c in final if not self._taken(room_id, c)]
        if walled_in:
            final = [c for c in final if direction_of(c) is None]
        return banned + [c for c in final if c not in banned]

    def status(self, room_id: int | None, off: list[str], steering: bool = True) -> ActionLoopsStatus:
        """Loop-status lines for the agent and critic, and the commands banned this turn (`off`: `banned`); the
        signature loop's line only while `steering` (Stretch.steering)."""
        status = ActionLoopsStatus()
        result = self.signature_result
        if result.detected and steering:
            status.lines.append(
                f"Action loop: '{result.command}' gave the same {result.signature.category.replace('_', ' ')} "
                f"result {result.count} times in {result.window} turns. Try something different."
            )
        if self.config.enable_identical_action_detection and self.identical.warning_active:
            left = self.identical.recovery - self.identical.count
            status.lines.append(
                f"You have run '{self.identical.last_command}' {self.identical.count} times in a row with no "
                f"progress: after {left} more the harness will refuse it for a while."
            )
        if off:
            reasons = [f"{command} ({self._why_off(command, room_id)})" for command in off]
            status.lines.append(f"Do not propose these here (the harness refuses them): {'; '.join(reasons)}.")
        if self.config.enable_parse_failure_detection and self.parse_failures.guidance_active:
            status.lines.append(FORMAT_GUIDANCE)
        if self.config.enable_failure_gate and self.gate.guidance:
            status.lines.append(f"Human guidance: {self.gate.guidance}")
        status.banned = tuple(off)
        return status

    def _why_off(self, command: str, room_id: int | None) -> str:
        if command in self.identical.bans:
            runs = self.config.identical_action_recovery
            return f"run {runs} times in a row without progress; until turn {self.identical.bans[command]}"
        return "proposed again after it was rejected here"

    def blocked(self, command: str, view: GameView, turn: int, walled_in: bool = False) -> Judged | None:
        """A blocking judgement for a banned or finally rejected command (known before any critic call), else None.

        `walled_in`: every way out of this room is finally rejected and no direction is left untried. A move's final
        rejection then stands no more: it was earned while other ways were open (a repeat penalty steering towards
        untried exits that all turned out to be walls), and kept, it would shut the player in for good (measured:
        night's Hall, whose two exits were rejected while ten walls were tried, was never left again)."""
        key = canonical_command(command)
        if self.config.enable_identical_action_detection and key in self.identical.bans:
            return block(command, "ban", f"'{key}' is forbidden until turn {self.identical.bans[key]}", turn)
        if self._collaboration_on and not (walled_in and direction_of(command) is not None):
            final = self.collaboration.is_final(view.room_id, command)
            if final and not self._taken(view.room_id, final):
                return block(
                    command,
                    "final_rejection",
                    f"'{final}' was re-proposed after rejections: rejected for good here",
                    turn,
                )
        return None

    def adjust(self, proposal: ScoredProposal) -> list[tuple[float, str]]:
        """The signature-loop penalty on a proposal that repeats the looping signature's verb and arguments."""
        result = self.signature_result
        steering = proposal.stretch.steering
        if steering and result.detected and action_key(proposal.command) == result.signature.action:
            return [(self.config.signature_repeat_penalty, f"Action-loop penalty ('{result.command}' keeps failing)")]
        return []

    def note_rejection(self, turn: int, room: int | None, command: str) -> Events:
        if not self._collaboration_on:
            return ()
        return self.collaboration.note_rejection(turn, room, command, not self._taken(room, command))

    def accept_guidance(self, guidance: str, turn: int) -> Events:
        return (self.gate.accept_guidance(guidance, turn),)

    def _taken(self, room_id: int | None, command: str) -> bool:
        """A move the game took from this room (`taken_moves`)."""
        move = direction_of(command)
        return move is not None and (room_id, move) in self.taken_moves

    @property
    def _collaboration_on(self) -> bool:
        return self.config.enable_collaboration_loop_detection
