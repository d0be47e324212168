"""Episode folders read for the viewer: whatever is there, with a note for what is missing or partly written.

An episode folder holds its records (session.records.EVENTS_FILE, one per turn), and at its end its summary
(SUMMARY_FILE) and map.json. A running episode has no summary yet; a killed one may end in a partly written line.
Neither is an error here: the page shows what there is and says what is missing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from managers.loop_break import marked_events
from session.events import MARKERS, EventType
from session.records import EVENTS_FILE, LOOP_ENDINGS, SUMMARY_FILE, read_summary, salvage_record_dicts

RESPONSE_CHARS = 2000
"""The game's response kept per turn on the page."""


def is_episode(folder: Path) -> bool:
    return (folder / EVENTS_FILE).is_file() or (folder / "episode.json").is_file()


def find_episodes(roots: list[Path]) -> dict[str, Path]:
    """Episode id (its folder's name) -> folder, for every root that is an episode or holds episodes."""
    found: dict[str, Path] = {}
    for root in roots:
        if is_episode(root):
            found[root.name] = root
        elif root.is_dir():
            for child in sorted(root.iterdir()):
                if child.is_dir() and is_episode(child):
                    found[child.name] = child
    return found


def read_json(path: Path) -> Any | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def summary_of(folder: Path) -> dict | None:
    """The episode's summary; None while there is none (running, or killed before its end) or it cannot be read."""
    try:
        return read_summary(folder)
    except (OSError, ValueError):
        return None


def read_turns(folder: Path, since: int = 0) -> tuple[list[dict], list[str]]:
    """The compact turns after turn `since`, and notes on lines that could not be read."""
    notes: list[str] = []
    return list(iter_turns(folder, notes, since)), notes


def iter_turns(folder: Path, notes: list[str], since: int = 0) -> Iterator[dict]:
    """The compact turns after turn `since`, one at a time (the records read a line at a time, never held whole),
    adding to `notes` what could not be read."""
    last_progress = 0
    marked = marked_events()  # the registered detectors' events (a detector registered since the import included)
    for record in salvage_record_dicts(folder, notes):
        last_progress = progress_turn(record, last_progress)
        if record["turn"] > since:
            yield compact(record, record["turn"] - last_progress, marked)


def progress_turn(record: dict, last: int) -> int:
    """The last progress turn as of this record, `last` as of the one before: the loop break's own count where it
    recorded one (its progress check, which a rewind restarts), else the turn of a progress it announced."""
    events = [e for e in record.get("events") or [] if isinstance(e, dict)]
    checked = [e.get("last_progress_turn") for e in events if e.get("event_type") == EventType.PROGRESS_CHECK]
    if checked and isinstance(checked[-1], int):
        return checked[-1]
    if any(e.get("event_type") in (EventType.PROGRESS_DETECTED, EventType.REWIND) for e in events):
        return record["turn"]
    return last


REWIND_FIELDS = ("turn", "to_turn", "abandoned", "branch", "rewinds", "reason", "rule", "why", "restored")
"""What the page shows of a `rewind` event: the abandoned turns are those of its `branch` after `to_turn`, up to
`turn` (the page marks them, also while following a running episode)."""


def rewind_of(record: dict) -> dict | None:
    """The rewind this turn's verdict caused (`on_stuck = "rewind"`), or None."""
    for event in record.get("events") or []:
        if isinstance(event, dict) and event.get("event_type") == EventType.REWIND:
            fields = {key: event.get(key) for key in REWIND_FIELDS}
            numbers = ("turn", "to_turn", "abandoned", "branch", "rewinds")
            if all(isinstance(fields[key], int) for key in numbers):
                return {key: value if key in numbers else str(value or "") for key, value in fields.items()}
    return None


def compact(record: dict, turns_stuck: int, marked: dict[str, str]) -> dict:
    """What the page shows of one turn; `marked` is `marked_events()`, the event types marked on the chart."""
    calls = record.get("llm_calls") or {}
    tokens = record.get("llm_tokens") or {}
    cost = record.get("llm_cost_usd") or {}
    return {
        "turn": record["turn"],
        "command": str(record.get("command", "")),
        "response": str(record.get("response", ""))[:RESPONSE_CHARS],
        "room_id": record.get("room_id_after"),
        "room": record.get("room_name_after", ""),
        "room_before_id": record.get("room_id_before"),
        "score": record.get("score_after", 0),
        "base": record.get("critic_base_score"),
        "adjusted": record.get("critic_adjusted_score"),
        "reason": record.get("critic_reason", ""),
        "adjustments": record.get("adjustments") or [],
        "candidates": [
            {k: c.get(k) for k in ("command", "score", "reason", "accepted", "thought")}
            for c in record.get("candidates") or []
            if isinstance(c, dict)
        ],
        "thought": record.get("thought", ""),
        "llm_calls": sum(v for v in calls.values() if isinstance(v, int)),
        "tokens": sum(v for v in tokens.values() if isinstance(v, int)),
        "cost": round(sum(v for v in cost.values() if isinstance(v, (int, float))), 6),
        "stuck": turns_stuck,
        "branch": record.get("branch") if isinstance(record.get("branch"), int) else 0,  # 0: before any rewind
        "rewind": rewind_of(record),
        "category": record.get("result_category", ""),
        "marks": [
            {"kind": marked[e["event_type"]], "type": e["event_type"], "text": describe(e)}
            for e in record.get("events") or []
            if isinstance(e, dict) and e.get("event_type") in marked
        ],
        "objectives": [o.get("objective", "") for o in record.get("objectives_completed") or [] if isinstance(o, dict)],
    }


def describe(event: dict) -> str:
    """The event's type and its scalar fields, in one line."""
    parts = [
        f"{key} {value}"
        for key, value in event.items()
        if key not in ("event_type", "turn") and isinstance(value, (str, int, float)) and value != ""
    ]
    return f"{event['event_type']}: {'; '.join(parts)}"[:300]


def load_episode(folder: Path, streamed: bool = False) -> dict:
    """Everything the page needs of one episode, with notes on what is missing.

    `streamed`: the turns are an iterator that reads the records again as it is consumed, once, so that a report
    of a finished episode never holds them all (the page of 10,000 turns held 45 MB of them); the rest is learned
    from a first reading that keeps only rooms."""
    notes: list[str] = []
    summary = summary_of(folder)
    since = (summary.get("loop_break") or {}).get("last_progress_turn", 0) if summary else 0
    rooms: dict[int, str] = {}
    loop_rooms: set[int] = set()
    turns: list[dict] = []
    for turn in iter_turns(folder, notes):
        if turn["room_id"] is not None:
            rooms.setdefault(turn["room_id"], turn["room"])
            if turn["turn"] > since:
                loop_rooms.add(turn["room_id"])
        if not streamed:
            turns.append(turn)
    info = read_json(folder / "episode.json") or {}
    game_map = read_json(folder / "map.json")
    if summary is None:
        notes.insert(0, f"no {SUMMARY_FILE} yet: the episode is running, or it was killed before its end")
    if game_map is None:
        game_map = map_of_rooms(rooms)
    config = info.get("config") or {}
    llm = config.get("llm") or {}
    looped = bool(summary) and summary.get("termination_reason") in LOOP_ENDINGS
    return {
        "episode_id": folder.name,
        "summary": summary,
        "info": {
            "game": (summary or {}).get("game") or Path(str(info.get("story_file", ""))).stem,
            "agent": (summary or {}).get("agent") or info.get("agent"),
            "critic": (summary or {}).get("critic") or info.get("critic"),
            "models": {"agent": llm.get("agent_model"), "critic": llm.get("critic_model")},
        },
        "turns": iter_turns(folder, []) if streamed else turns,
        "map": game_map,
        "loop_rooms": sorted(loop_rooms) if looped else [],
        "notes": notes,
        "markers": dict(MARKERS),  # each marker's colour: the built-in ones and those of the plugins loaded here
    }


def map_of_rooms(rooms: dict[int, str]) -> dict:
    """A map from the rooms the turns went through (a running or killed episode has no map.json yet)."""
    return {"rooms": {str(room): {"name": name, "exits": {}, "failed_exits": []} for room, name in rooms.items()}}


def episode_row(episode_id: str, folder: Path) -> dict:
    """One line of the episode list."""
    summary = summary_of(folder) or {}
    info = read_json(folder / "episode.json") or {}
    return {
        "episode_id": episode_id,
        "game": summary.get("game") or Path(str(info.get("story_file", ""))).stem,
        "agent": summary.get("agent") or info.get("agent"),
        "turns": summary.get("turns"),
        "score": summary.get("final_score"),
        "max_score": summary.get("max_score"),
        "termination_reason": summary.get("termination_reason") or "running or killed",
        "rewinds": summary.get("rewinds", 0),
    }
