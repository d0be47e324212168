"""The LLM critic: asks a model to score a proposed command; falls back to the offline critic on a bad reply."""

from __future__ import annotations

import re

from agents.base import AgentContext
from agents.llm_client import LLMClient
from agents.offline_critic import OfflineCritic
from agents.reply import MAX_REPLY_CHARS, json_object
from managers.context import CRITIC_SYSTEM_PROMPT, render_critic_prompt
from session.config import LLMConfig
from session.records import Judgement
from session.safe_text import printable

MAX_REASON_CHARS = 200
# `score: 0.8` outside JSON; the lookahead refuses `score: 10` read as 1 and `score: 0.5x` read as 0
_SCORE = re.compile(r"score\"?\s*[:=]\s*(\d+(?:\.\d+)?)(?!\.?\w)", re.IGNORECASE)


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


class LLMCritic:
    kind = "llm"

    def __init__(self, client: LLMClient, config: LLMConfig):
        self.client = client
        self.config = config
        self.fallback = OfflineCritic()

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        messages = [
            {"role": "system", "content": CRITIC_SYSTEM_PROMPT},
            {"role": "user", "content": render_critic_prompt(context, command)},
        ]
        reply = self.client.chat(
            "critic", self.config.critic_model, messages, self.config.critic_temperature, self.config.critic_max_tokens
        )
        judgement = parse_judgement(reply)
        if judgement is None:
            offline = self.fallback.evaluate(command, context)
            return Judgement(offline.score, f"[critic reply unreadable, offline score] {offline.reason}", "offline")
        return judgement
