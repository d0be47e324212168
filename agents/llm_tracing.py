"""The span of one LLM call (session/telemetry.py), named and filled as OpenTelemetry's GenAI conventions say: the
operation and models, the tokens (reasoning and cached ones among them), the finish reason, the error's type, and
beside them the harness's own figures (the role, the cost by the price table, the client's retries, why the harness
asked again). The prompt and the reply only when `capture_content` is on. Nothing here runs when nothing is traced.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from session import telemetry

OPERATION = "chat"
PROVIDER = "openai"
"""The API the calls speak (`gen_ai.provider.name`): OpenAI's chat completions, whoever serves them."""


@dataclass(frozen=True)
class Spent:
    """What one call's reply cost, as the server counted it and the price table priced it."""

    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cached_tokens: int
    total_tokens: int
    cost_usd: float | None
    """None: the model has no price."""


class CallSpan:
    """What the client tells the span of one call as it goes: the answer, a failure, the reply."""

    def __init__(self, span: telemetry.Span):
        self.span = span

    def answered(self, response: object, spent: Spent, retries: int) -> None:
        reason = _finish_reason(response)
        self.span.set(
            {
                "gen_ai.response.model": _text(getattr(response, "model", None)),
                "gen_ai.response.id": _text(getattr(response, "id", None)),
                "gen_ai.response.finish_reasons": [reason] if reason else None,
                "gen_ai.usage.input_tokens": spent.input_tokens,
                "gen_ai.usage.output_tokens": spent.output_tokens,
                "gen_ai.usage.reasoning.output_tokens": spent.reasoning_tokens,
                "gen_ai.usage.cache_read.input_tokens": spent.cached_tokens,
                "zorkgpt.cost_usd": round(spent.cost_usd, 10) if spent.cost_usd is not None else None,
                "zorkgpt.llm.retries": retries,
            }
        )

    def failed(self, category: str, detail: str) -> None:
        self.span.fail(category, detail)

    def replied(self, messages: list[dict], text: str, response: object) -> None:
        """The prompt and the reply, only when `capture_content` is on (the API key redacted by the span)."""
        if not telemetry.capture_content():
            return
        sent = [
            {"role": m.get("role"), "parts": [{"type": "text", "content": str(m.get("content"))}]} for m in messages
        ]
        said = [{"role": "assistant", "parts": [{"type": "text", "content": text}]}]
        if reason := _finish_reason(response):
            said[0]["finish_reason"] = reason
        self.span.set(
            {
                "gen_ai.input.messages": json.dumps(sent),
                "gen_ai.output.messages": json.dumps(said),
                "input.value": str(messages[-1].get("content")) if messages else "",
                "output.value": text,
            }
        )


NO_CALL = CallSpan(telemetry.NO_SPAN)


@contextmanager
def call_span(
    role: str, task: str, request: dict, base_url: str, attempt: int, asked_again: str | None
) -> Iterator[CallSpan]:
    """The span of one request of `role` (agent, critic: what the usage counts it under) for `task` (agent, critic,
    objectives, notes), the `attempt`-th of its `chat`; `asked_again`: why the harness asked again (a parameter the
    server refused, a reply its cap cut)."""
    if not telemetry.tracing():
        yield NO_CALL
        return
    model = request["model"]
    with telemetry.span(
        f"{OPERATION} {model}", _request_attributes(role, task, request, base_url, attempt, asked_again)
    ) as span:
        yield CallSpan(span)


def _request_attributes(
    role: str, task: str, request: dict, base_url: str, attempt: int, asked_again: str | None
) -> dict[str, Any]:
    where = urlsplit(base_url)
    cap = request.get("max_completion_tokens", request.get("max_tokens"))
    return {
        "openinference.span.kind": "LLM",
        "gen_ai.operation.name": OPERATION,
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.request.model": request["model"],
        "gen_ai.request.max_tokens": cap,
        "gen_ai.request.temperature": request.get("temperature"),
        "gen_ai.output.type": "json" if request.get("response_format") else "text",
        "server.address": where.hostname,
        "server.port": where.port or (443 if where.scheme == "https" else 80),
        "zorkgpt.role": task,
        "zorkgpt.usage_role": role,
        "zorkgpt.llm.attempt": attempt,
        "zorkgpt.llm.asked_again": asked_again,
        "zorkgpt.llm.reasoning_effort": request.get("reasoning_effort"),
    }


def _finish_reason(response: object) -> str | None:
    choices = getattr(response, "choices", None)
    reason = getattr(choices[0], "finish_reason", None) if isinstance(choices, list) and choices else None
    return reason if isinstance(reason, str) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
