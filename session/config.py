"""Configuration: one pydantic model per `[tool.zorkgpt.*]` section of pyproject.toml.

Every field carries its documentation in the docstring under it (pydantic reads those as descriptions). The designs
a section cites (design 000-004) are described in docs/design.md.
An unknown key or an out-of-range value raises `ConfigError`, whose message names the key and what is allowed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from session.emulator import DEFAULT_TIME_LIMIT
from session.plugins import MODULE_NAME, OBJECT_PATH, PluginError, import_modules

STATE_SIGNALS = (
    "new_room",
    "new_world_state",
    "new_room_inventory",
    "new_object_state",
    "new_game_variable",
    "new_position",
    "new_information",
    "new_arrangement",
)
"""The progress signals read off a turn's novelty (managers.novelty.NOVELTY_KINDS holds them, with `new_score`)."""
ProgressSignal = Literal["score", "objective", *STATE_SIGNALS]
DEFAULT_PROGRESS_SIGNALS = [
    "score",
    "new_room",
    "new_room_inventory",
    "new_object_state",
    "new_game_variable",
    "new_position",
    "new_information",
    "new_arrangement",
]
"""Measured on the corpus (benchmarks/corpus.py). `objective` is left out: a verified completion is a walked exit or
a taken item, which the state signals already see, while inside stuck loops the first walk of each return exit kept
them going (4 more of 532 end within target without it, no healthy run is stopped). `new_arrangement` spares
spirit's sliding crates played with detours and ends none of the 532 stuck loops later."""
GateAction = Literal["terminate", "human", "warn"]
KIND_NAME = r"^[a-z][a-z0-9_-]{0,31}$"
"""What an agent or critic kind may be called. Which kinds exist is the registry's to say (agents.registry, checked
when an episode is wired): the configuration only reads the name."""
KIND_REFERENCE = rf"{KIND_NAME}|{OBJECT_PATH}"
"""What `gameplay.agent` / `gameplay.critic` may say: a registered kind's name, or a plugin's `module:attribute`
(session.plugins.OBJECT_PATH; agents.registry says what it may name)."""


class ConfigError(Exception):
    """The configuration file or a flag holds an unknown key or a value out of range."""


class _Section(BaseModel):
    # strict: `max_turns_per_episode = true` is an error, not 1
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, validate_assignment=True, strict=True)


class ModelPrice(_Section):
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


class ModelFamily(_Section):
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


class LLMConfig(_Section):
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
    model_families: dict[str, ModelFamily] = Field(default_factory=lambda: dict(DEFAULT_FAMILIES))
    """Family name -> how its models are called when the settings above are `auto`. A configured table adds to (or
    replaces families of) DEFAULT_FAMILIES: `[tool.zorkgpt.llm.model_families.mine] match = ["my-model"]`."""
    timeout_seconds: float = Field(60.0, gt=0.0, le=3600.0)
    """Per-request timeout handed to the openai client."""
    max_concurrent_requests: int = Field(4, ge=1, le=1000)
    """Requests in flight to one base_url at once, across all the worker processes of a batch (`main.py batch`):
    a provider's rate limit is per key, not per process. A 429 is retried by the client within its slot."""
    max_retries: int = Field(2, ge=0, le=10)
    """Retries the openai client makes itself (with backoff) before a call counts as failed."""
    prices: dict[str, ModelPrice] = Field(default_factory=lambda: dict(DEFAULT_PRICES))
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


class GameplayConfig(_Section):
    """`[tool.zorkgpt.gameplay]`: the episode and the agent/critic turn loop."""

    agent: str = Field("auto", pattern=KIND_REFERENCE)
    """Agent kind: one registered in agents/registry.py (`main.py --help` lists them), a plugin's `module:attribute`
    (docs/extending.md), or `auto`: `llm` when the API key variable is set, else `offline`."""
    critic: str = Field("auto", pattern=KIND_REFERENCE)
    """Critic kind: one registered in agents/registry.py (`offline`, `llm`: the model judges every proposal,
    `when_risky`: the model only when its verdict can change the outcome, else the offline score), or `auto`:
    `when_risky` when the API key variable is set, else `offline`."""
    max_turns_per_episode: int = Field(500, ge=1, le=1_000_000)
    """Hard cap on turns in one episode (`termination_reason = "max_turns"`)."""
    critic_rejection_threshold: float = Field(0.5, ge=0.0, le=1.0)
    """A proposal whose (adjusted) critic score is below this is rejected and regenerated."""
    max_rejections: int = Field(3, ge=0, le=20)
    """Regenerations per turn; after that the best-scoring candidate runs."""
    max_cost_usd: float | None = Field(None, gt=0.0, le=1_000_000.0)
    """End the episode (`termination_reason = "budget"`) once its LLM calls have cost this much. Needs a price for
    every model in use (`[tool.zorkgpt.llm] prices`). None: no budget."""
    seed: int | None = Field(None, ge=1, le=2**31 - 1)
    """Emulator RNG seed. None: the game's walkthrough seed (zork1: 12), so runs are reproducible. Jericho reads 0 as
    "no seed" and keeps a C int, hence the range."""
    episodes: int = Field(1, ge=1, le=10_000)
    """Episodes of the game played back to back (`max_turns_per_episode` each), with `run.json` and `run.md` over
    them; each learns from the ones before through the knowledge store."""
    emulator_timeout_seconds: float = Field(DEFAULT_TIME_LIMIT, gt=0.0, le=3600.0)
    """Seconds the game's Z-machine emulator, or the shadow one that plays probes on copies, may take to answer one
    call before its process is killed as hung: the episode ends (`emulator_failed`), or the probe is skipped. A step
    takes milliseconds and an emulator's start well under a second, so a loaded machine never reaches it and a real
    hang costs it once."""


class OrchestratorConfig(_Section):
    """`[tool.zorkgpt.orchestrator]`: the turn loop's plumbing."""

    max_consecutive_llm_failures: int = Field(3, ge=1, le=100)
    """Failed LLM calls of one role (agent, critic, objectives) in a row, after the client's own retries, that end
    the episode as `llm_unavailable`: a critic that is always down is not hidden by an agent that answers."""
    max_invalid_replies: int = Field(3, ge=1, le=20)
    """Agent replies that fail validation in one proposal before the turn runs nothing (never a command the model
    did not write: the record says why, and the next turn asks again). Once two proposals in a row had no usable
    reply, one fewer for each further one (at least one), until a reply is usable again."""
    history_turns: int = Field(8, ge=0, le=200)
    """Recent turns (command and response) shown to the agent and critic."""
    console_log_level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Level of the human-readable console log."""
    file_log_level: Literal["TRACE", "DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    """Level of the JSON log in the episode's folder (`episode.log.jsonl`). DEBUG adds the loop break's
    `progress_check` line, one a turn, which every record in events.jsonl already holds; it costs about 0.04 ms a
    turn."""


class FilesConfig(_Section):
    """`[tool.zorkgpt.files]`: where the story file is and where episodes are written."""

    game_file_path: str = "games/zork1.z5"
    """Story file used when neither `--rom` nor `ZORK_ROM` is given (git-ignored)."""
    episode_dir: str = "game_files/episodes"
    """Each episode writes `<episode_dir>/<episode_id>/` (events.jsonl, summary.json, map, log)."""


class KnowledgeConfig(_Section):
    """`[tool.zorkgpt.knowledge]`: what earlier episodes of a game learned, carried to the next ones."""

    enabled: bool = True
    """Read the game's store at the start of an episode and add the episode to it at its end. False: play fresh."""
    path: str | None = None
    """The store's JSON file (a Markdown view is written beside it). None: `<episode_dir>/knowledge/<game>.json`."""


class DetectorSection(_Section):
    """A loop-break detector's own section, `[tool.zorkgpt.loop_break.<name>]` (managers/loop_break/detector.py)."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any] | None:
        """This section's settings under which its stop rule never ends an episode (None: it has no stop rule, or
        it is the backstop that stays)."""
        return None


class ActionLoopsConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.action_loops]`: loops beyond rooms (action signatures, identical commands,
    unparseable replies, agent-critic loops, failure gates)."""

    enable_signature_detection: bool = True
    """Flag the same (verb, arguments, problematic result) repeated with no progress (design 004)."""
    signature_loop_threshold: int = Field(3, ge=2, le=1000)
    """Repetitions of one problematic signature within signature_window that make a loop."""
    signature_window: int = Field(10, ge=2, le=1000)
    """Recent turns examined for signature loops."""
    signature_repeat_penalty: float = Field(-0.5, ge=-1.0, le=0.0)
    """Added to the critic score of a proposal that repeats a looping signature's verb and arguments."""
    enable_identical_action_detection: bool = True
    """Warn, then ban, when the same command runs many turns in a row without progress (design 003)."""
    identical_action_warning: int = Field(5, ge=2, le=1000)
    """Consecutive identical commands that bring a warning with guidance into the agent's context."""
    identical_action_recovery: int = Field(10, ge=3, le=1000)
    """Consecutive identical commands that trigger recovery: the command is banned for recovery_ban_turns."""
    recovery_ban_turns: int = Field(10, ge=1, le=1000)
    """Turns a recovered command stays forbidden (the critic rejects it programmatically)."""
    enable_parse_failure_detection: bool = True
    """Count LLM replies that fail validation and recover with explicit format guidance (design 003)."""
    parse_failure_threshold: int = Field(5, ge=2, le=1000)
    """The same unparseable reply this many times triggers recovery."""
    parse_failure_streak: int = Field(5, ge=2, le=1000)
    """This many unparseable replies in a row (any text) trigger recovery; a valid reply ends the streak."""
    parse_failure_memory: int = Field(50, ge=2, le=10_000)
    """Recent unparseable replies among which parse_failure_threshold identical ones are counted."""
    enable_collaboration_loop_detection: bool = True
    """Agent re-proposing what the critic rejected (design 002's collaboration loops)."""
    rejection_similarity: float = Field(0.85, gt=0.0, le=1.0)
    """Similarity (session.commands.command_similarity, word by word: 1.0 the same command, 0.91 `examine troll`/
    `examine trolls`, 0.89 `take lamp`/`take lamps`, 0.4 `turn on lamp`/`turn off lamp`) at or above which a
    proposal counts as a rejected one again."""
    rejection_window: int = Field(20, ge=1, le=1000)
    """Turns a rejection is remembered for re-proposal matching."""
    collaboration_loop_threshold: int = Field(3, ge=1, le=100)
    """Re-proposals of a rejected command after which its rejection is final in that room."""
    enable_failure_gate: bool = True
    """Count identical failures (same command, room and game response) and open a gate (design 002)."""
    gate_after_loops: int = Field(4, ge=1, le=100)
    """Repeated identical failures, without progress or a human in between, that fire the gate (and again at every
    further multiple: 4, 8, 12...). design 002's 3 ended 7 of the 532 noisy walkthroughs of seeds 4-22 with
    `terminate`: a clumsy player says the same wrong verb four times in a dozen turns."""
    gate_min_turns_stuck: int = Field(14, ge=0, le=100_000)
    """Turns without progress before the gate may open: a few identical slips soon after progress are clumsy play,
    not a loop (measured on the corpus's noisy walkthroughs, benchmarks/corpus.py: at 12, tryst205's of seed 4 said
    `dance` five times in nine turns twelve turns after scoring)."""
    gate_max_gap: int = Field(4, ge=0, le=1000)
    """Largest mean gap, in turns, between the repeats of one failure for the gate to open: a loop types it again and
    again; clumsy healthy play tries a wrong verb now and then while it waits for something (advent's noisy
    walkthrough: `dance` four times in 22 turns while the cave closes). 0: any spacing."""
    gate_action: GateAction = "warn"
    """`terminate` (termination_reason "loop_gate"), `human` (pause and read guidance from stdin) or `warn`."""
    failure_memory: int = Field(50, ge=1, le=10_000)
    """Recent failures remembered for exact-match comparison (a bounded window)."""

    @model_validator(mode="after")
    def _check_relations(self) -> ActionLoopsConfig:
        if self.identical_action_warning >= self.identical_action_recovery:
            raise ValueError(
                f"identical_action_warning ({self.identical_action_warning}) must be < identical_action_recovery "
                f"({self.identical_action_recovery})"
            )
        if self.signature_loop_threshold > self.signature_window:
            raise ValueError(
                f"signature_loop_threshold ({self.signature_loop_threshold}) must be <= signature_window "
                f"({self.signature_window})"
            )
        return self


class RoomLoopsConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.room_loops]`: the room-loop detectors (oscillation, camping, region) and the
    penalties and bonuses that steer out of loops."""

    enabled: bool = True
    """Room-loop detectors (oscillation, camping, region) and their penalties."""
    oscillation_return_penalty: float = Field(-0.8, ge=-1.0, le=0.0)
    """Added to the critic score of a move back into an A-B-A-B oscillation."""
    oscillation_exploration_bonus: float = Field(0.5, ge=0.0, le=1.0)
    """Added to the critic score of a move out of an oscillation to a room outside it."""
    camping_return_penalty: float = Field(-0.6, ge=-1.0, le=0.0)
    """Added to the critic score of a move back into the camped room."""
    camping_threshold: int = Field(5, ge=1, le=1000)
    """Per-turn entries of one room within camping_window that count as camping."""
    camping_window: int = Field(10, ge=1, le=1000)
    """Recent turns examined for camping."""
    enable_location_penalty: bool = True
    """Penalise moves into a room visited within location_revisit_window turns."""
    location_revisit_penalty: float = Field(-0.2, ge=-1.0, le=0.0)
    """Added to the critic score of a move into a recently visited room."""
    location_revisit_window: int = Field(5, ge=1, le=1000)
    """Recent turns examined for the revisit penalty."""
    region_window: int = Field(20, ge=2, le=1000)
    """Recent turns examined for a region loop (shuttling among a few known rooms)."""
    region_max_rooms: int = Field(4, ge=2, le=100)
    """A window touching at least 2 and at most this many rooms, none new, with no progress, is a region loop."""
    region_loop_penalty: float = Field(-0.6, ge=-1.0, le=0.0)
    """Added to the critic score of a move that stays inside a looping region."""
    repeated_move_penalty: float = Field(-0.5, ge=-1.0, le=0.0)
    """Added to the critic score of a move the player already made from the same situation (or from the same room
    with the same things in hand) since the last progress, while at least half of the repetition window repeats
    (from penalty_min_turns_stuck on): steers out of loops of any size."""
    way_out_bonus: float = Field(0.5, ge=0.0, le=1.0)
    """Added instead, in the same state, to the next step of the map's way to the nearest room with untried exits
    outside the loop's rooms (every room since the last progress): leaving a loop often means walking through them, so
    that step gets none of the room-loop penalties, which would outweigh the bonus."""

    @model_validator(mode="after")
    def _check_relations(self) -> RoomLoopsConfig:
        if self.camping_threshold > self.camping_window:
            raise ValueError(
                f"camping_threshold ({self.camping_threshold}) must be <= camping_window ({self.camping_window})"
            )
        return self


class NoProgressConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.no_progress]`: the backstop stop rule, turns without progress."""

    max_turns: int = Field(64, ge=1, le=100_000)
    """Terminate (`stuck_no_progress`) this many turns after the last progress, however varied the play. The other
    stop rules end loops sooner; this one is the backstop. Measured: healthy noisy walkthroughs whose detours put the
    script off its track go up to 61 turns without progress in two or three rooms (temple, seed 13)."""
    trek_rooms: int = Field(3, ge=1, le=100_000)
    """When the turns since the last progress went through more than this many rooms, the no-progress rule may wait
    up to `trek_extra_turns` more: a walk back through known rooms is slow, not a loop (loops over many rooms are the
    repetition rule's). Needs repetition.enabled."""
    trek_extra_turns: int = Field(48, ge=0, le=100_000)
    """Turns that may be added to max_turns over more than `trek_rooms` rooms (0: none)."""
    trek_grace: int = Field(24, ge=0, le=100_000)
    """Over more than `trek_rooms` rooms, the no-progress rule waits no longer than this many turns after the player
    last reached a room not seen since the last progress: a walk keeps reaching rooms, a loop reached all of its own
    in its first round. 0: no such bound (all the extra turns whenever the rooms are many)."""


class RepetitionConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.repetition]`: the repetition window and its stop rule."""

    enabled: bool = True
    """Stop sooner when play repeats itself: all but `misses` of the last `window` turns did
    again what they had done since the last progress from the same situation (same room, inventory and objects), or
    walked between two known rooms as the episode already had, and `min_turns` passed without progress.
    Also detects wandering loops (more rooms than room_loops.region_max_rooms) and penalises repeated moves."""
    window: int = Field(18, ge=2, le=1000)
    """Recent turns examined for the repetition rule: all but `misses` of them must repeat. Measured: a
    16-turn window stopped sherlock's noisy walkthrough of seed 29 (15 of 16 turns repeating: the walkthrough's own
    refused steps between steps out and back); 18 turns make every loop of the corpus end one or two turns later, none
    after its target (random walks at most 39 turns)."""
    misses: int = Field(1, ge=0, le=1000)
    """Turns of the repetition window that may be new while it still counts as repeating: a random walk that takes
    a door it had not taken from there, a character who changes the room once. Measured: healthy runs have at most 16
    of 18 turns repeating (1,176 optimal and noisy runs, seeds 1-33)."""
    stop: bool = True
    """False: the window still feeds the trek rule, wandering detections and the repeat penalties, but its stop rule
    never ends an episode."""
    min_turns: int = Field(14, ge=1, le=100_000)
    """Turns without progress before the repetition rule may stop the episode (must be below no_progress.max_turns)."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"stop": False}

    @model_validator(mode="after")
    def _check_relations(self) -> RepetitionConfig:
        if self.misses >= self.window:
            raise ValueError(f"misses ({self.misses}) must be < window ({self.window})")
        return self


class FruitlessConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.fruitless]`: the fruitless rule, new tries that get nowhere."""

    turns: int = Field(30, ge=0, le=100_000)
    """Stop after this many turns without progress (on the stop rules' clock) when at least `share` of
    them, less the waits and the moves made again (never less than half of them), tried something (no move, look,
    inventory or wait), each command counted once: play that keeps trying new things and gets nowhere (semi-novel stuck
    play), also when it walks to and fro between tries. Measured after 30 turns without progress: healthy runs reach at
    most 0.71 (1,064 optimal and noisy walkthroughs, seeds 1-29, and 40-41 with only examinations, wrong verbs and steps
    out and back as detours), semi-novel loops 0.79 or more (walking ones pass 0.8 later, within 60 turns).
    The offline agent, an explorer whose moves are mostly new, loses no room and no point to it over the 29 games.
    0: no such rule."""
    share: float = Field(0.8, gt=0.0, le=1.0)
    """The share of the turns since the last progress, less the waits and the moves made again (never less than half
    of them), for the fruitless rule: distinct commands that tried something."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


class ObstacleConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.obstacle]`: the obstacle rule, a refused thing tried again and again in other
    words."""

    turns: int = Field(30, ge=0, le=100_000)
    """Stop (`stuck_no_progress`, rule `obstacle`) after this many turns without progress (on the stop rules' clock)
    when `retries` of them were retries: commands not made in that room before that named a thing the game had
    refused there (not for being out of sight, in hand already or named with a word it does not know) and that the
    game refused again, answered as doing nothing or asked more of (managers/loop_break/obstacle.py). A model stuck
    on a puzzle comes back to it between walks over ground it knows, rewording the try that failed. 0: no such
    rule."""
    retries: int = Field(2, ge=1, le=100_000)
    """Retries since the last progress that, once `turns` have passed, make the obstacle rule stop: the thing refused
    three times, in three ways. Chosen with `turns` on real play (docs/results/margins): the tuning half of the games
    never retries a refused thing after 30 turns without progress, the held-out half reaches 0.47 of the rule
    (claude-haiku-4-5's third game: two retries 14 turns after its last progress), the corpus's and the generated
    games' walkthroughs none at all."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


class ChurnConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.churn]`: the churn rule, busy changes in place that reach nothing new."""

    changes: int = Field(8, ge=0, le=100_000)
    """Stop (`stuck_no_progress`, rule `churn`) when this many of the last `window` turns changed things in
    place and reached nothing new (no move, no observation, the same room, a situation other than the last one or
    what is carried in another state, no progress but by `weak_signals`, not about the same thing as the last such
    change there): busy camping, taking and dropping, opening and closing over a room's many things, where every
    combination in hand is new. 0: off.
    Chosen on the tuning half of the corpus (docs/results/margins): its healthy runs churn at most 4 times in 24
    turns, so 6 or more keeps them below 1/1.5 of it; 8 ends the busy loops that make a new combination now and
    then (zork3's amulet) within 40 turns. Held out: at most 5 (cutthroat takes back five things it left on a deck),
    below 1/1.5 of 8 too."""
    repeats: int = Field(3, ge=0, le=100_000)
    """Stop (rule `churn`) when this many of the last `window` turns changed things in place by a command made
    in that room before and reached no new object state, counted since the last progress by a signal other than
    `weak_signals` and new object states: in a room with many things every first combination of them is
    a new object state, which would restart the count above again and again (sherlock's study). 0: off. Measured:
    healthy runs do it at most once in 24 turns; healthy play makes new combinations by new commands."""
    window: int = Field(24, ge=1, le=100_000)
    """The turns over which churning turns are counted."""
    min_turns: int = Field(10, ge=0, le=100_000)
    """Turns since the last progress by a signal other than the weak ones before the churn rule may stop: a busy
    loop's first round reaches new object states, which are progress."""
    device_times: int = Field(7, ge=0, le=100_000)
    """A change about the same thing as the last change in its room (one device worked again: a lid opened and
    closed, a flashlight switched off and on) churns only once the same command has made it this many times since
    the last progress by a signal other than the weak ones and new object states, the game answering it
    alike every time. A device whose answer varies (a spinner that lands on another word) is a gamble, never churn.
    0: one device worked again never churns. Measured (docs/results/margins, `churn.device`): healthy walkthroughs
    work one device alike at most 4 times (curses' coffin lid while its magic works)."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"changes": 0, "repeats": 0}


class CycleConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.cycle]`: the cycle rule, commands coming round in the same order."""

    turns: int = Field(16, ge=0, le=100_000)
    """Stop (`stuck_no_progress`) when the player's commands have come round in the same order, two or more commands
    a round, for this many turns and at least `rounds` rounds, with nothing among them that the commands
    themselves brought about (points, an objective, news, a new place inside one room id, a new arrangement; waits
    break a cycle too): a player not reading the answers, while the game keeps its rooms or state new (a carousel's
    random exits, a ticking clock). 0: off. Measured: healthy runs' longest such stretch is 11 turns (two commands a
    round; 1,120 optimal and noisy walkthroughs, seeds 1-31)."""
    rounds: int = Field(3, ge=2, le=1000)
    """Rounds a command cycle must span, when they take more than `turns`: healthy runs come round twice in
    longer cycles (seastalker's sonar and course, murdac's treasure trips), never three times."""
    max_period: int = Field(12, ge=2, le=1000)
    """The longest command cycle looked for, in commands. Longer rounds (a wandering loop out and back over seven
    rooms or more) are the repetition rule's: three of them take longer than its window does."""

    @classmethod
    def stop_rule_off(cls) -> dict[str, Any]:
        return {"turns": 0}


class LoopBreakConfig(_Section):
    """`[tool.zorkgpt.loop_break]`: progress, the stop rules' clock, warnings, objectives; each detector's settings in
    its own section below it (`[tool.zorkgpt.loop_break.churn]`, ...)."""

    # The sections of detectors registered after the built-in ones are its extra keys, each validated by its own model
    # (`_registered_sections`): the fields of this model never change, whatever is registered.
    model_config = ConfigDict(extra="allow")

    enabled: bool = True
    """Master switch: false turns the whole loop-break system off (no termination, warnings or penalties)."""
    stuck_check_interval: int = Field(1, ge=1, le=1000)
    """Check for termination every N turns (1: every turn; 10 reproduces the original design)."""
    progress_signals: list[ProgressSignal] = Field(default_factory=lambda: list(DEFAULT_PROGRESS_SIGNALS), min_length=1)
    """What counts as progress: `score` (a value never reached this episode), `objective` (verified completion),
    `new_room` (first visit), `new_room_inventory` (first arrival in a room with this inventory),
    `new_object_state` (the command gave an object a place or attributes it never had), `new_game_variable` (the
    command gave a game variable a value it never had), `new_information` (a question, a look-up or a reply answered
    with something never said), `new_position` (a move inside one room id answered with a text never seen),
    `new_arrangement` (a command that is no move left the objects the player pushed, never held, in places they
    never stood in together), `new_world_state` (a whole-world hash never seen; noisy, the design's behaviour). See
    managers/novelty.
    The design's set is ["score", "objective", "new_room"]."""
    enable_objective_based_progress: bool = True
    """Count verified objective completions as progress (needs `objective` in progress_signals)."""
    objective_update_interval: int = Field(10, ge=1, le=1000)
    """llm mode: the critic is asked for new objectives on the first turn and every this many turns (in its verdict:
    no call of its own)."""
    objective_staleness_turns: int = Field(30, ge=1, le=10_000)
    """A discovered objective is dropped after this many turns without progress."""
    max_objectives: int = Field(8, ge=1, le=50)
    """Discovered objectives kept at once (oldest dropped first)."""
    wait_allowance: int = Field(16, ge=0, le=100_000)
    """Waits (`wait`, `z`) since the last progress, up to this many, do not count towards any stop rule and never
    repeat: waiting is how a player lets a timed event come (a sheriff, a falling feather; optimal walkthroughs wait
    up to 16 times in a row). The waits after them repeat like any command, and more than this many in a row all
    repeat, with every turn since the last progress on the repetition rule's clock: a player who only waits is
    stopped on the first wait past the free ones. 0: a wait is a turn like any other (the designs)."""
    wait_detours: int = Field(3, ge=0, le=100)
    """With each wait left out, up to this many of the other turns since the wait before it are left out too: a player
    waiting for a timed event looks around between waits (tryst205's jail: 14 waits in 52-75 turns at 3 detours per
    step; balances' feather, seed 22: 3-7 turns between waits, stopped at 2). Turns after the last wait count. A loop
    that mixes in waits gets at most (wait_allowance - 1) × this turns more on the no-progress clock; the repetition
    rule ends it once its waits repeat."""
    weak_signals: list[ProgressSignal] = Field(default_factory=lambda: ["new_room_inventory"])
    """Progress by these signals alone restarts every clock but one: the fruitless rule also counts, and stops on,
    the turns since the last progress by any other signal (every wait left out). A semi-novel loop whose walks reach
    rooms it had seen only with other things in hand restarts its count at each without it (zork2's carousel runs 66
    turns, 29 with it; so do two of zork3's among the loops built after the rule was chosen). Measured: no healthy
    run stopped (1,176 optimal and noisy walkthroughs, seeds 1-33, and 112 of seeds 34-37 built afterwards), nor at
    share 0.75. []: the fruitless rule counts from the last progress alone."""
    penalty_min_turns_stuck: int = Field(4, ge=0, le=100_000)
    """Penalties apply only when at least this many turns have passed since the last progress."""
    steering_pressure: float = Field(0.67, ge=0.0, le=1.0)
    """Penalties, the stuck warning and the loop notes to the agent only once a stop rule has come this far towards
    ending the episode (its pressure: the count reached over the count that stops, `Detector.pressure`). Every
    threshold is chosen so that healthy play stays below 1/1.5 of it (benchmarks.margins), so below this the play
    may be healthy and is left alone; past it a loop is steered for the rest of the way to its stop. 0: penalties
    from penalty_min_turns_stuck on, as design document 000 has them."""
    enable_stuck_warnings: bool = True
    """Show the stuck warning (countdown, objectives, hints) to the agent and critic."""
    warning_lead_turns: int = Field(8, ge=1, le=100_000)
    """Show the warning this many turns before a stop rule could end the episode at the earliest (must be below
    no_progress.max_turns)."""
    enable_exploration_hints: bool = True
    """Add action-novelty hints and the room's unexplored exits to the warning."""
    action_novelty_window: int = Field(15, ge=1, le=1000)
    """Hints suggest commands not tried within this many recent turns."""
    destination_prediction: Literal["map", "lookahead"] = "map"
    """`map`: predict a move's destination from the learned map; `lookahead`: run it on a snapshot and restore."""
    on_stuck: Literal["end", "rewind"] = "end"
    """What a stop verdict does. `end`: the episode ends (the design's behaviour). `rewind`: the game goes back to
    exactly where it was right after the last progress, what the abandoned turns did is off the table where they did it
    for `rewind_ban_turns`, the agent is told what it tried, and play goes on (turns and LLM calls keep counting;
    max_turns_per_episode and max_cost_usd still end the episode). A point is gone back to once: a verdict with no
    progress since the last rewind ends the episode, as does the verdict after `max_rewinds` rewinds. After a rewind the
    offline agent has second thoughts; a model that repeats itself spends more calls for the same score, so `end` stays
    the default (docs/loop-break.md)."""
    max_rewinds: int = Field(3, ge=0, le=1000)
    """Rewinds an episode may make (`on_stuck = "rewind"`); the verdict after the last one ends the episode."""
    rewind_ban_turns: int = Field(40, ge=1, le=100_000)
    """After a rewind, each command the abandoned turns made is refused in the situation it was made in for this many
    turns (never every way out of a room: the ways out then stay allowed)."""
    action_loops: ActionLoopsConfig = Field(default_factory=ActionLoopsConfig)
    """Loops beyond rooms: agent and critic going round, unparseable replies, failure gates."""
    room_loops: RoomLoopsConfig = Field(default_factory=RoomLoopsConfig)
    """Room loops and the penalties that steer out of them."""
    no_progress: NoProgressConfig = Field(default_factory=NoProgressConfig)
    """The backstop stop rule."""
    repetition: RepetitionConfig = Field(default_factory=RepetitionConfig)
    """The repetition window and its stop rule."""
    fruitless: FruitlessConfig = Field(default_factory=FruitlessConfig)
    """The fruitless rule."""
    churn: ChurnConfig = Field(default_factory=ChurnConfig)
    """The churn rule."""
    cycle: CycleConfig = Field(default_factory=CycleConfig)
    """The cycle rule."""
    obstacle: ObstacleConfig = Field(default_factory=ObstacleConfig)
    """The obstacle rule."""

    @model_validator(mode="after")
    def _check_relations(self) -> LoopBreakConfig:
        max_turns = self.no_progress.max_turns
        if self.warning_lead_turns >= max_turns:
            raise ValueError(
                f"warning_lead_turns ({self.warning_lead_turns}) must be < no_progress.max_turns ({max_turns})"
            )
        if self.repetition.min_turns > max_turns:
            raise ValueError(
                f"repetition.min_turns ({self.repetition.min_turns}) must be <= no_progress.max_turns ({max_turns})"
            )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _registered_sections(cls, data: Any, handler: ModelWrapValidatorHandler[LoopBreakConfig]) -> LoopBreakConfig:
        """The sections of the registered detectors (`register_section`), each validated by its model (its defaults
        when not given); a key that is neither a field nor such a section is unknown, as in any section. Every
        problem is reported at once, each at its key."""
        if not isinstance(data, dict):
            return handler(data)
        problems: list[InitErrorDetails] = []
        given: dict[str, DetectorSection] = {}
        for name, value in data.items():
            if name in cls.model_fields:
                continue
            model = _REGISTERED_SECTIONS.get(name)
            if model is None:
                problems.append({"type": "extra_forbidden", "loc": (name,), "input": value})
                continue
            try:
                given[name] = model.model_validate(value)
            except ValidationError as exc:
                problems += _located(exc, (name,))
        try:
            config = handler({key: value for key, value in data.items() if key in cls.model_fields})
        except ValidationError as exc:
            if not problems:
                raise
            problems = _located(exc, ()) + problems
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        sections = {name: given[name] if name in given else model() for name, model in _REGISTERED_SECTIONS.items()}
        object.__setattr__(config, "__pydantic_extra__", sections)
        return config

    def __setattr__(self, name: str, value: Any) -> None:
        # Its extra keys are the registered sections only, validated as they are set: a misspelt setting stays an
        # error, as in every other section (where pydantic refuses it).
        if name in type(self).model_fields or name.startswith("_"):
            super().__setattr__(name, value)
        elif name in _REGISTERED_SECTIONS:
            self.__pydantic_extra__[name] = _REGISTERED_SECTIONS[name].model_validate(value)
        else:
            raise ValueError(f"loop_break has no setting or section {name!r}")

    def sections(self) -> dict[str, DetectorSection]:
        """Every detector's section, by name, in the order of the fields (built-ins, then registered ones)."""
        return {name: getattr(self, name) for name in detector_sections()}


def _located(exc: ValidationError, prefix: tuple[str, ...]) -> list[InitErrorDetails]:
    """`exc`'s errors, each at `prefix` + its own place, to be raised again together with others."""
    return [
        {
            "type": PydanticCustomError(error["type"], error["msg"]),
            "loc": (*prefix, *error["loc"]),
            "input": error["input"],
        }
        for error in exc.errors()
    ]


_REGISTERED_SECTIONS: dict[str, type[DetectorSection]] = {}
"""The sections of detectors registered after the built-in ones (`register_section`), in their order."""


def detector_sections() -> dict[str, type[DetectorSection]]:
    """`[tool.zorkgpt.loop_break.<name>]` -> its model: the built-in sections and those registered since."""
    built_in = {
        name: info.annotation
        for name, info in LoopBreakConfig.model_fields.items()
        if isinstance(info.annotation, type) and issubclass(info.annotation, DetectorSection)
    }
    return {**built_in, **_REGISTERED_SECTIONS}


def register_section(name: str, model: type[DetectorSection]) -> None:
    """Add `[tool.zorkgpt.loop_break.<name>]`, validated by `model` (defaults: the model's own), to the configuration:
    a detector registered after the built-in ones (managers/loop_break/detector.py `register`) brings its section.
    A built-in detector's own section, or the same section again, changes nothing; ValueError for a name that is
    another setting or section."""
    taken = LoopBreakConfig.model_fields.get(name)
    current = taken.annotation if taken is not None else _REGISTERED_SECTIONS.get(name, model)
    if current is not model:
        raise ValueError(f"loop_break.{name} is taken by another setting or section")
    if taken is None:
        _REGISTERED_SECTIONS[name] = model


def unregister_section(name: str) -> None:
    """Drop a section `register_section` added (a test's toy detector); the built-in ones stay."""
    _REGISTERED_SECTIONS.pop(name, None)


def stop_rules_off() -> dict[str, dict[str, Any]]:
    """`[tool.zorkgpt.loop_break]` settings under which no stop rule but the no-progress backstop ends an episode:
    every section answers for its own rule (`DetectorSection.stop_rule_off`), those registered since included."""
    sections = ((name, model.stop_rule_off()) for name, model in detector_sections().items())
    return {name: dict(off) for name, off in sections if off is not None}


RENAMED_KEYS: dict[str, str | tuple[str, str]] = {
    "action_loops": "loop_break.action_loops",
    "loop_break.enable_velocity_detection": "loop_break.enabled",
    "loop_break.fruitless_weak_signals": "loop_break.weak_signals",
    "loop_break.stuck_warning_threshold": (
        "loop_break.warning_lead_turns",
        "which counts turns before the earliest stop, not turns without progress: "
        "set it to no_progress.max_turns minus the old value",
    ),
    "loop_break.enable_loop_detection": "loop_break.room_loops.enabled",
    "loop_break.oscillation_return_penalty": "loop_break.room_loops.oscillation_return_penalty",
    "loop_break.oscillation_exploration_bonus": "loop_break.room_loops.oscillation_exploration_bonus",
    "loop_break.camping_return_penalty": "loop_break.room_loops.camping_return_penalty",
    "loop_break.camping_threshold": "loop_break.room_loops.camping_threshold",
    "loop_break.camping_window": "loop_break.room_loops.camping_window",
    "loop_break.enable_location_penalty": "loop_break.room_loops.enable_location_penalty",
    "loop_break.location_revisit_penalty": "loop_break.room_loops.location_revisit_penalty",
    "loop_break.location_revisit_window": "loop_break.room_loops.location_revisit_window",
    "loop_break.region_window": "loop_break.room_loops.region_window",
    "loop_break.region_max_rooms": "loop_break.room_loops.region_max_rooms",
    "loop_break.region_loop_penalty": "loop_break.room_loops.region_loop_penalty",
    "loop_break.repeated_move_penalty": "loop_break.room_loops.repeated_move_penalty",
    "loop_break.way_out_bonus": "loop_break.room_loops.way_out_bonus",
    "loop_break.max_turns_stuck": "loop_break.no_progress.max_turns",
    "loop_break.trek_rooms": "loop_break.no_progress.trek_rooms",
    "loop_break.trek_extra_turns": "loop_break.no_progress.trek_extra_turns",
    "loop_break.trek_grace": "loop_break.no_progress.trek_grace",
    "loop_break.enable_repetition_detection": "loop_break.repetition.enabled",
    "loop_break.repetition_window": "loop_break.repetition.window",
    "loop_break.repetition_misses": "loop_break.repetition.misses",
    "loop_break.repetition_min_turns": "loop_break.repetition.min_turns",
    "loop_break.fruitless_turns": "loop_break.fruitless.turns",
    "loop_break.fruitless_share": "loop_break.fruitless.share",
    "loop_break.churn_changes": "loop_break.churn.changes",
    "loop_break.churn_repeats": "loop_break.churn.repeats",
    "loop_break.churn_window": "loop_break.churn.window",
    "loop_break.churn_min_turns": "loop_break.churn.min_turns",
    "loop_break.cycle_turns": "loop_break.cycle.turns",
    "loop_break.cycle_rounds": "loop_break.cycle.rounds",
    "loop_break.cycle_max_period": "loop_break.cycle.max_period",
}
"""Renamed keys of `[tool.zorkgpt]`, as dotted paths under it: old -> new, or old -> (new, what else changed) when the
value means something else too. A section's path (`action_loops`) stands for every key in it. A configuration that
gives an old key is refused with one line naming the new key (`renamed_message`), never read as the new one: each
setting has one name, and a file that still says the old one is told so instead of quietly meaning something else."""


def renamed_keys_in(tables: dict[str, Any]) -> list[str]:
    """The old keys of RENAMED_KEYS that `tables` (`[tool.zorkgpt]`, or overrides of it) gives, in its order."""
    return [path for path in _dotted_paths(tables) if path in RENAMED_KEYS]


def renamed_message(old: str) -> str:
    """`tool.zorkgpt.<old> was renamed to tool.zorkgpt.<new>`, with what else changed when the meaning did."""
    new, hint = (RENAMED_KEYS[old], "") if isinstance(RENAMED_KEYS[old], str) else RENAMED_KEYS[old]
    return f"tool.zorkgpt.{old} was renamed to tool.zorkgpt.{new}" + (f", {hint}" if hint else "")


def _dotted_paths(table: dict[str, Any], prefix: str = "") -> list[str]:
    """Every key of `table` and of the tables inside it, as a dotted path (`loop_break.churn.changes`)."""
    paths = []
    for key, value in table.items():
        paths.append(prefix + str(key))
        if isinstance(value, dict):
            paths += _dotted_paths(value, f"{prefix}{key}.")
    return paths


def _nest_dotted(values: dict[str, Any]) -> dict[str, Any]:
    """A `[tool.zorkgpt.loop_break]` table with its dotted keys (`churn.changes`, from `--set
    loop_break.churn.changes=6`) put in their sections. ValueError when a key is given both ways."""
    values = {key: dict(value) if isinstance(value, dict) else value for key, value in values.items()}
    for key in [k for k in values if "." in k]:
        section, _, name = key.partition(".")
        table = values.setdefault(section, {})
        if not isinstance(table, dict):
            raise ValueError(f"tool.zorkgpt.loop_break.{section} must be a table")
        if name in table:
            raise ValueError(f"tool.zorkgpt.loop_break.{key} given twice: as a dotted key and in its section")
        table[name] = values.pop(key)
    return values


class GameConfiguration(_Section):
    """The whole `[tool.zorkgpt]` table."""

    llm: LLMConfig = Field(default_factory=LLMConfig)
    """LLM endpoint and models."""
    gameplay: GameplayConfig = Field(default_factory=GameplayConfig)
    """Episode length and the turn loop."""
    orchestrator: OrchestratorConfig = Field(default_factory=OrchestratorConfig)
    """Turn-loop plumbing."""
    files: FilesConfig = Field(default_factory=FilesConfig)
    """Story file and output folder."""
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    """Learning across episodes."""
    loop_break: LoopBreakConfig = Field(default_factory=LoopBreakConfig)
    """The loop-break system, each detector's settings in a section of its own."""
    plugins: list[Annotated[str, StringConstraints(pattern=MODULE_NAME)]] = Field(default_factory=list)
    """Modules imported before the rest of the configuration is read (`from_toml`, `from_dict`), in every process
    that reads it (batch workers, Ray tasks, `--resume`): each registers agent or critic kinds, detectors, event
    types or markers (docs/extending.md). A module that does not import is one error line."""

    @classmethod
    def from_toml(cls, path: str | Path = "pyproject.toml", overrides: dict[str, dict[str, Any]] | None = None):
        """Load `[tool.zorkgpt.*]` from `path`, apply `overrides` ({section: {key: value}}) and validate.

        A missing file gives the defaults only when it is the default `pyproject.toml`; a named file must exist.
        """
        path = Path(path)
        data: Any = {}
        if path.is_file():
            try:
                with path.open("rb") as handle:
                    data = tomli.load(handle)
            except (tomli.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{path}: not valid TOML (UTF-8): {exc}") from None
            except OSError as exc:
                raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
            for key in ("tool", "zorkgpt"):
                data = data.get(key, {})
                if not isinstance(data, dict):
                    raise ConfigError(f"{path}: `{key}` must be a table")
        elif str(path) != "pyproject.toml":
            raise ConfigError(f"config file not found: {path}")
        return cls.from_dict(data, overrides, source=str(path))

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], overrides: dict[str, dict[str, Any]] | None = None, source: str = "config"
    ) -> GameConfiguration:
        overrides = overrides or {}
        _import_plugins(data, source)
        for tables, what in ((data, "configuration in"), (overrides, "override of")):
            if renamed := renamed_keys_in(tables):
                raise ConfigError(f"invalid {what} {source}: " + "; ".join(map(renamed_message, renamed)))
        try:
            merged, overrides = _with_sections_nested(data), _with_sections_nested(overrides)
        except ValueError as exc:
            raise ConfigError(f"invalid configuration in {source}: {exc}") from None
        for section, values in overrides.items():
            if not isinstance(merged.setdefault(section, {}), dict):
                raise ConfigError(f"invalid configuration in {source}: tool.zorkgpt.{section} must be a table")
            for key, value in values.items():
                if value is None:
                    continue
                table = merged[section].get(key)
                nested = section == "loop_break" and isinstance(value, dict) and isinstance(table, dict)
                merged[section][key] = {**table, **value} if nested else value  # a detector's section: key by key
        try:
            return cls.model_validate(merged)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, source)) from None

    def api_key(self) -> str | None:
        """The API key from the configured environment variable, or None when it is unset or empty."""
        return os.environ.get(self.llm.api_key_env) or None


@dataclass(frozen=True)
class RunOptions:
    """What a run takes besides the configuration (main.py's flags of the same names)."""

    rom: str | None = None
    """The story file; None: `$ZORK_ROM`, then `[tool.zorkgpt.files] game_file_path`."""
    actions: str | None = None
    """The replay agent's file of commands (`--agent replay --actions FILE`)."""
    quiet: bool = False
    """No per-turn console line."""


def _import_plugins(data: dict[str, Any], source: str) -> None:
    """Import the modules `[tool.zorkgpt] plugins` names, before anything they may register is looked for (a
    detector's section, a kind). A list of anything but strings is left to the validation to refuse."""
    plugins = data.get("plugins")
    if not isinstance(plugins, list) or not all(isinstance(name, str) for name in plugins):
        return
    try:
        import_modules(plugins)
    except PluginError as exc:
        raise ConfigError(f"invalid configuration in {source}: tool.zorkgpt.plugins: {exc}") from None


def _with_sections_nested(data: dict[str, Any]) -> dict[str, Any]:
    """`[tool.zorkgpt]` (or overrides of it), copied, with the loop break's dotted keys in their sections."""
    data = {section: dict(values) if isinstance(values, dict) else values for section, values in data.items()}
    if isinstance(data.get("loop_break"), dict):
        data["loop_break"] = _nest_dotted(data["loop_break"])
    return data


def _describe(exc: ValidationError, source: str) -> str:
    """One line, every problem in it: `invalid configuration in F: key: what (got V); key: ...`."""
    problems = []
    for error in exc.errors():
        key = "tool.zorkgpt." + ".".join(str(part) for part in error["loc"]) if error["loc"] else "tool.zorkgpt"
        if error["type"] == "extra_forbidden":
            allowed = _allowed_keys(error["loc"])
            problems.append(f"{key}: unknown key; allowed keys here: {', '.join(allowed)}")
        else:
            got = error.get("input")
            shown = f" (got {_shorten(repr(got))})" if not isinstance(got, dict) else ""
            problems.append(f"{key}: {error['msg']}{shown}")
    return f"invalid configuration in {source}: " + "; ".join(problems)


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _allowed_keys(loc: tuple) -> list[str]:
    model: type[BaseModel] = GameConfiguration
    for part in loc[:-1]:
        field = model.model_fields.get(str(part))
        if field is not None:
            inner = field.annotation
        else:  # a registered detector's section, the loop break's extra key
            inner = _REGISTERED_SECTIONS.get(str(part)) if model is LoopBreakConfig else None
        if not _is_section(inner):
            break
        model = inner
    return sorted([*model.model_fields, *(_REGISTERED_SECTIONS if model is LoopBreakConfig else ())])


# -- docs/configuration.md's tables, generated from the models above (one source of truth) --------------------
def markdown_tables() -> str:
    """One Markdown table per `[tool.zorkgpt.*]` section (a detector's section under the loop break's): key, default,
    meaning (the docstring) and allowed range."""
    blocks = [_table("tool.zorkgpt", GameConfiguration)]  # its own keys; its sections follow
    for section, field in GameConfiguration.model_fields.items():
        if not _is_section(field.annotation):
            continue
        blocks.append(_table(f"tool.zorkgpt.{section}", field.annotation))
        if field.annotation is LoopBreakConfig:
            blocks += [_table(f"tool.zorkgpt.{section}.{name}", model) for name, model in detector_sections().items()]
    return "\n\n".join(blocks) + "\n"


def _table(title: str, model: type[BaseModel]) -> str:
    lines = [f"### `[{title}]`", "", "| key | default | meaning |", "|---|---|---|"]
    for key, info in model.model_fields.items():
        if _is_section(info.annotation):
            continue  # a table of its own
        default = info.default_factory() if info.default_factory is not None else info.default
        meaning = " ".join((info.description or "").split()).replace("|", "\\|")
        allowed = _allowed(info)
        lines.append(f"| `{key}` | `{_toml(default)}` | {meaning}{' Allowed: ' + allowed + '.' if allowed else ''} |")
    return "\n".join(lines)


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict) and value and all(isinstance(v, ModelFamily) for v in value.values()):
        return f"{len(value)} families (docs/llm.md)"
    if isinstance(value, dict):
        return f"{len(value)} models (the price table)" if value else "{}"
    return str(value)


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


def _allowed(info: Any) -> str:
    bounds = []
    for item in info.metadata:
        for attribute, symbol in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(item, attribute, None)
            if value is not None:
                bounds.append(f"{symbol} {value}")
    return ", ".join(bounds)


if __name__ == "__main__":
    print(markdown_tables(), end="")
