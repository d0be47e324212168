"""The LLM's settings, `[tool.zorkgpt.llm]`: the server, the models of both roles and how each model is called
(`ModelFamily`), and what its tokens cost (`ModelPrice`). Registered as a section of the configuration when imported
(session.config.BUILT_IN_MODULES imports it by name)."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field, field_validator

from session.config import GameConfiguration, Section


class ModelPrice(Section):
    """US dollars per million tokens of one model."""

    input: float = Field(ge=0.0, le=10_000.0)
    """Prompt tokens not served from the provider's prompt cache."""
    cached_input: float | None = Field(None, ge=0.0, le=10_000.0)
    """Prompt tokens served from the cache (None: the input price)."""
    output: float = Field(ge=0.0, le=10_000.0)
    """Completion tokens (reasoning tokens included, as providers bill them)."""


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini": ModelPrice(input=0.15, cached_input=0.075, output=0.60),
    "gpt-4o": ModelPrice(input=2.50, cached_input=1.25, output=10.00),
    "gpt-4.1-nano": ModelPrice(input=0.10, cached_input=0.025, output=0.40),
    "gpt-4.1-mini": ModelPrice(input=0.40, cached_input=0.10, output=1.60),
    "gpt-4.1": ModelPrice(input=2.00, cached_input=0.50, output=8.00),
    "o4-mini": ModelPrice(input=1.10, cached_input=0.275, output=4.40),
}
"""OpenAI's list prices (USD per million tokens) when this was written: check your provider's, and set yours."""


MAX_TOKEN_CAP = 131_072
"""The largest reply cap the configuration takes (a reasoning model's hidden reasoning counts against it)."""
REASONING_MAX_TOKENS = 8000
"""The reply cap of the reasoning families, and the least a reply cut before it said anything is asked again with:
room for thousands of tokens of reasoning, as OpenAI advises for its reasoning models."""
TokenLimitParameter = Literal["max_tokens", "max_completion_tokens", "none"]
ReasoningEffort = Literal["minimal", "low", "medium", "high"]


class ModelFamily(Section):
    """How the models of one family are called when `[tool.zorkgpt.llm]` leaves the call's settings at "auto"."""

    match: list[str] = Field(min_length=1)
    """Model names of the family. A model belongs to it when its name, after any provider prefix (`openai/o4-mini`
    on OpenRouter) and lower-cased, begins with one of these followed by nothing or by `-`, `.`, `:` or `@`
    (`o4-mini`, `gpt-5.1`, Ollama's `qwq:32b`; not `o40`)."""
    token_limit_parameter: TokenLimitParameter = "max_tokens"
    """How the reply cap is sent: OpenAI's reasoning models refuse `max_tokens` and take `max_completion_tokens`."""
    send_temperature: bool = True
    """False for models that refuse any temperature but the default (OpenAI's reasoning models)."""
    max_tokens: int = Field(300, ge=1, le=MAX_TOKEN_CAP)
    """The reply cap of both roles. A model that reasons before it answers spends its reasoning from the cap (hidden
    or in a think block), so its cap leaves room for that."""
    takes_reasoning_effort: bool = False
    """The family takes `reasoning_effort`: the configured one is sent to it, to no other model."""


DEFAULT_FAMILIES: dict[str, ModelFamily] = {
    "o-series": ModelFamily(
        match=["o1", "o3", "o4"],
        token_limit_parameter="max_completion_tokens",
        send_temperature=False,
        max_tokens=REASONING_MAX_TOKENS,
        takes_reasoning_effort=True,
    ),
    "gpt-5": ModelFamily(
        match=["gpt-5"],
        token_limit_parameter="max_completion_tokens",
        send_temperature=False,
        max_tokens=REASONING_MAX_TOKENS,
        takes_reasoning_effort=True,
    ),
    "deepseek-r1": ModelFamily(match=["deepseek-r1", "deepseek-reasoner"], max_tokens=REASONING_MAX_TOKENS),
    "qwq": ModelFamily(match=["qwq", "qwen3"], max_tokens=REASONING_MAX_TOKENS),
    "gpt-oss": ModelFamily(match=["gpt-oss"], max_tokens=REASONING_MAX_TOKENS),
}
"""Model families whose calls differ from a chat model's. OpenAI documents that its reasoning models (o-series,
gpt-5) take `max_completion_tokens`, no temperature but 1, and `reasoning_effort`, and advises leaving room for
reasoning (thousands of tokens); the open reasoning models (DeepSeek-R1, QwQ and Qwen3 in thinking mode, gpt-oss)
take the usual parameters and think in the reply or beside it. A cap is only a ceiling: a short answer costs what it
says."""
CHAT_FAMILY = ModelFamily(match=["*"])
"""Any model no family matches: a chat model (`max_tokens`, a temperature, a short cap)."""


def _family_name_matches(model: str, prefix: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]
    prefix = prefix.lower()
    return name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in "-.:@")


class LLMConfig(Section):
    """`[tool.zorkgpt.llm]`: how the agent and critic roles reach an OpenAI-compatible server."""

    base_url: str = "https://api.openai.com/v1"
    """Any OpenAI-compatible endpoint (OpenAI, OpenRouter, vLLM, llama.cpp server, Ollama's /v1, ...)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key. No key set: the offline agent and critic are used."""
    agent_model: str = "gpt-4o-mini"
    """Model that proposes game commands."""
    critic_model: str = "gpt-4o-mini"
    """Model that scores proposed commands (and, in the same call, reviews the objectives)."""
    agent_reply: Literal["thought", "command"] = "thought"
    """`thought`: the agent writes a short thought, then its command (JSON); `command`: the bare command only."""
    response_format: Literal["json_schema", "text"] = "json_schema"
    """`json_schema`: ask the server to enforce the JSON of every call (the agent's thought and command, the critic's
    verdict, the episode-end notes: OpenAI, vLLM, llama.cpp and Ollama support it); on a 400 that role asks in the
    prompt only for the rest of the episode. `text`: ask in the prompt only. Either way the one reply parser
    validates the reply."""
    agent_temperature: float = Field(0.7, ge=0.0, le=2.0)
    """Sampling temperature of the agent."""
    critic_temperature: float = Field(0.2, ge=0.0, le=2.0)
    """Sampling temperature of the critic."""
    send_temperature: bool | Literal["auto"] = "auto"
    """Send the roles' temperatures. `auto`: as the model's family says (`model_families`: OpenAI's reasoning models
    refuse any temperature but 1)."""
    agent_max_tokens: int | Literal["auto"] = "auto"
    """Reply cap for the agent (a short thought and a command). `auto`: the model's family's (300 for a chat model,
    8000 for a reasoning model, whose reasoning counts against it)."""
    critic_max_tokens: int | Literal["auto"] = "auto"
    """Reply cap for the critic (a verdict, and an objective review every few turns). `auto`: as for the agent."""
    token_limit_parameter: TokenLimitParameter | Literal["auto"] = "auto"
    """How the cap is sent: `max_tokens`, `max_completion_tokens` (OpenAI's reasoning models), `none` (no cap).
    `auto`: as the model's family says."""
    reasoning_effort: ReasoningEffort | None = None
    """Sent to the models whose family takes it (`takes_reasoning_effort`: OpenAI's o-series and gpt-5). None: the
    server's default."""
    length_retry_factor: int = Field(4, ge=2, le=64)
    """A reply the cap cut before it said anything (empty, or reasoning only, with finish_reason `length`) is asked
    once more with the cap this many times larger (at least REASONING_MAX_TOKENS, at most MAX_TOKEN_CAP), never the
    same call again; the role's later calls to that model keep the larger cap."""
    model_families: dict[str, ModelFamily] = Field(
        default_factory=lambda: dict(DEFAULT_FAMILIES), json_schema_extra={"counted_as": "families (docs/llm.md)"}
    )
    """Family name -> how its models are called when the settings above are `auto`. A configured table adds to (or
    replaces families of) DEFAULT_FAMILIES: `[tool.zorkgpt.llm.model_families.mine] match = ["my-model"]`."""
    timeout_seconds: float = Field(60.0, gt=0.0, le=3600.0)
    """Per-request timeout handed to the openai client."""
    max_concurrent_requests: int = Field(4, ge=1, le=1000)
    """Requests in flight to one base_url at once, across all the worker processes of a batch (`main.py batch`):
    a provider's rate limit is per key, not per process. A 429 is retried by the client within its slot."""
    max_retries: int = Field(2, ge=0, le=10)
    """Retries the openai client makes itself (with backoff) before a call counts as failed."""
    prices: dict[str, ModelPrice] = Field(
        default_factory=lambda: dict(DEFAULT_PRICES), json_schema_extra={"counted_as": "models (the price table)"}
    )
    """Model -> USD per million tokens (`input`, `cached_input`, `output`), for the cost in summary.json and the
    budget. `[tool.zorkgpt.llm.prices."my-model"]` adds or replaces one model's prices."""

    @field_validator("prices", mode="before")
    @classmethod
    def _add_to_default_prices(cls, value: Any) -> Any:
        """A configured table adds to (or overrides models of) DEFAULT_PRICES; it never drops the others."""
        return {**DEFAULT_PRICES, **value} if isinstance(value, dict) else value

    @field_validator("agent_max_tokens", "critic_max_tokens")
    @classmethod
    def _cap_in_range(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= MAX_TOKEN_CAP:
            raise ValueError(f'a reply cap is 1 to {MAX_TOKEN_CAP} tokens, or "auto"')
        return value

    @field_validator("model_families", mode="before")
    @classmethod
    def _add_to_default_families(cls, value: Any) -> Any:
        """A configured table adds to (or replaces families of) DEFAULT_FAMILIES; it never drops the others."""
        return {**DEFAULT_FAMILIES, **value} if isinstance(value, dict) else value

    def family_of(self, model: str) -> ModelFamily:
        """The family `model` belongs to (the configured ones first, in their order), or CHAT_FAMILY."""
        families = sorted(self.model_families.items(), key=lambda item: item[0] in DEFAULT_FAMILIES)
        for _, family in families:
            if any(_family_name_matches(model, prefix) for prefix in family.match):
                return family
        return CHAT_FAMILY

    def model_of(self, role: str) -> str:
        return self.critic_model if role == "critic" else self.agent_model

    def max_tokens_for(self, role: str) -> int:
        """The reply cap of `role` (agent, critic; the episode's end is the critic's call)."""
        cap = self.critic_max_tokens if role == "critic" else self.agent_max_tokens
        return self.family_of(self.model_of(role)).max_tokens if cap == "auto" else cap

    def token_parameter_for(self, model: str) -> TokenLimitParameter:
        parameter = self.token_limit_parameter
        return self.family_of(model).token_limit_parameter if parameter == "auto" else parameter

    def sends_temperature_to(self, model: str) -> bool:
        send = self.send_temperature
        return self.family_of(model).send_temperature if send == "auto" else send

    def reasoning_effort_for(self, model: str) -> ReasoningEffort | None:
        return self.reasoning_effort if self.family_of(model).takes_reasoning_effort else None

    def price_of(self, model: str) -> ModelPrice | None:
        return self.prices.get(model)

    def api_key(self) -> str | None:
        """The API key from the `api_key_env` variable, or None when it is unset or empty."""
        return os.environ.get(self.api_key_env) or None


GameConfiguration.register_section("llm", LLMConfig)


def family_table() -> str:
    """DEFAULT_FAMILIES as a Markdown table, for docs/llm.md."""
    lines = ["| family | names | cap sent as | temperature | cap | reasoning_effort |", "|---|---|---|---|---|---|"]
    for name, family in DEFAULT_FAMILIES.items():
        names = ", ".join(f"`{prefix}`" for prefix in family.match)
        sent = "yes" if family.send_temperature else "no"
        effort = "sent" if family.takes_reasoning_effort else "not sent"
        lines.append(
            f"| {name} | {names} | `{family.token_limit_parameter}` | {sent} | {family.max_tokens} | {effort} |"
        )
    chat = CHAT_FAMILY
    lines.append(f"| any other model | | `{chat.token_limit_parameter}` | yes | {chat.max_tokens} | not sent |")
    return "\n".join(lines) + "\n"


def price_table() -> str:
    """DEFAULT_PRICES as a Markdown table, for docs/llm.md."""
    lines = ["| model | input | cached input | output |", "|---|---|---|---|"]
    for model, price in DEFAULT_PRICES.items():
        cached = price.input if price.cached_input is None else price.cached_input
        lines.append(f"| `{model}` | {price.input:.3f} | {cached:.3f} | {price.output:.3f} |")
    return "\n".join(lines) + "\n"
