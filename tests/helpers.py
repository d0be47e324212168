"""What the test modules share besides fixtures (those are in conftest.py): where the project and its story files
are, a configuration under a test's folder, an episode played and read back, main.py in a process of its own, and the
toy plugin the plugin tests write outside the tree. Records and loop-break settings to feed a detector are in
factories.py; the HTTP server on 127.0.0.1 is in local_http.py."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import PLAUSIBLE_VERDICT, cycling_replies
from orchestration.orchestrator import Orchestrator
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import GameConfiguration, layered
from session.records import EVENTS_FILE, read_record_dicts, read_records, read_summary

# -- the project and its story files --------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]
"""The project's folder: main.py and pyproject.toml."""
PYPROJECT = ROOT / "pyproject.toml"
"""The project's configuration, whose `[tool.zorkgpt.*]` tables are the defaults."""
DATA = ROOT / "tests" / "data"
"""Files the tests read: the sets of raw replies, a configuration with renamed keys."""
DEFAULT_ROM = ROOT.parent / "shared" / "games" / "zork1.z5"
"""zork1 in the shared corpus beside the project, when ZORK_ROM is not set."""
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


def story_file(name: str) -> Path:
    """A story file of the shared corpus (`../shared/games`, the folder of ZORK_ROM when it is set).

    Missing: the test fails with a message saying where the corpus is expected (never skips)."""
    folder = Path(os.environ["ZORK_ROM"]).resolve().parent if os.environ.get("ZORK_ROM") else DEFAULT_ROM.parent
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


def real_play_file(name: str) -> Path:
    """A recorded game of a real language model, in `../shared/real-play` beside the shared corpus (one command a
    line, as typed). Missing: the test fails with a message saying where (never skips)."""
    folder = story_file(CORPUS[0]).parent.parent / "real-play"
    path = folder / name
    if not path.is_file():
        pytest.fail(f"real play {name} not found in {folder} (beside the shared corpus)", pytrace=False)
    return path


# -- episodes --------------------------------------------------------------------------------------------------------
def make_config(tmp_path: Path, **sections: dict[str, Any]) -> GameConfiguration:
    """Defaults from pyproject.toml, episodes under tmp_path, then `sections` ({section: {key: value}})."""
    return GameConfiguration.from_toml(
        PYPROJECT, layered({"files": {"episode_dir": str(tmp_path / "episodes")}}, sections)
    )


def detector_config_file(tmp_path: Path, detector: str, table: str) -> Path:
    """`tmp_path/pyproject.toml` for a detector's episode: the replay agent and the offline critic for 40 turns at
    most, episodes under tmp_path, no knowledge store, and `[tool.zorkgpt.loop_break.<detector>]` holding `table`."""
    path = tmp_path / "pyproject.toml"
    path.write_text(
        "[tool.zorkgpt.gameplay]\n"
        'agent = "replay"\ncritic = "offline"\nmax_turns_per_episode = 40\n'
        f'[tool.zorkgpt.files]\nepisode_dir = "{tmp_path / "episodes"}"\n'
        "[tool.zorkgpt.knowledge]\nenabled = false\n"
        f"[tool.zorkgpt.loop_break.{detector}]\n{table}\n"
    )
    return path


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


class RecordingReplay(ReplayAgent):
    """A replay agent that keeps the loop status text it was shown each turn."""

    def __init__(self, commands):
        super().__init__(commands, kind="replay")
        self.shown: dict[int, str] = {}

    def propose(self, context):
        self.shown[context.turn] = context.loop_status
        return super().propose(context)


REWIND_LOOP = ["north", "south"] * 7
"""Back and forth between the troll room's North-South Passage and the Chasm: no progress, stopped after 12 turns."""
REWIND_LOOP_AGAIN = ["northeast"] + ["southwest", "northeast"] * 8
"""From the restored North-South Passage to a room not seen (Deep Canyon: progress), then back and forth from there."""
REWIND = {
    "on_stuck": "rewind",
    "max_rewinds": 2,
    "warning_lead_turns": 4,
    "no_progress": {"max_turns": 12},
    "repetition": {"min_turns": 10},
}
"""`[tool.zorkgpt.loop_break]` for the rewind tests: rewind twice, a loop stopped 12 turns after the last progress."""


def rewind_script(walkthrough: list[str]) -> list[str]:
    """30 walkthrough steps (to the troll room and past it), a loop, progress and a loop again, then more steps."""
    return walkthrough[:30] + REWIND_LOOP + REWIND_LOOP_AGAIN + walkthrough[30:60]


def replay_episode(rom_path, tmp_path, commands: list[str], loop_break: dict, max_turns: int = 120) -> EpisodeResult:
    """zork1 replaying `commands` as `main.py --agent replay --actions FILE` plays them, under `loop_break`'s
    settings, with no knowledge store."""
    actions = tmp_path / "actions.txt"
    actions.write_text("\n".join(commands) + "\n")
    config = make_config(
        tmp_path,
        loop_break=loop_break,
        gameplay={"agent": "replay", "critic": "offline", "max_turns_per_episode": max_turns},
        knowledge={"enabled": False},
    )
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), actions=str(actions), quiet=True))
    return read_episode(orchestrator.play_episode(), orchestrator)


def comparable_records(folder: Path) -> list[dict]:
    """The turn records without wall times (the only field that may differ between equal runs)."""
    return [{k: v for k, v in record.items() if k != "wall_seconds"} for record in read_record_dicts(folder)]


def verdict_json(score: float, reason: str) -> str:
    """A critic's reply as a model writes it: its score and reason as JSON."""
    return json.dumps({"score": score, "reason": reason})


def batch_table(out: Path) -> list[dict]:
    """The rows of a batch's results.json: its cells, then its games."""
    results = json.loads((out / "results.json").read_text())
    return results["cells"] + results["games"]


# -- main.py and the emulators in processes of their own -------------------------------------------------------------
GATE_GUIDANCE = "try the trap door"
"""What the tests type at the human gate."""


def start_main(args: list[str], stdin=subprocess.PIPE, **kwargs) -> subprocess.Popen:
    """main.py with `args` in a process of its own, in the project's folder, without an API key."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), *args],
        cwd=ROOT,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **kwargs,
    )


def running(pid: int) -> bool:
    """The process exists and is no zombie."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (Linux /proc)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, below = [], [pid]
    while below:
        parent = below.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                found.append(child)
                below.append(child)
    return found


def assert_all_end(pids: list[int], timeout: float = 10) -> None:
    """Every process of `pids` has ended within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(running(pid) for pid in pids):
        time.sleep(0.05)
    assert not [pid for pid in pids if running(pid)], "a process (a worker, a zygote, an emulator) outlived the harness"


# -- the toy plugin --------------------------------------------------------------------------------------------------
TOY_COMMANDS = ["open mailbox", "look", "take leaflet", "look", "read leaflet", "look", "north", "look"]
"""What the toy agent plays, in order, then it stops (script exhausted)."""
LOOKS_TO_STOP = 3
"""`[tool.zorkgpt.loop_break.toyplug_looks] limit`: the toy detector ends the episode on the third `look`."""
TURNS_TO_STOP = [turn for turn, command in enumerate(TOY_COMMANDS, start=1) if command == "look"][LOOKS_TO_STOP - 1]
MARKER_COLOUR = "#1a2b3c"

TOYPLUG = {
    "__init__.py": '''
        """A toy plugin of the tests: importing the package registers nothing (its modules do)."""
    ''',
    "agents.py": '''
        """An agent that plays a fixed list of commands, and a critic that approves of everything."""

        from agents.base import Agent, Critic, Proposal, ScriptExhausted
        from agents.registry import Kind
        from session.records import Judgement

        COMMANDS = COMMANDS_GIVEN


        class FixedAgent(Agent):
            kind = "toyplug-fixed"
            forced = True

            def __init__(self):
                self.position = 0

            def resume(self, turns):
                self.position += turns

            def propose(self, context):
                if self.position >= len(COMMANDS):
                    raise ScriptExhausted("toyplug: every command has run")
                self.position += 1
                return Proposal(COMMANDS[self.position - 1], f"toyplug step {self.position}")


        class ApprovingCritic(Critic):
            kind = "toyplug-approving"

            def evaluate(self, command, context):
                return Judgement(0.9, "toyplug approves")


        fixed = Kind("toyplug-fixed", lambda session, config, options, client: FixedAgent())


        def approving(session, config, options, client):
            return ApprovingCritic()
    ''',
    "loops.py": '''
        """A detector that counts `look`s, with its own event type, marker and section."""

        from pydantic import Field

        from managers.loop_break import Detector, register
        from session.config import DetectorSection
        from session.events import new_event, register_event_type

        LOOKED = register_event_type("toyplug_looked")


        class LooksConfig(DetectorSection):
            """`[tool.zorkgpt.loop_break.toyplug_looks]`: stop once the player has looked around too often."""

            limit: int = Field(0, ge=0, le=100)
            """`look` commands after which the rule stops the episode (0: off)."""

            @classmethod
            def stop_rule_off(cls):
                return {"limit": 0}


        @register
        class Looks(Detector):
            name = "toyplug_looks"
            config_model = LooksConfig
            stop_rule = "toyplug_looks"
            events = {LOOKED: "toyplug-look"}
            markers = {"toyplug-look": "MARKER_COLOUR"}

            def __init__(self, config, tools):
                super().__init__(config, tools)
                self.looks = 0

            def observe(self, turn):
                if turn.record.command.strip().lower() != "look":
                    return ()
                self.looks += 1
                return (new_event(LOOKED, "toyplug: looked again", turn=turn.record.turn, looks=self.looks),)

            def stop(self, turns_stuck, stretch):
                if self.config.limit and self.looks >= self.config.limit:
                    return f"looked around {self.looks} times"
                return None
    ''',
    "broken.py": """
        raise RuntimeError("the toy plugin's own code fails")
    """,
}


def toy_plugin_module(name: str) -> str:
    """The text of the toy plugin's module `name` (`loops.py`: the detector that counts looks)."""
    text = textwrap.dedent(TOYPLUG[name]).lstrip()
    return text.replace("COMMANDS_GIVEN", repr(TOY_COMMANDS)).replace("MARKER_COLOUR", MARKER_COLOUR)


def write_toy_plugin(folder: Path) -> Path:
    """The package `toyplug` in `folder` (outside the tree); `folder`, for PYTHONPATH."""
    package = folder / "toyplug"
    package.mkdir(parents=True, exist_ok=True)
    for name in TOYPLUG:
        (package / name).write_text(toy_plugin_module(name))
    return folder


def plugin_config(path: Path, episode_dir: Path, plugins: tuple[str, ...] = ("toyplug.loops",)) -> Path:
    """A configuration file that loads the toy plugin, plays its agent and stops on its detector's rule."""
    path.write_text(
        "[tool.zorkgpt]\n"
        f"plugins = {json.dumps(list(plugins))}\n"
        "[tool.zorkgpt.gameplay]\n"
        'agent = "toyplug.agents:fixed"\ncritic = "offline"\nmax_turns_per_episode = 30\n'
        f"[tool.zorkgpt.files]\nepisode_dir = {json.dumps(str(episode_dir))}\n"
        "[tool.zorkgpt.knowledge]\nenabled = false\n"
        f"[tool.zorkgpt.loop_break.toyplug_looks]\nlimit = {LOOKS_TO_STOP}\n"
    )
    return path


def assert_played_by_the_toy_plugin(folder: Path) -> None:
    """The episode in `folder` was played by the toy agent and stopped by the toy detector, which marked its looks."""
    summary, records = read_summary(folder), read_record_dicts(folder)
    assert summary["agent"] == "toyplug-fixed"
    assert [r["command"] for r in records] == TOY_COMMANDS[:TURNS_TO_STOP]
    assert summary["termination_reason"] == "stuck_no_progress"
    assert summary["loop_break"]["stop_rule"] == "toyplug_looks"
    assert summary["loop_break"]["stop_why"] == f"looked around {LOOKS_TO_STOP} times"
    looked = [e for r in records for e in r["events"] if e["event_type"] == "toyplug_looked"]
    assert [e["turn"] for e in looked] == [r["turn"] for r in records if r["command"] == "look"]
    assert [e["looks"] for e in looked] == list(range(1, LOOKS_TO_STOP + 1))
    report = (folder / "report.html").read_text()
    assert MARKER_COLOUR in report and '"kind": "toyplug-look"' in report  # the marker, with its colour


# -- a batch whose LLM calls cost money (the tests of `main.py batch --max-cost-usd`): a scripted model on
# 127.0.0.1 (agents.scripted_llm.ScriptedServer, never a real API) with a price, a configuration that calls it, and
# the checks of a batch its budget stopped.
MODEL = "scripted-priced"
PRICE = 100.0
"""USD per million tokens, in and out: a turn (an agent's and a critic's call) costs about $0.1."""
COMMANDS = ["look", "inventory", "north", "south"]
"""What the scripted agent proposes, in turn: nothing that ends a game of zork1."""
CALL_SECONDS = 0.05
"""How long each call takes: both workers are playing when the budget is reached, not one before the other is up."""
BUDGET = 3.0
"""About 25 turns of the scripted model: both workers play a few turns each, then the budget stops them."""


def priced_model():
    """The scripted model's reply function: the agent cycles through COMMANDS, the critic lets each pass."""
    replies = cycling_replies(
        [json.dumps({"thought": "one more step", "command": c}) for c in COMMANDS], json.dumps(PLAUSIBLE_VERDICT)
    )

    def reply(messages: list[dict]) -> str:
        time.sleep(CALL_SECONDS)
        return replies(messages)

    return reply


def priced_config(path: Path, base_url: str, api_key_env: str = "OPENAI_API_KEY") -> Path:
    """A configuration whose llm agent and critic call MODEL at `base_url` at PRICE, with the loop break off: only the
    budget or the turn limit ends an episode."""
    path.write_text(
        f'[tool.zorkgpt.llm]\nbase_url = "{base_url}"\napi_key_env = "{api_key_env}"\n'
        f'agent_model = "{MODEL}"\ncritic_model = "{MODEL}"\nmax_retries = 0\ntimeout_seconds = 30.0\n'
        f'[tool.zorkgpt.llm.prices."{MODEL}"]\ninput = {PRICE}\noutput = {PRICE}\n'
        "[tool.zorkgpt.loop_break]\nenabled = false\n"
    )
    return path


def budget_flags(out: Path, config: Path, budget: float, seeds: str = "1,2,3,4") -> list[str]:
    """`main.py batch` flags: zork1 on `seeds`, two workers, the llm agent and critic, up to 60 turns each."""
    flags = ["--games", str(story_file("zork1.z5")), "--seeds", seeds, "--workers", "2", "--max-turns", "60"]
    flags += ["--agent", "llm", "--critic", "llm", "--config", str(config), "--out", str(out), "--quiet"]
    return [*flags, "--max-cost-usd", str(budget)]


def manifest_rows(out: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, (out / "manifest.jsonl").read_text().splitlines())}


def assert_stopped_by_the_budget(out: Path, budget: float, jobs: int) -> dict[str, dict]:
    """The checks of a batch its budget stopped. Every job has a row: the started ones finished, cut by the budget
    (`budget` ending, records and summary whole), the others `not_run`. What they spent reached the budget and went
    past it by at most the costliest turn of each job started (after the spend reached the budget, each running
    episode plays at most one more turn's calls). The tables say which jobs were cut and which were not run.
    Returns the manifest's rows by id."""
    rows = manifest_rows(out)
    assert len(rows) == jobs
    started = sorted(ident for ident, row in rows.items() if row["status"] != "not_run")
    unstarted = sorted(ident for ident, row in rows.items() if row["status"] == "not_run")
    assert started and unstarted, rows
    spent = worst_turns = 0.0
    for ident in started:
        row = rows[ident]
        assert row["status"] == "finished" and row["termination_reason"] == "budget" and row["cut_by_budget"], row
        folder = out / "episodes" / ident / row["episode_folder"]
        summary = read_summary(folder)
        assert summary["termination_reason"] == "budget"
        lines = (folder / EVENTS_FILE).read_text(encoding="utf-8").splitlines()
        assert lines and all(isinstance(json.loads(line), dict) for line in lines)  # every line whole
        records = read_records(folder)
        assert len(records) == summary["turns"] >= 1
        spent += summary["cost_usd"]["total"]
        worst_turns += max(sum(record.llm_cost_usd.values()) for record in records)
    assert all(rows[ident]["reason"] == "the batch's budget was spent" for ident in unstarted)
    assert all(not (out / "episodes" / ident).exists() for ident in unstarted)
    assert budget - 1e-5 <= spent <= budget + worst_turns + 1e-5, (spent, budget, worst_turns)

    results = json.loads((out / "results.json").read_text())
    assert sorted(results["budget"]["cut_by_budget"]) == started
    assert sorted(results["budget"]["not_run"]) == unstarted
    assert results["episodes"] == len(started) and results["crashed"] == 0
    cell = results["cells"][0]
    assert (cell["episodes"], cell["cut_by_budget"], cell["not_run"]) == (len(started), len(started), len(unstarted))
    table = (out / "results.md").read_text()
    assert "| cost_usd | cut_by_budget | not_run |" in table
    cut_part, not_run_part = table.split("## Cut by the budget")[1].split("## Not run: the budget was spent")
    assert all(f"- {ident}" in cut_part for ident in started)
    assert all(f"- {ident}" in not_run_part for ident in unstarted)
    with (out / "results.csv").open(newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert lines[0]["cut_by_budget"] == str(len(started)) and lines[0]["not_run"] == str(len(unstarted))
    return rows


def raised(events: list[dict], result):
    """`result` of a loop-break call (a status, a judged proposal), its events added to a test's `events`."""
    events.extend(result.events)
    return result
