"""The LLM critic: asks a model to score a proposed command (and, when asked, to review the objectives in the same
call); falls back to the offline critic on a bad reply."""

from __future__ import annotations

import re

from agents.llm_client import LLMClient
from agents.offline_critic import OfflineCritic
from agents.prompts import (
    REVIEW_NEW_OBJECTIVES, SYNTHESIS_NOTES, critic_system_prompt, render_critic_prompt, render_synthesis,
)  # fmt: skip
from agents.reply import MAX_REPLY_CHARS, json_object
from session.config import LLMConfig
from session.context import AgentContext, ObjectiveReview
from session.records import Judgement
from session.safe_text import printable

MAX_REASON_CHARS = 200
MAX_OBJECTIVE_CHARS = 160
MAX_EVIDENCE_CHARS = 300
MAX_CLAIMS = 5
# `score: 0.8` outside JSON; the lookahead refuses `score: 10` read as 1 and `score: 0.5x` read as 0
_SCORE = re.compile(r"score\"?\s*[:=]\s*(\d+(?:\.\d+)?)(?!\.?\w)", re.IGNORECASE)

MAX_NOTE_CHARS = 200
"""A strategic note's length at the most."""


def parse_judgement(reply: str | None) -> Judgement | None:
    """`{"score": 0.8, "reason": "..."}` (or a `score: 0.8` line) -> Judgement; None when unreadable.

    The score must be a real number in [0, 1]. JSON `true`/`false` are refused although Python counts them as
    1 and 0: a critic that answers a yes/no has not scored the move. A JSON object that names a score decides
    alone; the `score:` line is only read when there is no such object."""
    text = reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else ""
    data = json_object(text)
    if data is not None and "score" in data:
        score = _unit_score(data["score"])
        return None if score is None else Judgement(score, _reason(data.get("reason")), source="llm")
    match = _SCORE.search(text)
    score = _unit_score(float(match.group(1))) if match else None
    return None if score is None else Judgement(score, "score given without a reason", source="llm")


def _unit_score(value: object) -> float | None:
    """`value` as a float when it is a real number in [0, 1] (never a bool, a string, NaN or infinity); else None.

    The range is checked before converting, so a 4,000-digit integer is refused rather than overflowing."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value)


def _reason(value: object) -> str:
    """The first line of the critic's reason, printable and at most MAX_REASON_CHARS long.

    Only a string is a reason: rendering an arbitrary JSON value could be huge or nested past the recursion limit."""
    lines = printable(value).strip().splitlines() if isinstance(value, str) else []
    first = lines[0].strip() if lines else ""
    return first[:MAX_REASON_CHARS] or "no reason given"


def parse_review(reply: str | None) -> ObjectiveReview:
    """The objective review in a verdict's JSON (`completed`, `new_objectives`); empty parts when absent or
    malformed. Only strings count: any other JSON value is skipped, never rendered."""
    data = json_object(reply[:MAX_REPLY_CHARS] if isinstance(reply, str) else "") or {}
    claims = data.get("completed") if isinstance(data.get("completed"), list) else []
    completed = []
    for claim in claims[:MAX_CLAIMS]:
        if isinstance(claim, dict) and isinstance(claim.get("objective"), str) and isinstance(claim.get("evidence"), str):
            completed.append((_line(claim["objective"], MAX_OBJECTIVE_CHARS), _line(claim["evidence"], MAX_EVIDENCE_CHARS)))
    new = data.get("new_objectives") if isinstance(data.get("new_objectives"), list) else []
    proposed = [_line(item, MAX_OBJECTIVE_CHARS) for item in new[:REVIEW_NEW_OBJECTIVES] if isinstance(item, str)]
    return ObjectiveReview(tuple(completed), tuple(p for p in proposed if len(p) >= 3))


def _line(text: str, limit: int) -> str:
    return " ".join(printable(text).split())[:limit]


class LLMCritic:
    kind = "llm"
    prompted = True

    def __init__(self, client: LLMClient, config: LLMConfig, game: str = ""):
        self.client = client
        self.config = config
        self.system_prompt = critic_system_prompt(game)
        self.fallback = OfflineCritic()
        self.review: ObjectiveReview | None = None
        """The objective review of the last call that asked for one, until the orchestrator drains it."""

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": render_critic_prompt(context, command)},
        ]
        reply = self.client.chat(
            "critic", self.config.critic_model, messages, self.config.critic_temperature, self.config.critic_max_tokens
        )
        if context.review_objectives:
            self.review = parse_review(reply)
        judgement = parse_judgement(reply)
        if judgement is None:
            offline = self.fallback.evaluate(command, context)
            return Judgement(offline.score, f"[critic reply unreadable, offline score] {offline.reason}", "offline")
        return judgement

    def synthesize(self, facts: list[str]) -> list[tuple[str, int]]:
        """One call at an episode's end: (note, turn) pairs for the next episodes, each to be checked against the
        records by the caller. LLMCallFailed when the call fails."""
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": render_synthesis(facts)},
        ]
        reply = self.client.chat(
            "critic", self.config.critic_model, messages, self.config.critic_temperature, self.config.critic_max_tokens
        )
        data = json_object(reply) or {}
        notes = data.get("notes") if isinstance(data.get("notes"), list) else []
        kept = []
        for item in notes[:SYNTHESIS_NOTES]:
            if isinstance(item, dict) and isinstance(item.get("note"), str) and isinstance(item.get("turn"), int):
                kept.append((printable(item["note"]).strip()[:MAX_NOTE_CHARS], item["turn"]))
        return [(note, turn) for note, turn in kept if note]

    def drain_review(self) -> ObjectiveReview | None:
        review, self.review = self.review, None
        return review
