"""benchmarks/studies/rewind.py: what followed each rewind, read from records as the orchestrator writes them."""

from __future__ import annotations

import json

from benchmarks.studies.rewind import offline_episode, rewind_outcomes, signals_of
from tests.factories import turn_record
from tests.helpers import story_file

ROOMS = {"hall": 1, "yard": 2, "cellar": 3}


def _turn(turn: int, command: str, room: str, signals: tuple[str, ...] = (), **events: dict) -> dict:
    """One record as events.jsonl holds it: `command` run from `room`'s situation, its progress check, `events`."""
    record = turn_record(
        turn,
        command=command,
        room_id_before=ROOMS[room],
        room_id_after=ROOMS[room],
        situation=room,
        events=[{"event_type": "progress_check", "signals": list(signals)}]
        + [{"event_type": kind, **fields} for kind, fields in events.items()],
    )
    return json.loads(json.dumps(record.to_json()))


def _rewind(turn: int, to_turn: int, abandoned: int) -> dict:
    return {"turn": turn, "to_turn": to_turn, "abandoned": abandoned, "rule": "repetition", "restored": "state"}


def test_a_rewind_followed_by_progress_says_how_soon_and_what_the_turns_after_it_did():
    records = [
        _turn(1, "north", "hall", ("new_room",)),
        _turn(2, "take key", "hall"),
        _turn(3, "take key", "hall"),
        _turn(4, "take key", "hall", rewind=_rewind(4, to_turn=1, abandoned=3)),
        _turn(5, "take key", "hall"),
        _turn(6, "down", "cellar", ("new_room", "new_position")),
        _turn(7, "look", "cellar"),
    ]
    [outcome] = rewind_outcomes(records, "max_turns")
    assert outcome["to_progress"] == 2 and outcome["reached"] and outcome["fate"] == "progress"
    assert outcome["signals"] == ["new_room", "new_position"]
    assert outcome["repeated"] == 0.5  # `take key` again, then `down`
    assert outcome["revisited"] == 0.5  # the hall again, then the cellar
    assert outcome["bans"] == 1  # `take key`, made three times in the hall
    assert outcome["met_bans"] == 2  # both turns began in the hall
    assert not outcome["same_point"]


def test_progress_after_the_next_rewind_is_not_the_first_ones():
    loop = [_turn(t, "north" if t % 2 else "south", "yard") for t in range(2, 12)]
    records = [_turn(1, "east", "yard", ("new_room",)), *loop]
    records[-1]["events"].append({"event_type": "rewind", **_rewind(11, to_turn=1, abandoned=10)})
    records += [_turn(t, "north" if t % 2 else "south", "yard") for t in range(12, 20)]
    records[-1]["events"].append({"event_type": "rewind", **_rewind(19, to_turn=1, abandoned=8)})
    records += [_turn(20, "west", "yard", ("new_room",))]
    first, second = rewind_outcomes(records, "max_turns")
    assert first["to_progress"] is None and not first["reached"] and first["fate"] == "rewound again"
    assert first["repeated"] == 1.0 and first["bans"] == 2  # north and south, each made five times in the yard
    assert second["same_point"] and second["to_progress"] == 1 and second["reached"]
    assert signals_of(records[-1]) == ["new_room"]


def test_a_rewind_with_no_progress_before_the_end_takes_the_episodes_ending():
    records = [_turn(1, "north", "hall", ("new_room",)), _turn(2, "wait", "hall")]
    records[-1]["events"].append({"event_type": "rewind", **_rewind(2, to_turn=1, abandoned=1)})
    records += [_turn(3, "wait", "hall")]
    [outcome] = rewind_outcomes(records, "stuck_no_progress")
    assert outcome["fate"] == "stuck_no_progress" and outcome["bans"] == 1  # the wait is refused where it was made


def test_an_offline_episode_row_counts_the_rewinds_its_summary_gives():
    row = offline_episode(
        {"story": str(story_file("karn.z5")), "config": "pyproject.toml", "seed": 1, "mode": "rewind", "max_turns": 200}
    )
    assert row["rewinds"] == len(row["rewind_outcomes"]) > 0
    assert row["abandoned_turns"] == sum(o["abandoned"] for o in row["rewind_outcomes"])
    assert all(o["restored"] for o in row["rewind_outcomes"])
