"""One way to raise a structured event: logged through loguru and appended to the turn's record."""

from __future__ import annotations

from typing import Any

from loguru import logger


def emit(sink: list[dict[str, Any]], event_type: str, message: str, level: str = "INFO", **fields: Any) -> dict:
    """Log `message` with `event_type` and `fields` bound (the JSON log keeps them) and append the event."""
    event = {"event_type": event_type, **fields}
    logger.bind(**event).log(level, message)
    sink.append(event)
    return event
