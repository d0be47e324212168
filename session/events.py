"""One way to raise a structured event: logged through loguru and appended to the turn's record.

Every event type is an `EventType` (a StrEnum: the records and logs keep the plain strings)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from loguru import logger


class EventType(StrEnum):
    """The `event_type` of every event in a turn's record and of every structured log line."""

    # the loop break itself (managers/loop_break/loop_break.py)
    PROGRESS_CHECK = "progress_check"
    SCORE_CHANGE = "score_change"
    PROGRESS_DETECTED = "progress_detected"
    STUCK_TERMINATION = "stuck_termination"
    LOOP_BREAK_WARNING = "loop_break_warning"
    LOOP_PENALTY_APPLIED = "loop_penalty_applied"
    REWIND = "rewind"
    # its detectors (each declares the ones it emits)
    LOOP_DETECTED = "loop_detected"
    SIGNATURE_LOOP_SUPPRESSED = "signature_loop_suppressed"
    IDENTICAL_ACTION_WARNING = "identical_action_warning"
    IDENTICAL_ACTION_RECOVERY = "identical_action_recovery"
    PARSE_FAILURE_RECOVERY = "parse_failure_recovery"
    COLLABORATION_LOOP = "collaboration_loop"
    REJECTION_FINAL = "rejection_final"
    FAILURE_LOOP = "failure_loop"
    LOOP_GATE = "loop_gate"
    LOOP_COUNTER_RESET = "loop_counter_reset"
    COMMAND_BLOCKED = "command_blocked"
    # the turn loop and the LLM roles (log lines; command_refused is also a record's event)
    COMMAND_REFUSED = "command_refused"
    EPISODE_START = "episode_start"
    TURN = "turn"
    EPISODE_END = "episode_end"
    LLM_USAGE = "llm_usage"
    LLM_CALL_FAILED = "llm_call_failed"
    LLM_CALL_ADJUSTED = "llm_call_adjusted"
    OBJECTIVE_CLAIM_REJECTED = "objective_claim_rejected"
    # the emulators (session/emulator.py): a probe skipped, or the live game's failure that ended the episode
    EMULATOR_FAILED = "emulator_failed"


def emit(sink: list[dict[str, Any]], event_type: EventType, message: str, level: str = "INFO", **fields: Any) -> dict:
    """Log `message` with `event_type` and `fields` bound (the JSON log keeps them) and append the event."""
    event = {"event_type": event_type, **fields}
    logger.bind(**event).log(level, message)
    sink.append(event)
    return event
