"""The one place that talks to an OpenAI-compatible server: timeouts, retries, failures, token accounting.

Everything the server sends is untrusted. Whatever goes wrong with a call (transport, HTTP status, a body that is
not a chat completion with text in it) leaves this module as LLMCallFailed or LLMUnavailable, never as a raw
exception. A reply leaves it as text that is bounded (MAX_REPLY_CHARS), encodable as UTF-8 and free of the API
key; an error message leaves it also free of terminal control characters.
"""

from __future__ import annotations

from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import NoReturn

import openai
from loguru import logger

from agents.base import LLMCallFailed, LLMUnavailable
from agents.reply import MAX_REPLY_CHARS
from session.config import LLMConfig
from session.events import EventType
from session.safe_text import encodable, printable, redact

REQUEST_LIMITS: dict = {}
"""base_url -> a semaphore bounding the requests in flight to that server across a batch's processes (empty: no
limit). A batch installs them in each worker (`batch.jobs.install_request_limits`)."""
MAX_DETAIL_CHARS = 300
"""Server text kept in a failure's message and log line."""


@dataclass
class Usage:
    """Counters by role (agent, critic)."""

    calls: Counter = field(default_factory=Counter)
    tokens: Counter = field(default_factory=Counter)
    """Total tokens (prompt + completion) the server reported."""
    prompt_tokens: Counter = field(default_factory=Counter)
    cached_tokens: Counter = field(default_factory=Counter)
    """Prompt tokens the provider served from its prompt cache (when it reports them)."""
    completion_tokens: Counter = field(default_factory=Counter)
    prompt_chars: Counter = field(default_factory=Counter)
    """Characters of every message sent: what a prompt costs before any tokenizer."""
    cost_usd: Counter = field(default_factory=Counter)
    """From the configured price table; a model without a price adds nothing (see `unpriced`)."""
    unpriced: set = field(default_factory=set)
    """Models called that have no price in the table."""
    failures: Counter = field(default_factory=Counter)
    """Failed calls by category: external trouble, not agent loops. Transport and status: timeout, connection,
    rate_limit, server_error, http_<status>; a 200 whose body is unusable: invalid_body, no_choices, no_message,
    empty_response, non_text_content; anything else the openai client raises: other."""

    def snapshot(self) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
        return dict(self.calls), dict(self.tokens), dict(self.cost_usd)

    def by_role(self) -> dict[str, dict[str, int]]:
        """Tokens by role: prompt (cached among them), completion and total."""
        return {
            role: {
                "prompt": self.prompt_tokens[role],
                "cached": self.cached_tokens[role],
                "completion": self.completion_tokens[role],
                "total": self.tokens[role],
            }
            for role in sorted(self.calls)
        }


class MalformedResponse(Exception):
    """The server answered, but not with a chat completion whose message is text; `category` says what is wrong."""

    def __init__(self, category: str, detail: str):
        super().__init__(detail)
        self.category = category


def failure_category(exc: Exception) -> str:
    if isinstance(exc, MalformedResponse):
        return exc.category
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limit"
    if isinstance(exc, openai.APIStatusError):
        return "server_error" if exc.status_code >= 500 else f"http_{exc.status_code}"
    if isinstance(exc, ValueError):  # JSONDecodeError, UnicodeDecodeError, a pydantic ValidationError
        return "invalid_body"
    return "other"


def reply_text(response: object) -> str:
    """The message text of a chat completion; MalformedResponse naming what is missing or wrong.

    Null content and blank content ("" or only whitespace) are the same failure, `empty_response`, an LLM call
    failure rather than an unparseable reply. Both mean the server produced no text (a content filter, a reasoning
    model that spent its whole token budget thinking, an overloaded proxy), which showing the model its "reply"
    with format guidance cannot fix. As a call failure it counts toward `max_consecutive_llm_failures`, so a model
    that keeps answering nothing ends the episode as `llm_unavailable` instead of playing `look` turn after turn.
    """
    if response is None or isinstance(response, (str, bytes, int, float, list, dict)):
        raise MalformedResponse("invalid_body", f"the body is a {type(response).__name__}, not a chat completion")
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse("no_choices", "the response has no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedResponse("no_message", "the first choice has no message")
    content = getattr(message, "content", None)
    if content is None or (isinstance(content, str) and not content.strip()):
        raise MalformedResponse("empty_response", "the server returned no message content")
    if not isinstance(content, str):
        raise MalformedResponse("non_text_content", f"the message content is a {type(content).__name__}, not text")
    return content


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class LLMClient:
    """Wraps `openai.OpenAI`. Retries and timeouts are the client's own (`max_retries`, `timeout`).

    Failures in a row are counted per role: one role's successes must not hide another role that is down (an
    agent answering every call would otherwise keep a dead critic from ever reaching the limit)."""

    def __init__(self, config: LLMConfig, api_key: str, max_consecutive_failures: int, client=None):
        self.config = config
        self.client = client or openai.OpenAI(
            base_url=config.base_url,
            api_key=api_key,
            timeout=config.timeout_seconds,
            max_retries=config.max_retries,
        )
        self.secrets = (api_key,)
        """Never to appear in a reply, an exception message or a log line of this client."""
        self.max_consecutive_failures = max_consecutive_failures
        self.failures_in_a_row: Counter = Counter()
        """Role -> calls of that role that failed since its last success."""
        self.usage = Usage()

    def chat(
        self,
        role: str,
        model: str,
        messages: list[dict],
        temperature: float,
        max_tokens: int,
        response_format: dict | None = None,
    ) -> str:
        """The reply text. Raises LLMCallFailed, or LLMUnavailable once one role's failures in a row reach the
        limit. `temperature` and `max_tokens` are sent as `[tool.zorkgpt.llm]` says servers want them."""
        self.usage.calls[role] += 1
        self.usage.prompt_chars[role] += sum(len(str(m.get("content", ""))) for m in messages)
        request: dict = {"model": model, "messages": messages}
        if self.config.send_temperature:
            request["temperature"] = temperature
        if self.config.token_limit_parameter != "none":
            request[self.config.token_limit_parameter] = max_tokens
        if response_format is not None:
            request["response_format"] = response_format
        try:
            with REQUEST_LIMITS.get(self.config.base_url) or nullcontext():  # held through the client's retries
                response = self.client.chat.completions.create(**request)
            self._count_tokens(role, model, response)
            text = reply_text(response)
        except (openai.OpenAIError, MalformedResponse, ValueError) as exc:
            self._fail(role, failure_category(exc), str(exc))
        self.failures_in_a_row[role] = 0
        return self._safe_reply(text)

    def _safe_reply(self, text: str) -> str:
        """`text` without the API key, cut to MAX_REPLY_CHARS, lone surrogates replaced.

        Redaction runs on the whole text first, so the cut can never leave a usable part of the key behind."""
        return encodable(redact(text, self.secrets)[:MAX_REPLY_CHARS])

    def _count_tokens(self, role: str, model: str, response: object) -> None:
        """Tokens the server says it spent, even when the reply turns out unusable, and their cost by the price
        table; nonsense counts are ignored."""
        usage = getattr(response, "usage", None)
        prompt = _count(getattr(usage, "prompt_tokens", None))
        completion = _count(getattr(usage, "completion_tokens", None))
        cached = min(prompt, _count(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)))
        total = _count(getattr(usage, "total_tokens", None)) or prompt + completion
        self.usage.tokens[role] += total
        self.usage.prompt_tokens[role] += prompt
        self.usage.cached_tokens[role] += cached
        self.usage.completion_tokens[role] += completion
        price = self.config.price_of(model)
        if price is None:
            self.usage.unpriced.add(model)
            return
        cached_price = price.input if price.cached_input is None else price.cached_input
        cost = ((prompt - cached) * price.input + cached * cached_price + completion * price.output) / 1_000_000
        self.usage.cost_usd[role] += cost

    def _fail(self, role: str, category: str, detail: str) -> NoReturn:
        """Count the failure for `role` and raise: LLMUnavailable at the limit, else LLMCallFailed.

        The server's text is made printable before redaction (so a control character inside the key cannot hide
        it from `redact`) and cut after it (so the cut cannot leave part of the key). The openai exception is not
        chained: its message holds the server's raw text, which a printed traceback would show."""
        detail = redact(printable(detail[:MAX_REPLY_CHARS]), self.secrets)[:MAX_DETAIL_CHARS]
        self.failures_in_a_row[role] += 1
        in_a_row = self.failures_in_a_row[role]
        self.usage.failures[category] += 1
        logger.bind(event_type=EventType.LLM_CALL_FAILED, role=role, category=category).warning(
            f"LLM {role} call failed ({category}), {in_a_row} in a row: {detail}"
        )
        if in_a_row >= self.max_consecutive_failures:
            message = f"the {role} role failed {in_a_row} LLM calls in a row (last: {category}: {detail})"
            raise LLMUnavailable(message) from None
        raise LLMCallFailed(role, category, detail) from None
