"""Agent and critic kinds by name: how each is built for an episode and what it needs.

`[tool.zorkgpt.gameplay] agent` / `critic` and main.py's `--agent` / `--critic` name a kind registered here, or a
plugin's object by its path; the wiring (orchestration/wiring.py) looks it up, creates the LLM client when a chosen
kind calls a model, checks the budget against the models it declares, and builds it. A new kind is one `register`
call, from any module (a plugin that `[tool.zorkgpt] plugins` names, docs/extending.md):

    AGENTS.register(Kind("toy", lambda session, config, options, client: ToyAgent()))

A path `module:attribute` (`--agent my_pkg.agents:Mine`) names, in a module imported on the spot, either a `Kind`, or
a callable `build(session, config, options, client)` that returns the agent or critic: an Agent or Critic class
whose constructor takes those four, or a function. A callable is a kind that calls no model (no client, no API key);
a kind that does is a `Kind` with `models`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from agents.base import Agent, Critic
from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.llm_settings import LLMConfig
from agents.offline_agent import OfflineAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from agents.risky_critic import WhenRiskyCritic
from session.config import KIND_NAME, ConfigError, GameConfiguration, RunOptions
from session.game import GameSession
from session.plugins import PluginError, import_object, is_object_path
from session.story_file import WALKTHROUGH_SUFFIX

T = TypeVar("T", Agent, Critic)

AUTO = "auto"
"""Not a kind: with the API key variable set, the registry's `with_key` kind (`llm` for the agent, `when_risky` for
the critic), else `offline`."""


@dataclass(frozen=True)
class Kind(Generic[T]):
    """One agent or critic kind: its name, how to build it, and what it needs."""

    name: str
    """What the configuration and the command line call it (session.config.KIND_NAME)."""
    build: Callable[[GameSession, GameConfiguration, RunOptions, LLMClient | None], T]
    """`build(session, config, options, client)`: one for an episode. `client` is None unless `models` is set."""
    models: Callable[[LLMConfig], tuple[str, ...]] | None = None
    """The configured models its calls go to (a budget needs a price for each); None: it calls no model, and
    needs neither an API key nor a client."""
    needs_actions: bool = False
    """It plays the commands of `--actions FILE` (`RunOptions.actions`), and cannot be built without them."""

    @property
    def needs_llm(self) -> bool:
        return self.models is not None


class Registry(Generic[T]):
    """The kinds of one role (`agent` or `critic`), in the order they were registered."""

    def __init__(self, role: str, with_key: str = "llm"):
        self.role = role
        self.with_key = with_key
        """The kind `auto` means when the API key variable is set."""
        self._kinds: dict[str, Kind[T]] = {}

    def register(self, kind: Kind[T]) -> Kind[T]:
        """Add a kind; ValueError when the name is taken, is `auto`, or is no kind name (KIND_NAME)."""
        if kind.name == AUTO or not re.fullmatch(KIND_NAME, kind.name):
            raise ValueError(f"{kind.name!r} cannot name a kind: not `{AUTO}`, and matching {KIND_NAME}")
        if kind.name in self._kinds:
            raise ValueError(f"the {self.role} kind {kind.name!r} is registered already")
        self._kinds[kind.name] = kind
        return kind

    def unregister(self, name: str) -> None:
        del self._kinds[name]

    def kinds(self) -> tuple[Kind[T], ...]:
        return tuple(self._kinds.values())

    def choices(self) -> tuple[str, ...]:
        """What `--agent` / `--critic` accept: `auto` and every kind's name."""
        return (AUTO, *self._kinds)

    def get(self, name: str) -> Kind[T]:
        """The kind of this name; a ConfigError naming every kind when there is none."""
        try:
            return self._kinds[name]
        except KeyError:
            raise ConfigError(
                f"tool.zorkgpt.gameplay.{self.role}: no {self.role} kind {name!r}; "
                f"the kinds: {', '.join(self.choices())}; or a plugin's module:attribute"
            ) from None

    def resolve(self, name: str, api_key: str | None) -> Kind[T]:
        """The kind a configured name means: `auto` resolved (see AUTO), a path imported (`from_path`)."""
        if is_object_path(name):
            return self.from_path(name)
        return self.get((self.with_key if api_key else "offline") if name == AUTO else name)

    def from_path(self, path: str) -> Kind[T]:
        """The kind `module:attribute` names: a `Kind` as it is, or a callable `build(session, config, options,
        client)` as a kind of that name calling no model. A ConfigError when it does not import or is neither."""
        where = f"tool.zorkgpt.gameplay.{self.role}"
        try:
            found = import_object(path)
        except PluginError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if isinstance(found, Kind):
            return found
        if callable(found) and _takes_four(found):
            return Kind(path, found)
        raise ConfigError(f"{where}: {path} is neither a Kind nor a callable taking (session, config, options, client)")


def _takes_four(build: Callable) -> bool:
    """`build(session, config, options, client)` binds (a class: its constructor); True when Python cannot tell."""
    try:
        inspect.signature(build).bind(None, None, None, None)
    except TypeError:
        return False
    except ValueError:  # no signature to read (some built-ins)
        return True
    return True


AGENTS: Registry[Agent] = Registry("agent")
CRITICS: Registry[Critic] = Registry("critic", with_key="when_risky")
"""With a key, `auto` is the critic that asks its model only when the verdict can change the outcome: on zork1's
walkthrough and stuck scenarios it makes about a fifth of the `llm` critic's calls, and every loop ends at the same
turn (docs/results/llm_calls_when_risky.md)."""


# -- the built-in kinds ----------------------------------------------------------------------------------------------
def _offline_agent(session: GameSession, config: GameConfiguration, options: RunOptions, client) -> OfflineAgent:
    # Every word, not only those Jericho flags as nouns: its flags differ from one process to the next on some story
    # files (lgop, sherlock), which made the offline agent's play differ from run to run.
    words = frozenset(w.word for w in session.dictionary())
    return OfflineAgent(words, session.dictionary_word_length)


def _llm_agent(session: GameSession, config: GameConfiguration, options: RunOptions, client) -> LLMAgent:
    return LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies, session.game_name)


def _walkthrough_agent(session: GameSession, config: GameConfiguration, options: RunOptions, client) -> ReplayAgent:
    commands = session.walkthrough()
    if not commands:
        raise ConfigError(
            f"{session.game_name} has no walkthrough (Jericho's, or a {WALKTHROUGH_SUFFIX} file beside the story "
            "file): use --agent replay --actions FILE"
        )
    return ReplayAgent(commands, kind="walkthrough")


def _replay_agent(session: GameSession, config: GameConfiguration, options: RunOptions, client) -> ReplayAgent:
    return ReplayAgent.from_file(options.actions)


def _llm_critic(session: GameSession, config: GameConfiguration, options: RunOptions, client) -> LLMCritic:
    return LLMCritic(client, config.llm, session.game_name, config.gameplay.critic_rejection_threshold)


AGENTS.register(Kind("offline", _offline_agent))
AGENTS.register(Kind("llm", _llm_agent, models=lambda llm: (llm.agent_model,)))
AGENTS.register(Kind("walkthrough", _walkthrough_agent))
AGENTS.register(Kind("replay", _replay_agent, needs_actions=True))
CRITICS.register(Kind("offline", lambda session, config, options, client: OfflineCritic()))
CRITICS.register(Kind("llm", _llm_critic, models=lambda llm: (llm.critic_model,)))
CRITICS.register(
    Kind(
        "when_risky",
        lambda session, config, options, client: WhenRiskyCritic(
            _llm_critic(session, config, options, client), config.gameplay.critic_rejection_threshold
        ),
        models=lambda llm: (llm.critic_model,),
    )
)
