"""zork1's walkthrough through the real turn loop, and the map it leaves behind (the shared `walkthrough_episode` of
conftest.py)."""

from __future__ import annotations

import json

from session.commands import direction_of

WEST_OF_HOUSE, NORTH_OF_HOUSE, FOREST_PATH, UP_A_TREE = 180, 81, 75, 88


def test_walkthrough_wins_with_350(walkthrough_episode, walkthrough):
    summary = walkthrough_episode.summary
    assert summary["final_score"] == 350
    assert summary["best_score"] == 350
    assert summary["max_score"] == 350
    assert summary["termination_reason"] == "victory"
    assert summary["agent"] == "walkthrough" and summary["forced"] is True
    # one events.jsonl line per turn, turns numbered 1..N, the walkthrough's commands in order
    records = walkthrough_episode.records
    assert len(records) == summary["turns"] == len(walkthrough)
    assert [r["turn"] for r in records] == list(range(1, len(records) + 1))
    assert [r["command"] for r in records] == [c.strip() for c in walkthrough]
    assert records[-1]["victory"] is True


def test_map_holds_every_visited_room(walkthrough_episode):
    game_map = walkthrough_episode.orchestrator.map
    visited = {r["room_id_before"] for r in walkthrough_episode.records} | {
        r["room_id_after"] for r in walkthrough_episode.records
    }
    visited.discard(None)
    assert visited <= set(game_map.rooms)
    on_disk = json.loads((walkthrough_episode.folder / "map.json").read_text())
    assert visited <= {int(k) for k in on_disk["rooms"]}
    assert walkthrough_episode.summary["rooms_visited"] == len(game_map.rooms)


def test_map_holds_every_edge_a_move_walked(walkthrough_episode):
    game_map = walkthrough_episode.orchestrator.map
    on_disk = json.loads((walkthrough_episode.folder / "map.json").read_text())["rooms"]
    moves = 0
    for record in walkthrough_episode.records:
        direction = direction_of(record["command"])
        before, after = record["room_id_before"], record["room_id_after"]
        if direction is None or before == after or after is None:
            continue
        moves += 1
        where = f"turn {record['turn']}: {record['room_name_before']} {direction} -> {record['room_name_after']}"
        assert game_map.rooms[before].exits.get(direction) == after, where
        assert on_disk[str(before)]["exits"].get(direction) == after, where
    assert moves > 100  # the walkthrough walks a lot: make sure the loop above really checked edges


def test_known_zork1_edges(walkthrough_episode):
    rooms = walkthrough_episode.orchestrator.map.rooms
    assert rooms[WEST_OF_HOUSE].exits["north"] == NORTH_OF_HOUSE
    assert rooms[NORTH_OF_HOUSE].exits["north"] == FOREST_PATH
    assert rooms[FOREST_PATH].exits["up"] == UP_A_TREE
    assert rooms[WEST_OF_HOUSE].first_visit_turn == 0
    assert "West" in rooms[WEST_OF_HOUSE].name


def test_map_mmd_is_a_mermaid_graph(walkthrough_episode):
    text = (walkthrough_episode.folder / "map.mmd").read_text()
    lines = text.splitlines()
    assert lines[0].startswith("graph ")
    assert f"    r{WEST_OF_HOUSE} -->|north| r{NORTH_OF_HOUSE}" in lines
    assert f"    r{FOREST_PATH} -->|up| r{UP_A_TREE}" in lines
    assert any(line.strip().startswith(f'r{UP_A_TREE}["') for line in lines)
    # every node used by an edge is declared
    declared = {line.strip().split("[", 1)[0] for line in lines[1:] if "[" in line and "-->" not in line}
    for line in lines[1:]:
        if "-->" in line:
            source, _, target = line.split()
            assert source in declared and target in declared, line


def test_episode_folder_contents(walkthrough_episode):
    names = {p.name for p in walkthrough_episode.folder.iterdir()}
    assert {"events.jsonl", "summary.json", "map.json", "map.mmd", "episode.log.jsonl"} <= names


def test_walkthrough_reaches_full_score(walkthrough_episode):
    result = walkthrough_episode
    assert result.summary["final_score"] == 350
    assert result.summary["termination_reason"] == "victory"
    assert len(result.records) == result.summary["turns"] == 396
