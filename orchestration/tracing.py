"""An episode as a trace (session/telemetry.py): its span the root, a span per turn below it, the LLM calls of each
turn below that (agents/llm_client.py makes those). Nothing here runs when nothing is traced.

The episode's span says what was played (game, agent, critic, models, seed, the configuration's hash) and, at its
end, what it came to (scores, the ending and why, turns, calls, tokens, cost: summary.json's figures). A turn's span
says its command, rooms, score and whether it progressed, and carries the turn record's events (the loop break's
warnings, penalties and verdict among them) as span events. The names follow OpenTelemetry's GenAI conventions
where they have one (`gen_ai.*`), and Phoenix's span kinds (`openinference.span.kind`) so that it draws the tree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from agents.base import Agent, Critic
from managers.loop_break import LoopBreak
from session import telemetry
from session.config import GameConfiguration
from session.jericho_session import JerichoSession
from session.records import BROKEN_ENDINGS, SUMMARY_FILE, EpisodeOver, TurnRecord

SPAN_KIND = "openinference.span.kind"
UNHASHED_SECTIONS = ("files", "telemetry")
"""Sections that change where an episode is written or traced, not how it plays: left out of its hash."""


class Traced(Protocol):
    """What the trace reads of an episode (the Orchestrator)."""

    config: GameConfiguration
    session: JerichoSession
    agent: Agent
    critic: Critic
    loop_break: LoopBreak


def config_hash(config: GameConfiguration) -> str:
    """12 hex digits that differ whenever a setting that changes play differs (UNHASHED_SECTIONS left out)."""
    settings = {k: v for k, v in config.model_dump(mode="json").items() if k not in UNHASHED_SECTIONS}
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:12]


class EpisodeTrace:
    """The trace of one episode: `episode` around it, `turn` around each turn played live."""

    def __init__(self, traced: Traced):
        self.traced = traced
        self.turn_span: telemetry.Span = telemetry.NO_SPAN

    @contextmanager
    def episode(self, episode_id: str, folder: Path, resumed_turns: int) -> Iterator[None]:
        """The episode's span around the block, ended with summary.json's figures (read back from `folder` once the
        block wrote it, on every ending)."""
        if not telemetry.tracing():
            yield
            return
        with telemetry.span(
            f"episode {self.traced.session.game_name}", self._start(episode_id, resumed_turns), True
        ) as span:
            try:
                yield
            finally:
                _end(span, folder / SUMMARY_FILE)

    @contextmanager
    def turn(self, turn: int) -> Iterator[None]:
        """A turn's span around the block. An ending raised in it (EpisodeOver) is the span's last event, not its
        failure."""
        if not telemetry.tracing():
            yield
            return
        over: EpisodeOver | None = None
        with telemetry.span(f"turn {turn}", {"zorkgpt.turn": turn, SPAN_KIND: "CHAIN"}) as span:
            self.turn_span = span
            try:
                yield
            except EpisodeOver as exc:
                over = exc
                span.event("episode_over", {"ending": str(exc.ending), "detail": exc.detail or None})
            finally:
                self.turn_span = telemetry.NO_SPAN
        if over is not None:
            raise over

    def took(self, record: TurnRecord) -> None:
        """The turn's record, whole (its events the loop break's too), on the turn's span."""
        span = self.turn_span
        if span is telemetry.NO_SPAN:
            return
        progressed = self.traced.loop_break.last_progress_turn == record.turn
        span.set(
            {
                "zorkgpt.command": record.command,
                "zorkgpt.room": record.room_name_before,
                "zorkgpt.room_id": record.room_id_before,
                "zorkgpt.room_after": record.room_name_after,
                "zorkgpt.score": record.score_after,
                "zorkgpt.score_before": record.score_before,
                "zorkgpt.progressed": progressed,
                "zorkgpt.novelty": list(record.novelty),
                "zorkgpt.outcome": record.result_category,
                "zorkgpt.rejections": record.rejections,
                "zorkgpt.fallback": record.fallback,
                "zorkgpt.llm_calls": sum(record.llm_calls.values()),
                "zorkgpt.cost_usd": round(sum(record.llm_cost_usd.values()), 8),
                "zorkgpt.game_over": record.game_over,
            }
        )
        for event in record.events:
            span.event(str(event.get("event_type", "event")), {k: v for k, v in event.items() if k != "event_type"})

    def _start(self, episode_id: str, resumed_turns: int) -> dict[str, Any]:
        traced = self.traced
        config, llm = traced.config, traced.config.llm
        return {
            SPAN_KIND: "AGENT",
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": traced.agent.kind,
            "gen_ai.conversation.id": episode_id,
            "zorkgpt.episode_id": episode_id,
            "zorkgpt.game": traced.session.game_name,
            "zorkgpt.agent": traced.agent.kind,
            "zorkgpt.critic": traced.critic.kind,
            "zorkgpt.agent_model": llm.agent_model if traced.agent.prompted else None,
            "zorkgpt.critic_model": llm.critic_model if traced.critic.prompted else None,
            "zorkgpt.seed": config.gameplay.seed,
            "zorkgpt.max_turns": config.gameplay.max_turns_per_episode,
            "zorkgpt.config_hash": config_hash(config),
            "zorkgpt.resumed_after_turn": resumed_turns or None,
        }


def _end(span: telemetry.Span, summary_file: Path) -> None:
    """summary.json's figures on the episode's span; the span failed when the episode was cut off (BROKEN_ENDINGS)."""
    try:
        summary = json.loads(summary_file.read_text())
    except (OSError, ValueError):  # the episode never got as far as its summary: the exception says why
        return
    token_details = summary.get("token_details") or {}
    ending = summary.get("termination_reason")
    why = (summary.get("loop_break") or {}).get("stop_why") or summary.get("emulator_failure")
    span.set(
        {
            "zorkgpt.score": summary.get("final_score"),
            "zorkgpt.best_score": summary.get("best_score"),
            "zorkgpt.max_score": summary.get("max_score"),
            "zorkgpt.progress": summary.get("progress"),
            "zorkgpt.ending": ending,
            "zorkgpt.ending_why": why,
            "zorkgpt.turns": summary.get("turns"),
            "zorkgpt.rooms_visited": summary.get("rooms_visited"),
            "zorkgpt.llm_calls": sum((summary.get("llm_calls") or {}).values()),
            "zorkgpt.cost_usd": (summary.get("cost_usd") or {}).get("total"),
            "gen_ai.usage.input_tokens": sum(role["prompt"] for role in token_details.values()),
            "gen_ai.usage.output_tokens": sum(role["completion"] for role in token_details.values()),
            "zorkgpt.wall_seconds": summary.get("wall_seconds"),
        }
    )
    if ending in BROKEN_ENDINGS:
        span.fail(str(ending), why or str(ending))
