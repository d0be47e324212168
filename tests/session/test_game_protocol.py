"""The managers and agents reach the game through `session.game.GameSession` alone, and the live session is one."""

from __future__ import annotations

import ast
from pathlib import Path

from session.game import GameSession
from session.jericho_session import JerichoSession

ROOT = Path(__file__).resolve().parents[2]


def test_the_live_session_is_a_game_session(rom_path):
    session = JerichoSession(rom_path)
    try:
        assert isinstance(session, GameSession)
    finally:
        session.close()


def test_no_manager_or_agent_imports_the_live_session():
    importers = []
    for path in [*ROOT.glob("managers/**/*.py"), *ROOT.glob("agents/**/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "session.jericho_session":
                importers.append(str(path.relative_to(ROOT)))
    assert importers == []
