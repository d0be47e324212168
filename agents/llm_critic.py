"""The LLM critic: asks a model to score a proposed command; falls back to the offline critic on a bad reply."""

from __future__ import annotations

import json
import re

from agents.base import AgentContext
from agents.llm_client import LLMClient
from agents.offline_critic import OfflineCritic
from managers.context import CRITIC_SYSTEM_PROMPT, render_critic_prompt
from session.config import LLMConfig
from session.records import Judgement

_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_SCORE = re.compile(r"score\"?\s*[:=]\s*([01](?:\.\d+)?)", re.IGNORECASE)


def parse_judgement(reply: str) -> Judgement | None:
    """`{"score": 0.8, "reason": "..."}` (or a `score: 0.8` line) -> Judgement; None when unreadable."""
    match = _JSON_OBJECT.search(reply or "")
    if match:
        try:
            data = json.loads(match.group(0))
            score = float(data["score"])
            reason = str(data.get("reason", "")).strip().splitlines()[0] if data.get("reason") else "no reason given"
            if 0.0 <= score <= 1.0:
                return Judgement(score, reason[:200], source="llm")
        except (ValueError, KeyError, TypeError, IndexError):
            pass
    match = _SCORE.search(reply or "")
    if match and 0.0 <= float(match.group(1)) <= 1.0:
        return Judgement(float(match.group(1)), "score given without a reason", source="llm")
    return None


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
