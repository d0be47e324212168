"""The turn loop counts a turn once its record exists, and every ending comes through one path: a replay of three
commands ends after three turns, in the log, the closing line and the summary alike."""

from __future__ import annotations

from pathlib import Path

import main
from session.records import read_record_dicts, read_summary
from tests.helpers import PYPROJECT


def test_a_three_command_replay_ends_after_three_turns(tmp_path, capsys, rom_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    actions = tmp_path / "actions.txt"
    actions.write_text("open mailbox\ntake leaflet\nread leaflet\n")
    code = main.main(
        ["--config", str(PYPROJECT), "--quiet", "--rom", str(rom_path), "--episode-dir", str(tmp_path / "episodes")]
        + ["--agent", "replay", "--actions", str(actions)]
    )
    out = capsys.readouterr().out
    assert code == 0
    folder = Path(out.strip().splitlines()[-1]).parent
    summary = read_summary(folder)
    assert summary["turns"] == 3 and summary["termination_reason"] == "script_exhausted"
    assert [r["turn"] for r in read_record_dicts(folder)] == [1, 2, 3]
    assert "after 3 turns" in out
    log = (folder / "episode.log.jsonl").read_text(encoding="utf-8")
    assert "Episode ends after 3 turns: script_exhausted" in log and "after 4 turns" not in log
