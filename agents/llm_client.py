"""The one place that talks to an OpenAI-compatible server: timeouts, retries, failures, token accounting.

Everything the server sends is untrusted. Whatever goes wrong with a call (transport, HTTP status, a body that is
not a chat completion with text in it) leaves this module as LLMCallFailed or LLMUnavailable, never as a raw
exception. A reply leaves it as text that is bounded (MAX_REPLY_CHARS), encodable as UTF-8 and free of the API
key; an error message leaves it also free of terminal control characters.
"""

from __future__ import annotations

import re
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import NoReturn

import openai
from loguru import logger

from agents.base import LLMCallFailed, LLMUnavailable
from agents.llm_settings import MAX_TOKEN_CAP, REASONING_MAX_TOKENS, LLMConfig
from agents.llm_tracing import Spent, call_span
from agents.reply import MAX_REPLY_CHARS, split_reasoning
from session import telemetry
from session.events import EventType
from session.safe_text import encodable, printable, redact

REQUEST_LIMITS: dict = {}
"""base_url -> a semaphore bounding the requests in flight to that server across a batch's processes (empty: no
limit). A batch installs them in each worker (`batch.jobs.install_request_limits`)."""
MAX_DETAIL_CHARS = 300
"""Server text kept in a failure's message and log line."""
TOKEN_PARAMETERS = ("max_tokens", "max_completion_tokens")
"""The two names a reply cap is sent under."""
ADJUSTABLE_PARAMETERS = (*TOKEN_PARAMETERS, "temperature", "reasoning_effort")
"""What a call can do without when a server refuses it for a model (a 400 naming it): OpenAI's reasoning models
refuse `max_tokens` and any temperature but 1; a chat model refuses `reasoning_effort`."""


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
    reasoning_tokens: Counter = field(default_factory=Counter)
    """Completion tokens the server says the model spent reasoning (hidden reasoning, when it reports them)."""
    adjustments: Counter = field(default_factory=Counter)
    """Calls asked again at once, by why: a refused parameter (its name) or a reply cut by its cap (`cap`)."""
    failures: Counter = field(default_factory=Counter)
    """Failed calls by category: external trouble, not agent loops. Transport and status: timeout, connection,
    rate_limit, server_error, http_<status>; a 200 whose body is unusable: invalid_body, no_choices, no_message,
    empty_response, non_text_content; anything else the openai client raises: other."""

    def snapshot(self) -> tuple[dict[str, int], dict[str, int], dict[str, float]]:
        return dict(self.calls), dict(self.tokens), dict(self.cost_usd)

    def by_role(self) -> dict[str, dict[str, int]]:
        """Tokens by role: prompt (cached among them), completion (reasoning among them) and total."""
        return {
            role: {
                "prompt": self.prompt_tokens[role],
                "cached": self.cached_tokens[role],
                "completion": self.completion_tokens[role],
                "reasoning": self.reasoning_tokens[role],
                "total": self.tokens[role],
            }
            for role in sorted(self.calls)
        }


class MalformedResponse(Exception):
    """The server answered, but not with a chat completion whose message is text; `category` says what is wrong."""

    def __init__(self, category: str, detail: str, response: object = None):
        super().__init__(detail)
        self.category = category
        self.response = response


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
        raise MalformedResponse("empty_response", "the server returned no message content", response)
    if not isinstance(content, str):
        raise MalformedResponse("non_text_content", f"the message content is a {type(content).__name__}, not text")
    return content


def finish_reason(response: object) -> str | None:
    """Why the server stopped the first choice (`stop`, `length`, ...), None when it does not say."""
    choices = getattr(response, "choices", None)
    reason = getattr(choices[0], "finish_reason", None) if isinstance(choices, list) and choices else None
    return reason if isinstance(reason, str) else None


def response_of(exc: Exception) -> object:
    """The response a MalformedResponse was read from (None for other failures)."""
    return exc.response if isinstance(exc, MalformedResponse) else None


def _names(message: str, parameter: str) -> bool:
    """Whether a server's error message names `parameter` as a word (`'max_tokens'` is not in
    `max_completion_tokens`)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(parameter)}(?![A-Za-z0-9_])", message) is not None


def strict_object(properties: dict) -> dict:
    """A JSON-schema object that holds exactly `properties`, every one required (strict structured outputs require
    every field)."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def json_schema(name: str, properties: dict) -> dict:
    """A strict `response_format` of an object of `properties` (OpenAI's structured outputs; vLLM, llama.cpp and
    Ollama take the same shape)."""
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": strict_object(properties)}}


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class LLMClient:
    """Wraps `openai.OpenAI`. Retries and timeouts are the client's own (`max_retries`, `timeout`).

    Failures in a row are counted per role: one role's successes must not hide another role that is down (an
    agent answering every call would otherwise keep a dead critic from ever reaching the limit)."""

    def __init__(self, config: LLMConfig, api_key: str, max_consecutive_failures: int, client=None):
        self.config = config
        self.retries_taken = 0
        """The openai client's own retries of the request in progress (seen on its requests when traced)."""
        self.client = client or openai.OpenAI(
            base_url=config.base_url,
            api_key=api_key,
            timeout=config.timeout_seconds,
            max_retries=config.max_retries,
            **self._retry_hook(),
        )
        self.secrets = (api_key,)
        """Never to appear in a reply, an exception message or a log line of this client."""
        self.max_consecutive_failures = max_consecutive_failures
        self.failures_in_a_row: Counter = Counter()
        """Role -> calls of that role that failed since its last success."""
        self.usage = Usage()
        self.refused: dict[str, set[str]] = {}
        """Model -> parameters the server refused for it (a 400 naming them): never sent to it again."""
        self.token_parameters: dict[str, str] = {}
        """Model -> the name its reply cap is sent under, when a refusal changed it from the configured one."""
        self.unstructured: set[str] = set()
        """Roles whose JSON schema the server refused (a 400): they ask in the prompt only (`chat_structured`)."""
        self.grown_caps: dict[tuple[str, str], int] = {}
        """(role, model) -> the cap a reply cut before it said anything was asked again with: the least from then on
        (a model that reasons longer than its cap once will again; a cap is a ceiling, not a cost)."""

    def chat(
        self,
        role: str,
        model: str,
        messages: list[dict],
        temperature: float,
        max_tokens: int,
        response_format: dict | None = None,
        task: str | None = None,
    ) -> str:
        """The reply text (`task`: what the call is for, on its span: agent, critic, objectives, notes; default
        `role`). Raises LLMCallFailed, or LLMUnavailable once one role's failures in a row reach the
        limit. `temperature`, `max_tokens` and the reasoning effort are sent as `[tool.zorkgpt.llm]` says this model
        wants them (its family's way when left at "auto"), less what the server refused for this model before.

        Two things are asked again at once, neither counted as a failure: a request the server refused for naming
        a parameter this model does not take (`max_tokens` where it wants `max_completion_tokens`, a temperature,
        `reasoning_effort`), without it (once per parameter and model); and a reply the cap cut before it said
        anything (finish_reason `length`, and no text or reasoning only: a reasoning model spent the cap
        thinking), with the cap `length_retry_factor` times larger, once."""
        self.usage.prompt_chars[role] += sum(len(str(m.get("content", ""))) for m in messages)
        max_tokens = max(max_tokens, self.grown_caps.get((role, model), 0))
        grown = False
        attempt, asked_again = 0, None
        while True:
            request = self._request(model, messages, temperature, max_tokens, response_format)
            self.usage.calls[role] += 1
            attempt += 1
            failed: Exception | None = None
            with call_span(role, task or role, request, self.config.base_url, attempt, asked_again) as call:
                self.retries_taken = 0
                try:
                    with REQUEST_LIMITS.get(self.config.base_url) or nullcontext():  # held through the client's retries
                        response = self.client.chat.completions.create(**request)
                    call.answered(response, self._count_tokens(role, model, response), self.retries_taken)
                    text = reply_text(response)
                    call.replied(messages, text, response)
                except (openai.OpenAIError, MalformedResponse, ValueError) as exc:
                    failed, response, text = exc, response_of(exc), ""
                    call.failed(failure_category(exc), str(exc)[:MAX_DETAIL_CHARS])
            if isinstance(failed, openai.BadRequestError):
                if self._drop_refused(role, model, request, str(failed)):
                    asked_again = "refused parameter"
                    continue
                self._fail(role, failure_category(failed), str(failed))
            said_nothing = failed is not None or not split_reasoning(text)[1].strip()
            if said_nothing and not grown and (larger := self._larger_cap(request, response)):
                grown, max_tokens = True, self._grow(role, model, max_tokens, larger)
                asked_again = "cap"
                continue
            if failed is not None:
                self._fail(role, failure_category(failed), str(failed))
            break
        self.failures_in_a_row[role] = 0
        return self._safe_reply(text)

    def chat_structured(
        self,
        role: str,
        model: str,
        messages: list[dict],
        temperature: float,
        max_tokens: int,
        schema: dict | None,
        task: str | None = None,
    ) -> str:
        """`chat`, asking the server to enforce `schema` (a `response_format`) while it takes one for this role: a 400
        to a request with a schema turns the schema off for the role for the rest of the episode, and the same call
        is made at once without it (servers that know no `json_schema` refuse it so). The reply is read by the same
        parser either way."""
        if schema is not None and role not in self.unstructured:
            try:
                return self.chat(role, model, messages, temperature, max_tokens, response_format=schema, task=task)
            except LLMCallFailed as exc:
                if exc.category != "http_400":
                    raise
                self.unstructured.add(role)
                logger.bind(event_type=EventType.LLM_CALL_ADJUSTED, role=role, model=model, parameter="schema").warning(
                    f"the server refused the {role}'s JSON schema: the {role} asks in the prompt only from now on"
                )
        return self.chat(role, model, messages, temperature, max_tokens, task=task)

    def _request(self, model, messages, temperature, max_tokens, response_format) -> dict:
        refused = self.refused.get(model, set())
        request: dict = {"model": model, "messages": messages}
        if self.config.sends_temperature_to(model) and "temperature" not in refused:
            request["temperature"] = temperature
        parameter = self.token_parameters.get(model) or self.config.token_parameter_for(model)
        if parameter != "none":
            request[parameter] = max_tokens
        effort = self.config.reasoning_effort_for(model)
        if effort is not None and "reasoning_effort" not in refused:
            request["reasoning_effort"] = effort
        if response_format is not None:
            request["response_format"] = response_format
        return request

    def _drop_refused(self, role: str, model: str, request: dict, message: str) -> bool:
        """Whether the server's 400 names a parameter the request sent that this model does without (the token
        cap's name, a temperature, a reasoning effort): then it is left out, or the cap sent under the other name,
        for this model from now on, and the call made again. Each parameter once per model."""
        refused = self.refused.setdefault(model, set())
        for parameter in ADJUSTABLE_PARAMETERS:
            if parameter not in request or parameter in refused or not _names(message, parameter):
                continue
            refused.add(parameter)
            if parameter in TOKEN_PARAMETERS:
                other = next(name for name in TOKEN_PARAMETERS if name != parameter)
                self.token_parameters[model] = other if other not in refused else "none"
                change = f"sends its reply cap as {self.token_parameters[model]}"
            else:
                change = f"sends no {parameter}"
            detail = redact(printable(message[:MAX_REPLY_CHARS]), self.secrets)[:MAX_DETAIL_CHARS]
            logger.bind(event_type=EventType.LLM_CALL_ADJUSTED, role=role, model=model, parameter=parameter).warning(
                f"the server refused {parameter} for {model}; the harness now {change}: {detail}"
            )
            self.usage.adjustments[parameter] += 1
            return True
        return False

    def _larger_cap(self, request: dict, response: object) -> int | None:
        """The cap to ask again with when the reply was cut by the cap (finish_reason `length`) and the request sent
        one that can grow; else None."""
        sent = next((request[name] for name in TOKEN_PARAMETERS if name in request), None)
        if sent is None or finish_reason(response) != "length":
            return None
        larger = min(max(sent * self.config.length_retry_factor, REASONING_MAX_TOKENS), MAX_TOKEN_CAP)
        return larger if larger > sent else None

    def _grow(self, role: str, model: str, cap: int, larger: int) -> int:
        self.grown_caps[(role, model)] = larger
        logger.bind(event_type=EventType.LLM_CALL_ADJUSTED, role=role, model=model, parameter="cap").info(
            f"the {role}'s reply was cut by its cap ({cap} tokens) before it said anything: asked once more with "
            f"{larger}, kept for its later calls"
        )
        self.usage.adjustments["cap"] += 1
        return larger

    def _safe_reply(self, text: str) -> str:
        """`text` without the API key, cut to MAX_REPLY_CHARS, lone surrogates replaced.

        Redaction runs on the whole text first, so the cut can never leave a usable part of the key behind."""
        return encodable(redact(text, self.secrets)[:MAX_REPLY_CHARS])

    def _retry_hook(self) -> dict:
        """The openai client's HTTP client, when calls are traced: its own, with a hook that reads how many times it
        retried each request (`retries_taken`); nothing otherwise."""
        if not telemetry.tracing():
            return {}
        return {"http_client": openai.DefaultHttpxClient(event_hooks={"request": [self._note_request]})}

    def _note_request(self, request) -> None:
        """The openai client's request hook: how many times it has retried the request it sends."""
        count = request.headers.get("x-stainless-retry-count", "0")
        self.retries_taken = int(count) if count.isdigit() else 0

    def _count_tokens(self, role: str, model: str, response: object) -> Spent:
        """Tokens the server says it spent, even when the reply turns out unusable, and their cost by the price
        table; nonsense counts are ignored. What this call spent."""
        usage = getattr(response, "usage", None)
        prompt = _count(getattr(usage, "prompt_tokens", None))
        completion = _count(getattr(usage, "completion_tokens", None))
        cached = min(prompt, _count(getattr(getattr(usage, "prompt_tokens_details", None), "cached_tokens", None)))
        total = _count(getattr(usage, "total_tokens", None)) or prompt + completion
        self.usage.tokens[role] += total
        self.usage.prompt_tokens[role] += prompt
        self.usage.cached_tokens[role] += cached
        self.usage.completion_tokens[role] += completion
        details = getattr(usage, "completion_tokens_details", None)
        reasoning = min(completion, _count(getattr(details, "reasoning_tokens", None)))
        self.usage.reasoning_tokens[role] += reasoning
        price = self.config.price_of(model)
        if price is None:
            self.usage.unpriced.add(model)
            return Spent(prompt, completion, reasoning, cached, total, None)
        cached_price = price.input if price.cached_input is None else price.cached_input
        cost = ((prompt - cached) * price.input + cached * cached_price + completion * price.output) / 1_000_000
        self.usage.cost_usd[role] += cost
        return Spent(prompt, completion, reasoning, cached, total, cost)

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
