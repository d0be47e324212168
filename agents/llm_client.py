"""The one place that talks to an OpenAI-compatible server: timeouts, retries, failures, token accounting."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import openai
from loguru import logger

from agents.base import LLMCallFailed, LLMUnavailable
from session.config import LLMConfig


@dataclass
class Usage:
    """Counters by role (agent, critic, objectives)."""

    calls: Counter = field(default_factory=Counter)
    tokens: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    """Failed calls by category (timeout, rate_limit, server_error, connection, other): external, not agent loops."""

    def snapshot(self) -> tuple[dict[str, int], dict[str, int]]:
        return dict(self.calls), dict(self.tokens)


def failure_category(exc: Exception) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limit"
    if isinstance(exc, openai.APIStatusError):
        return "server_error" if exc.status_code >= 500 else f"http_{exc.status_code}"
    return "other"


class LLMClient:
    """Wraps `openai.OpenAI`. Retries and timeouts are the client's own (`max_retries`, `timeout`)."""

    def __init__(self, config: LLMConfig, api_key: str, max_consecutive_failures: int, client=None):
        self.config = config
        self.client = client or openai.OpenAI(
            base_url=config.base_url,
            api_key=api_key,
            timeout=config.timeout_seconds,
            max_retries=config.max_retries,
        )
        self.max_consecutive_failures = max_consecutive_failures
        self.consecutive_failures = 0
        self.usage = Usage()

    def chat(self, role: str, model: str, messages: list[dict], temperature: float, max_tokens: int) -> str:
        """The reply text. Raises LLMCallFailed, or LLMUnavailable once failures in a row reach the limit."""
        self.usage.calls[role] += 1
        try:
            response = self.client.chat.completions.create(
                model=model, messages=messages, temperature=temperature, max_tokens=max_tokens
            )
            text = response.choices[0].message.content if response.choices else None
        except (openai.OpenAIError, IndexError, AttributeError, TypeError) as exc:
            self._fail(role, failure_category(exc), str(exc))
        if text is None:
            self._fail(role, "empty_response", "the server returned no message content")
        self.consecutive_failures = 0
        usage = getattr(response, "usage", None)
        if usage is not None and usage.total_tokens:
            self.usage.tokens[role] += int(usage.total_tokens)
        return text

    def _fail(self, role: str, category: str, detail: str):
        self.consecutive_failures += 1
        self.usage.failures[category] += 1
        logger.bind(event_type="llm_call_failed", role=role, category=category).warning(
            f"LLM {role} call failed ({category}), {self.consecutive_failures} in a row: {detail[:200]}"
        )
        if self.consecutive_failures >= self.max_consecutive_failures:
            raise LLMUnavailable(
                f"{self.consecutive_failures} LLM calls failed in a row (last: {role}, {category}: {detail[:200]})"
            )
        raise LLMCallFailed(role, category, detail)
