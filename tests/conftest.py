"""Shared fixtures. Tests run the real Jericho emulator on the real story file named by ZORK_ROM."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from loguru import logger

from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from orchestration.orchestrator import Orchestrator
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import GameConfiguration
from session.jericho_session import ZORK1_MD5, JerichoSession
from session.records import read_record_dicts, read_summary

_DEFAULT_ROM = Path(__file__).resolve().parents[2] / "shared" / "games" / "zork1.z5"
CORPUS = (
    "advent.z5",
    "balances.z5",
    "ballyhoo.z3",
    "deephome.z5",
    "detective.z5",
    "enchanter.z3",
    "gold.z5",
    "hhgg.z3",
    "infidel.z3",
    "karn.z5",
    "lgop.z3",
    "lostpig.z8",
    "murdac.z5",
    "night.z5",
    "partyfoul.z8",
    "planetfall.z3",
    "seastalker.z3",
    "sherlock.z5",
    "sorcerer.z3",
    "spirit.z5",
    "temple.z5",
    "tryst205.z5",
    "weapon.z5",
    "wishbringer.z3",
    "yomomma.z8",
    "zork1.z5",
    "zork2.z5",
    "zork3.z5",
    "ztuu.z5",
)
"""The 29 story files of the shared corpus (`story_file`): versions 3, 5 and 8."""
MORE_GAMES = ("adventureland.z5", "curses.z5", "cutthroat.z3", "hollywood.z3", "trinity.z4")
"""Five more games of Jericho's suite (`more_story_file`), outside the corpus: rules chosen on the corpus failed on
them, so they check what the corpus cannot."""


@pytest.fixture(scope="session", autouse=True)
def _quiet_loguru():
    logger.remove()  # the episode recorder adds its own sinks; keep pytest output readable
    yield


@pytest.fixture(scope="session")
def rom_path() -> Path:
    """The zork1 story file. Missing: the test fails with a message saying where to put it (never skips)."""
    path = Path(os.environ.get("ZORK_ROM", _DEFAULT_ROM)).resolve()  # absolute: some tests change directory
    if not path.is_file():
        pytest.fail(
            f"zork1 story file not found at {path}. Set ZORK_ROM to zork1.z5 (md5 {ZORK1_MD5}), "
            "e.g. ZORK_ROM=../shared/games/zork1.z5 uv run pytest",
            pytrace=False,
        )
    return path


def story_file(name: str) -> Path:
    """A story file of the shared corpus (`../shared/games`, the folder of ZORK_ROM when it is set).

    Missing: the test fails with a message saying where the corpus is expected (never skips)."""
    folder = Path(os.environ["ZORK_ROM"]).resolve().parent if os.environ.get("ZORK_ROM") else _DEFAULT_ROM.parent
    path = folder / name
    if not path.is_file():
        pytest.fail(
            f"story file {name} not found in {folder}: these tests need the shared corpus of story files "
            "(../shared/games beside the project, or the folder of ZORK_ROM)",
            pytrace=False,
        )
    return path


def more_story_file(name: str) -> Path:
    """A story file beside the shared corpus, in `../shared/more-games` (adventureland, curses, cutthroat, hollywood,
    trinity). Missing: the test fails with a message saying where (never skips)."""
    folder = story_file(CORPUS[0]).parent.parent / "more-games"
    path = folder / name
    if not path.is_file():
        pytest.fail(f"story file {name} not found in {folder} (beside the shared corpus)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def walkthrough(rom_path) -> list[str]:
    session = JerichoSession(rom_path)
    return session.walkthrough()


def make_config(tmp_path: Path, **sections: dict[str, Any]) -> GameConfiguration:
    """Defaults from pyproject.toml, episodes under tmp_path, then `sections` ({section: {key: value}})."""
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    overrides = {"files": {"episode_dir": str(tmp_path / "episodes")}}
    for section, values in sections.items():
        overrides.setdefault(section, {}).update(values)
    return GameConfiguration.from_toml(pyproject, overrides)


@dataclass(frozen=True)
class EpisodeResult:
    summary: Mapping[str, Any]
    records: list[dict] | tuple[Mapping[str, Any], ...]
    folder: Path
    orchestrator: Orchestrator

    def events(self, event_type: str) -> list[dict]:
        return [dict(e, turn=r["turn"]) for r in self.records for e in r["events"] if e["event_type"] == event_type]


def read_episode(summary_path: Path, orchestrator: Orchestrator) -> EpisodeResult:
    """What a played episode wrote: its summary and its turn records, read back from its folder."""
    folder = summary_path.parent
    return EpisodeResult(read_summary(folder), read_record_dicts(folder), folder, orchestrator)


def run_episode(rom_path: Path, config: GameConfiguration, agent, critic=None, **parts) -> EpisodeResult:
    """Play one episode with `agent` and `critic` (default: the offline critic), built around them as main.py builds
    an episode (orchestration.wiring), and read back what it wrote. `parts`: build_orchestrator's other parts
    (`llm_client`, `objectives`, `knowledge`, `after_episode`, `episode_id`, `human_input`...); unless given, no
    knowledge store and no report."""
    parts = {"knowledge": None, "after_episode": (), **parts}
    options = RunOptions(rom=str(rom_path), quiet=True)
    orchestrator = build_orchestrator(config, options, agent=agent, critic=critic or OfflineCritic(), **parts)
    return read_episode(orchestrator.play_episode(), orchestrator)


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


class RecordingReplay(ReplayAgent):
    """A replay agent that keeps the loop status text it was shown each turn."""

    def __init__(self, commands):
        super().__init__(commands, kind="replay")
        self.shown: dict[int, str] = {}

    def propose(self, context):
        self.shown[context.turn] = context.loop_status
        return super().propose(context)
