"""Shared fixtures (shared helpers that are not fixtures: helpers.py). Tests run the real Jericho emulator on the real
story file named by ZORK_ROM."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from loguru import logger

from orchestration.wiring import RunOptions, build_orchestrator
from session.jericho_session import JerichoSession
from session.story_file import ZORK1_MD5
from tests.helpers import DEFAULT_ROM, EpisodeResult, make_config, read_episode
from tests.local_http import bypass_proxies


@pytest.fixture(scope="session", autouse=True)
def _quiet_loguru():
    logger.remove()  # the episode recorder adds its own sinks; keep pytest output readable
    yield


@pytest.fixture(scope="session")
def rom_path() -> Path:
    """The zork1 story file. Missing: the test fails with a message saying where to put it (never skips)."""
    path = Path(os.environ.get("ZORK_ROM", DEFAULT_ROM)).resolve()  # absolute: some tests change directory
    if not path.is_file():
        pytest.fail(
            f"zork1 story file not found at {path}. Set ZORK_ROM to zork1.z5 (md5 {ZORK1_MD5}), "
            "e.g. ZORK_ROM=../shared/games/zork1.z5 uv run pytest",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="session")
def walkthrough(rom_path) -> list[str]:
    session = JerichoSession(rom_path)
    return session.walkthrough()


def _read_only(value: Any) -> Any:
    """JSON as read back, read-only all the way down: objects as mapping proxies, arrays as tuples."""
    if isinstance(value, dict):
        return MappingProxyType({key: _read_only(item) for key, item in value.items()})
    if isinstance(value, list):
        return tuple(_read_only(item) for item in value)
    return value


@pytest.fixture(scope="session")
def walkthrough_episode(rom_path, tmp_path_factory) -> EpisodeResult:
    """zork1's walkthrough played once for the whole run, as `main.py --agent walkthrough` plays it: the real wiring
    (`build_orchestrator`, whose `play_episode` runs `_run_game_loop`) under the default configuration, with the
    offline critic whatever the environment holds. Tests share it, so they only read it: the summary and records
    are read-only, and nothing is to be written into the folder or done with the orchestrator but looking."""
    config = make_config(tmp_path_factory.mktemp("walkthrough"), gameplay={"agent": "walkthrough", "critic": "offline"})
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True))
    played = read_episode(orchestrator.play_episode(), orchestrator)
    return EpisodeResult(_read_only(played.summary), _read_only(played.records), played.folder, orchestrator)


@pytest.fixture
def no_api_key(monkeypatch):
    """No OPENAI_API_KEY in the environment, whatever the machine has set: the run must not need one."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def no_proxy(monkeypatch):
    """Requests to 127.0.0.1 go straight to the test's server, whatever proxy the machine has set."""
    bypass_proxies(monkeypatch)


CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
"""Where Debian and others put Chromium (the viewer tests drive it through Playwright)."""


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium, one per test module that asks for it; a clear failure when it is not installed."""
    from playwright.sync_api import sync_playwright

    executable = next((p for p in CHROMIUM_PATHS if Path(p).is_file()), None) or shutil.which("chromium")
    if executable is None:
        pytest.fail("the viewer tests need Chromium: `apt-get install chromium` (.ci/run does it)", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield launched
        launched.close()


def _textworld_game(tmp_path_factory, kind: str, seed: int, size: int) -> Path:
    """A TextWorld game of `kind` ("cooking" or "quest") made here from `seed` at the benchmark's `size`
    (playthroughs.generated_games.make); a seed TextWorld makes no game of fails the test."""
    from playthroughs.generated_games import make

    game = make(kind, seed, size, tmp_path_factory.mktemp("textworld"))
    if game is None:
        pytest.fail(f"TextWorld made no {kind} game from seed {seed}", pytrace=False)
    return Path(game.path)


@pytest.fixture(scope="session")
def textworld_quest(tmp_path_factory) -> Path:
    """A TextWorld quest of several rooms, made here (the benchmark's third quest size), whose kitchen holds a bug, a
    fly larva, a glass and a loaf: `look under bug` is answered `You find nothing of interest.` and its library notes
    in a global what was looked under."""
    return _textworld_game(tmp_path_factory, "quest", 41144, 2)


@pytest.fixture(scope="session")
def textworld_kitchen(tmp_path_factory) -> Path:
    """A TextWorld cooking game of a few rooms around a kitchen, made here (story files are never committed; tw-make
    compiles it offline). Like every TextWorld game, its things have no names in the object table."""
    return _textworld_game(tmp_path_factory, "cooking", 12043, 1)


@pytest.fixture(scope="session")
def textworld_onions(tmp_path_factory) -> Path:
    """A one-room TextWorld cooking game, made here, whose kitchen holds several onions: `look under white` is
    answered "(the white onion)" first, the parser's note on the thing it chose."""
    return _textworld_game(tmp_path_factory, "cooking", 28965, 0)


@pytest.fixture(scope="session")
def textworld_one_room(tmp_path_factory) -> Path:
    """A TextWorld cooking game of one room, made here: its walkthrough never walks, so a player without Jericho's
    bindings is found only once a thing moves (JerichoSession.reset leaves it unknown)."""
    return _textworld_game(tmp_path_factory, "cooking", 17786, 0)
