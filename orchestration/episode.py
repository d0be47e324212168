"""An episode's start and finish around the turn loop: its id, the episode file `--resume` reads, how a crash ends
it, and what is written once it is over (the map, the strategy notes, the knowledge store, summary.json, and the
steps run on the folder after it)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from loguru import logger

from agents.base import Agent, Critic, LLMCallFailed, LLMUnavailable
from managers.knowledge import Knowledge
from managers.loop_break import LoopBreak
from managers.loop_break.rewind import Rewinder
from managers.map_graph import MapGraph
from managers.objectives import ObjectiveManager
from orchestration.recorder import EpisodeRecorder, RecordsUnwritable
from orchestration.spending import Spending, usage_line
from session.checkpoints import checkpoints_for
from session.config import ConfigError, GameConfiguration
from session.emulator import EmulatorFailed
from session.events import EventType
from session.jericho_session import JerichoSession
from session.records import (
    BROKEN_ENDINGS,
    FINISHED_ENDINGS,
    SUMMARY_FILE,
    Ending,
    EpisodeOver,
    GameView,
    NotATurnRecord,
    TurnRecord,
    read_records,
    read_summary,
)
from session.story_file import StoryFileError

EPISODE_FILE = "episode.json"
"""What `--resume` needs to rebuild an episode, in its folder."""


class ResumeError(Exception):
    """An episode folder cannot be resumed: no records, a game that replays differently, or an ended episode."""


@dataclass
class GameState:
    """Episode-level state (design 000's `game_state`, docs/design.md)."""

    episode_id: str
    turn_count: int = 0
    """Turns played: a turn counts once its record exists."""
    termination_reason: Ending | None = None
    """How the episode ended (None: it goes on)."""


def new_episode_id() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H-%M-%S") + "-" + uuid.uuid4().hex[:6]


def read_interrupted(folder: Path) -> tuple[dict[str, Any], list[TurnRecord]]:
    """An interrupted episode's folder, read to resume it: its episode.json and its records. A ConfigError says in
    one line why it cannot be resumed (not an episode folder, a record that does not read, an episode that ended,
    no turn recorded)."""
    try:
        info = json.loads((folder / EPISODE_FILE).read_text())
        reason = read_summary(folder).get("termination_reason") if (folder / SUMMARY_FILE).is_file() else None
        records = read_records(folder)
    except NotATurnRecord as exc:
        raise ConfigError(f"--resume {folder}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--resume {folder}: not a readable episode folder ({exc})") from None
    if reason in FINISHED_ENDINGS:
        raise ConfigError(f"--resume {folder}: the episode ended ({reason}); nothing to resume")
    if not records:
        raise ConfigError(f"--resume {folder}: no turn was recorded; start a new episode instead")
    return info, records


def crash_ending(exc: BaseException) -> Ending:
    """The ending of an episode cut off by an exception no turn raised to end it."""
    if isinstance(exc, KeyboardInterrupt):  # Ctrl-C, or a signal main.py turns into one
        return Ending.INTERRUPTED
    if isinstance(exc, RecordsUnwritable):
        return Ending.RECORDS_UNWRITABLE
    return Ending.ERROR


class Played(Protocol):
    """What the finish reads of an episode played (the Orchestrator)."""

    config: GameConfiguration
    run_info: dict[str, Any]
    """What the caller adds to episode.json (e.g. the replay file)."""
    game_state: GameState
    emulator_failure: str | None
    session: JerichoSession
    agent: Agent
    critic: Critic
    knowledge: Knowledge | None
    map: MapGraph
    view: GameView | None
    best_score: int
    spending: Spending
    loop_break: LoopBreak
    rewinder: Rewinder
    objectives: ObjectiveManager
    recorder: EpisodeRecorder
    after_episode: Sequence[Callable[[Path], None]]


def open_recorder(config: GameConfiguration, folder: Path, quiet: bool, resume: bool) -> EpisodeRecorder:
    """The episode's records and logs in `folder` (appended to when resuming); the API key never reaches them."""
    orchestrator = config.orchestrator
    return EpisodeRecorder(
        folder, orchestrator.console_log_level, orchestrator.file_log_level, quiet, (config.llm.api_key(),), resume
    )


def write_episode_file(folder: Path, played: Played) -> None:
    """episode.json: what `--resume` needs to rebuild this episode (never the API key, only its variable)."""
    info = {
        "episode_id": played.game_state.episode_id,
        "story_file": str(Path(played.session.story_file).resolve()),
        "agent": played.agent.kind,
        "critic": played.critic.kind,
        "config": played.config.model_dump(mode="json"),
        **played.run_info,
    }
    try:
        (folder / EPISODE_FILE).write_text(json.dumps(info, indent=2) + "\n")
    except OSError as exc:
        raise RecordsUnwritable(f"cannot write {folder / EPISODE_FILE}: {exc.strerror or exc}") from None


def log_start(played: Played, resumed: bool) -> None:
    state = played.game_state
    logger.bind(event_type=EventType.EPISODE_START).info(
        f"Episode {state.episode_id}: {played.session.game_name}, agent {played.agent.kind}, "
        f"critic {played.critic.kind}" + (f", resumed after turn {state.turn_count}" if resumed else "")
    )


def resume_agent(agent: Agent, turns: int, memory: dict | None) -> None:
    """The agent of a resumed episode, brought to where it was after `turns` turns with its memory as last
    recorded (ResumeError when that memory does not read)."""
    agent.resume(turns)  # scripted agents go on from where they were
    if memory is not None:
        try:
            agent.recall(memory)
        except ValueError as exc:
            raise ResumeError(f"the agent's recorded memory does not read: {exc}") from None


def log_end(state: GameState, over: EpisodeOver) -> None:
    if over.ending == Ending.EMULATOR_FAILED:
        logger.bind(event_type=EventType.EMULATOR_FAILED).error(f"{over.detail}: the episode ends")
    logger.bind(event_type=EventType.EPISODE_END, reason=over.ending).info(
        f"Episode ends after {state.turn_count} turns: {over.ending}" + (f" ({over.detail})" if over.detail else "")
    )


def finish(played: Played, folder: Path, wall_seconds: float) -> Path:
    """Write what an episode leaves once it is over, on every ending (crashes included); summary.json's path."""
    notes = _synthesize(played)  # first: its call counts in the summary below
    try:
        played.map.export(folder)
    except OSError as exc:  # the summary below says whether the folder is writable at all
        logger.warning(f"map not written: {exc.strerror or exc}")
    summary = _summary(played, wall_seconds)
    summary["strategy_notes"] = notes
    summary["knowledge_store"] = _save_knowledge(played.knowledge, summary)
    if summary["llm_calls"]:
        logger.bind(event_type=EventType.LLM_USAGE).info(usage_line(summary))
    path = played.recorder.close(summary)
    for step in played.after_episode:
        try:
            step(folder)
        except OSError as exc:  # the records and summary are what matter; what a step makes can be made again
            logger.warning(f"a step after the episode (report.html) failed: {exc.strerror or exc}")
    return path


def _summary(played: Played, wall_seconds: float) -> dict[str, Any]:
    session, recorder = played.session, played.recorder
    unreadable = played.critic.unreadable_verdicts()
    return {
        "episode_id": played.game_state.episode_id,
        "game": session.game_name,
        "story_file": str(session.story_file),
        "fully_supported": session.supported,
        "agent": played.agent.kind,
        "critic": played.critic.kind,
        "forced": recorder.turns > 0 and recorder.forced_turns == recorder.turns,
        "turns": recorder.turns,
        "final_score": played.view.score if played.view else 0,
        "best_score": played.best_score,
        "max_score": session.max_score,
        "unreadable": session.unreadable(),
        "termination_reason": played.game_state.termination_reason,
        "emulator_failure": played.emulator_failure,
        # probes of the shadow emulator skipped because it crashed or hung, by probe (session.shadow)
        "probe_failures": dict(session.shadow.probe_failures),
        **played.spending.summary(),
        # critic verdicts it could not read (no score, or one outside 0..1): asked again once, then scored offline
        "critic_retries": unreadable["retried"],
        "critic_fallbacks": unreadable["fallback"],
        "rooms_visited": len(played.map.rooms),
        **_progress(played),
        "wall_seconds": round(wall_seconds, 3),
        "loop_break": played.loop_break.summary(recorder.turns),
        "rewinds": played.rewinder.rewinds,
        "abandoned_turns": played.rewinder.abandoned_turns,
        "completed_objectives": played.objectives.completed_objectives,
    }


def _progress(played: Played) -> dict[str, Any]:
    """`progress` (the share of the walkthrough's checkpoints the episode reached, None without a walkthrough) and
    `checkpoints` ({"reached": n, "total": m}; None when they could not be derived): session.checkpoints; and
    `checkpoint_marks` ({"rooms": [...], "scores": [...]}, what marks each checkpoint) for progress turn by turn."""
    try:
        checkpoints = checkpoints_for(played.session)
    except (EmulatorFailed, StoryFileError, OSError) as exc:  # the episode's own figures matter more
        logger.warning(f"walkthrough progress not measured: {exc}")
        return {"progress": None, "checkpoints": None, "checkpoint_marks": None}
    progress = checkpoints.progress(played.map.rooms, played.best_score)
    return progress.summary() | {"checkpoint_marks": checkpoints.marks()}


def _synthesize(played: Played) -> int:
    """A critic that writes notes (the LLM critic) and a knowledge store: the notes, kept only where the records
    back them."""
    knowledge = played.knowledge
    if knowledge is None or played.game_state.termination_reason in BROKEN_ENDINGS:
        return 0
    try:
        notes = played.critic.synthesize(knowledge.episode_facts())
    except (LLMCallFailed, LLMUnavailable) as exc:
        logger.warning(f"no strategic notes: the call failed ({exc})")
        return 0
    if notes is None:  # a critic that writes none
        return 0
    return knowledge.add_notes(notes, played.game_state.episode_id)


def _save_knowledge(knowledge: Knowledge | None, summary: dict) -> str | None:
    """Add this episode to the knowledge store (on every ending, crashes included); the store's path."""
    if knowledge is None:
        return None
    try:
        path = knowledge.save(summary)
    except OSError as exc:  # the episode's own records matter more: say so and go on
        logger.warning(f"knowledge store not written: {exc.strerror or exc}")
        return None
    return str(path) if path is not None else None
