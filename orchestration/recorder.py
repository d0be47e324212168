"""Episode records: events.jsonl (one line per turn, flushed every turn), summary.json, and the loguru sinks."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from loguru import logger

from session.records import TurnRecord

CONSOLE_FORMAT = "<green>{time:HH:mm:ss}</green> <level>{level: <7}</level> {message}"


class EpisodeRecorder:
    """Writes each turn as it happens and counts, from those same records, what summary.json reports."""

    def __init__(self, folder: Path, console_level: str = "INFO", quiet: bool = False):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.events_path = folder / "events.jsonl"
        self.summary_path = folder / "summary.json"
        self._events = self.events_path.open("w", encoding="utf-8")
        self._sinks = [logger.add(folder / "episode.log.jsonl", level="DEBUG", serialize=True, enqueue=False)]
        if not quiet:
            self._sinks.append(logger.add(sys.stderr, level=console_level, format=CONSOLE_FORMAT, colorize=None))
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
        self.rejections = 0
        self.objectives_completed = 0

    def write(self, record: TurnRecord) -> None:
        self._events.write(json.dumps(record.to_json(), ensure_ascii=False) + "\n")
        self._events.flush()
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
            if kind == "loop_detected":
                self.detections[event["kind"]] += 1
                self.first_detection.setdefault(event["kind"], record.turn)
            if kind == "loop_penalty_applied" and event.get("turned_to_reject"):
                self.turned_to_reject += 1
            if kind == "stuck_termination":
                self.stop_rule = event.get("rule")

    def close(self, summary: dict[str, Any]) -> Path:
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
            "warnings_shown": self.event_counts["loop_break_warning"],
            "detections": dict(self.detections),
            "first_detection_turn": self.first_detection,
            "penalties_applied": self.event_counts["loop_penalty_applied"],
            "commands_rejected_by_penalties": self.turned_to_reject,
            "would_reject": self.would_reject,
            "forced_turns": self.forced_turns,
            "stop_rule": self.stop_rule,
        }
        self.summary_path.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        for sink in self._sinks:
            logger.remove(sink)
        self._sinks = []
        return self.summary_path
