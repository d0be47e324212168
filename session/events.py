"""One way to raise a structured event: `new_event` logs it through loguru and gives it back, and whoever raised it
returns it to the turn's record.

The built-in event types are `EventType` (a StrEnum: the records and logs keep the plain strings); a plugin adds its
own with `register_event_type`, and `new_event` takes any registered one. A marker is how the viewer's chart marks an
event (a detector declares which of its events are marked, and with which marker): the built-in markers have their
colours here, a plugin adds its own with `register_marker`."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from loguru import logger

EVENT_TYPE_NAME = r"^[a-z][a-z0-9_]{0,63}$"
"""What an event type may be called (as the built-in ones are)."""


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


_BUILT_IN_EVENT_TYPES = frozenset(event.value for event in EventType)
_PLUGIN_EVENT_TYPES: set[str] = set()
"""The event types registered since the built-in ones (`register_event_type`)."""


def register_event_type(name: str) -> str:
    """Add an event type a plugin emits (registering one that exists, built-in or not, changes nothing); `name`
    back, for `new_event` and a detector's `events`. ValueError when it is no event-type name (EVENT_TYPE_NAME)."""
    if not re.fullmatch(EVENT_TYPE_NAME, name):
        raise ValueError(f"{name!r} cannot name an event type: it must match {EVENT_TYPE_NAME}")
    if name not in _BUILT_IN_EVENT_TYPES:
        _PLUGIN_EVENT_TYPES.add(name)
    return name


def unregister_event_type(name: str) -> None:
    """Drop an event type `register_event_type` added (a test's toy); the built-in ones stay."""
    _PLUGIN_EVENT_TYPES.discard(name)


def is_event_type(name: str) -> bool:
    return name in _BUILT_IN_EVENT_TYPES or name in _PLUGIN_EVENT_TYPES


MARKERS: dict[str, str] = {
    "detection": "#d9822b",
    "warning": "#d6b600",
    "penalty": "#8e44ad",
    "termination": "#c0392b",
    "rewind": "#16a085",
}
"""Marker -> the colour (CSS) the viewer's chart and legend draw it in: the built-in ones, then those registered."""
DEFAULT_MARKER_COLOUR = "#7f8c8d"
"""A marker's colour when its plugin gives none, and the viewer's for a marker it does not know."""
_BUILT_IN_MARKERS = frozenset(MARKERS)
MARKER_NAME = r"^[a-z][a-z0-9_-]{0,31}$"
COLOUR = r"^#[0-9a-fA-F]{6}$"


def register_marker(name: str, colour: str = DEFAULT_MARKER_COLOUR) -> str:
    """Add a marker the viewer draws in `colour` (`#rrggbb`); `name` back. Registering a marker again with the same
    colour changes nothing; ValueError for another colour, a built-in marker, or a bad name or colour."""
    if not re.fullmatch(MARKER_NAME, name):
        raise ValueError(f"{name!r} cannot name a marker: it must match {MARKER_NAME}")
    if not re.fullmatch(COLOUR, colour):
        raise ValueError(f"marker {name!r}: the colour must be #rrggbb (got {colour!r})")
    if MARKERS.get(name, colour) != colour or name in _BUILT_IN_MARKERS:
        raise ValueError(f"the marker {name!r} is registered already, in {MARKERS[name]}")
    MARKERS[name] = colour
    return name


def unregister_marker(name: str) -> None:
    """Drop a marker `register_marker` added (a test's toy); the built-in ones stay."""
    if name not in _BUILT_IN_MARKERS:
        MARKERS.pop(name, None)


def new_event(event_type: EventType | str, message: str, level: str = "INFO", **fields: Any) -> dict:
    """The event of `event_type` with `fields`, logged with `message` (the JSON log keeps the fields): the caller
    returns it with the others it raises. ValueError for an event type nobody registered: a misspelt one would reach
    the records unseen."""
    if not is_event_type(event_type):
        raise ValueError(f"unknown event type {event_type!r}: register it with session.events.register_event_type")
    event = {"event_type": event_type, **fields}
    logger.bind(**event).log(level, message)
    return event
