"""Episode records: events.jsonl (one line per turn, flushed every turn), summary.json, and the loguru sinks.

A record line is written whole or not at all: a full disk or a file-size limit truncates the file back to its last
complete line and raises RecordsUnwritable, which ends the episode with a clear message. Every log line is stripped
of terminal control sequences and of the API key (and any `Bearer ...`) before any sink sees it.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from loguru import logger

from session.events import EventType
from session.records import EVENTS_FILE, SUMMARY_FILE, TurnRecord
from session.safe_text import printable, redact

CONSOLE_FORMAT = "<green>{time:HH:mm:ss}</green> <level>{level: <7}</level> {message}"


class RecordsUnwritable(Exception):
    """The episode's files cannot be written (a full disk, a file-size limit, a vanished folder)."""


class EpisodeRecorder:
    """Writes each turn as it happens and counts, from those same records, what summary.json reports."""

    def __init__(
        self,
        folder: Path,
        console_level: str = "INFO",
        file_level: str = "INFO",
        quiet: bool = False,
        secrets: Iterable[str | None] = (),
        resume: bool = False,
    ):
        self.folder = folder
        self.secrets = tuple(s for s in secrets if s)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.events_path = folder / EVENTS_FILE
            self.summary_path = folder / SUMMARY_FILE
            self._events = self.events_path.open("ab" if resume else "wb", buffering=0)
            self._log = (folder / "episode.log.jsonl").open("ab" if resume else "wb", buffering=0)
        except OSError as exc:
            raise RecordsUnwritable(f"cannot write episode records in {folder}: {exc.strerror or exc}") from None
        self._sinks = [
            logger.add(self._write_log, level=file_level, format="{message}", enqueue=False, filter=self._sanitize)
        ]
        if not quiet:
            self._sinks.append(
                logger.add(sys.stderr, level=console_level, format=CONSOLE_FORMAT, colorize=None, filter=self._sanitize)
            )
        self.muted = False
        """While an interrupted episode is replayed to resume it: its turns were logged when they were played."""
        self.turns = 0
        self.would_reject = 0
        self.forced_turns = 0
        self.fallbacks: Counter = Counter()
        self.parse_failures: Counter = Counter()
        self.event_counts: Counter = Counter()
        self.detections: Counter = Counter()
        self.first_detection: dict[str, int] = {}
        self.turned_to_reject = 0
        self.stop_rule: str | None = None
        self.stop_why: str | None = None
        """The loop break's reason for ending the episode, in words (`stuck_termination`'s `why`)."""
        self.rejections = 0
        self.objectives_completed = 0

    # -- records ------------------------------------------------------------------------------------------------
    def write(self, record: TurnRecord) -> None:
        line = redact(json.dumps(record.to_json(), ensure_ascii=False), self.secrets) + "\n"
        self._append(line.encode("utf-8", errors="replace"))
        self.count(record)

    def _append(self, data: bytes) -> None:
        try:
            _append_whole(self._events, data)
        except OSError as exc:
            raise RecordsUnwritable(f"cannot write {self.events_path}: {exc.strerror or exc}") from None

    def count(self, record: TurnRecord) -> None:
        """Add one record to the figures summary.json reports (also for records read back to resume)."""
        self.turns += 1
        self.rejections += record.rejections
        self.objectives_completed += len(record.objectives_completed)
        if record.forced:
            self.forced_turns += 1
            self.would_reject += record.would_reject
        if record.fallback:
            self.fallbacks[record.fallback] += 1
        for failure in record.parse_failures:
            self.parse_failures[failure["kind"]] += 1
        for event in record.events:
            kind = event["event_type"]
            self.event_counts[kind] += 1
            if kind == EventType.LOOP_DETECTED:
                self.detections[event["kind"]] += 1
                self.first_detection.setdefault(event["kind"], record.turn)
            if kind == EventType.LOOP_PENALTY_APPLIED and event.get("turned_to_reject"):
                self.turned_to_reject += 1
            if kind == EventType.STUCK_TERMINATION:
                self.stop_rule, self.stop_why = event.get("rule"), event.get("why")

    def close(self, summary: dict[str, Any]) -> Path:
        """Write summary.json (whole, through a temporary file) and detach the sinks."""
        self._events.close()
        summary = {
            **summary,
            "rejections": self.rejections,
            "fallbacks": dict(self.fallbacks),
            "parse_failures": dict(self.parse_failures),
            "objectives_completed": self.objectives_completed,
        }
        summary["loop_break"] = {
            **summary.get("loop_break", {}),
            "warnings_shown": self.event_counts[EventType.LOOP_BREAK_WARNING],
            "detections": dict(self.detections),
            "first_detection_turn": self.first_detection,
            "penalties_applied": self.event_counts[EventType.LOOP_PENALTY_APPLIED],
            "commands_rejected_by_penalties": self.turned_to_reject,
            "would_reject": self.would_reject,
            "forced_turns": self.forced_turns,
            "stop_rule": self.stop_rule,
            "stop_why": self.stop_why,
        }
        for sink in self._sinks:
            logger.remove(sink)
        self._sinks = []
        self._log.close()
        text = redact(json.dumps(summary, indent=2, ensure_ascii=False), self.secrets) + "\n"
        partial = self.summary_path.with_suffix(".json.partial")
        try:
            partial.write_text(text, encoding="utf-8", errors="replace")
            os.replace(partial, self.summary_path)
        except OSError as exc:
            partial.unlink(missing_ok=True)
            raise RecordsUnwritable(f"cannot write {self.summary_path}: {exc.strerror or exc}") from None
        return self.summary_path

    # -- log sinks ------------------------------------------------------------------------------------------------
    def _sanitize(self, message: Any) -> bool:
        """Loguru filter: no terminal control sequences and no secret in the message or its fields, for any sink."""
        if self.muted:
            return False
        message["message"] = printable(redact(message["message"], self.secrets))
        for key, value in message["extra"].items():
            if isinstance(value, str):
                message["extra"][key] = printable(redact(value, self.secrets))
        return True

    def _write_log(self, message: Any) -> None:
        """One JSON line per log call: loguru's `serialize` layout cut to the fields a reader uses (its full
        record, with process, thread, file and elapsed time, cost a quarter of a turn)."""
        record = message.record
        line = json.dumps(
            {
                "text": str(message).rstrip("\n"),
                "record": {
                    "time": {"repr": record["time"].isoformat(), "timestamp": record["time"].timestamp()},
                    "level": {"name": record["level"].name, "no": record["level"].no},
                    "message": record["message"],
                    "name": record["name"],
                    "function": record["function"],
                    "line": record["line"],
                    "extra": record["extra"],
                },
            },
            ensure_ascii=False,
            default=str,
        )
        try:
            _append_whole(self._log, (line + "\n").encode("utf-8", errors="replace"))
        except OSError:
            pass  # a full disk: the next record write stops the episode with a clear message


def _append_whole(file: BinaryIO, data: bytes) -> None:
    """Append `data` to an unbuffered file whole, or not at all: on failure the file is cut back to where it was
    (a write near a size limit lands partly before it fails), then the OSError propagates."""
    start = file.tell()
    try:
        view = memoryview(data)
        while view:
            view = view[file.write(view) :]
    except OSError:
        file.truncate(start)
        raise
