"""The wiring: configuration and run options to a session, agents, critic and orchestrator, as one user's run has
them. main.py, the batch runner, the benchmarks and the tests all build episodes here, so each plays exactly as
`main.py` does."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, TextIO

from agents.base import Agent, Critic
from agents.llm_client import LLMClient
from agents.registry import AGENTS, CRITICS, Kind
from managers.knowledge import Knowledge, load_store
from managers.objectives import ObjectiveManager
from orchestration.orchestrator import Orchestrator
from session import telemetry
from session.config import ConfigError, GameConfiguration, RunOptions
from session.jericho_session import JerichoSession
from session.story_file import resolve_story_file
from viewer.report import write_report


def build_session(config: GameConfiguration, options: RunOptions) -> JerichoSession:
    """The Jericho session for the story file given (else the configured one), under the configured seed."""
    return JerichoSession(
        resolve_story_file(options.rom, config.files.game_file_path),
        seed=config.gameplay.seed,
        time_limit=config.gameplay.emulator_timeout_seconds,
    )


def open_knowledge(config: GameConfiguration, session: JerichoSession) -> Knowledge | None:
    """The game's knowledge store, read now (KnowledgeError when it cannot be used); None when it is off."""
    if not config.knowledge.enabled:
        return None
    default = Path(config.files.episode_dir) / "knowledge" / f"{session.game_name}.json"
    path = Path(config.knowledge.path) if config.knowledge.path else default
    return Knowledge(load_store(path, session.game_name, session.story_md5), path)


def chosen_kinds(
    config: GameConfiguration, options: RunOptions, agent: bool = True, critic: bool = True
) -> tuple[Kind[Agent] | None, Kind[Critic] | None]:
    """The configured agent and critic kinds (agents.registry), `auto` resolved; a ConfigError when one is not
    registered, or lacks what it needs (an API key, `--actions FILE`), or a budget lacks a price for its models.
    `agent` / `critic` False: that role's part is given ready-made, and its kind is None (neither looked up nor
    checked)."""
    api_key = config.llm.api_key()
    agent_kind = AGENTS.resolve(config.gameplay.agent, api_key) if agent else None
    critic_kind = CRITICS.resolve(config.gameplay.critic, api_key) if critic else None
    for role, kind in (("agent", agent_kind), ("critic", critic_kind)):
        if kind is not None and kind.needs_llm and not api_key:
            raise ConfigError(f"--{role} {kind.name} needs an API key in ${config.llm.api_key_env}")
    if agent_kind is not None and agent_kind.needs_actions and not options.actions:
        raise ConfigError(f"--agent {agent_kind.name} needs --actions FILE (one command per line)")
    check_budget(config, *(kind for kind in (agent_kind, critic_kind) if kind is not None))
    return agent_kind, critic_kind


CONFIGURED = "configured"
"""`build_orchestrator(knowledge=...)`: the knowledge store the configuration names (`open_knowledge`)."""


def build_orchestrator(
    config: GameConfiguration,
    options: RunOptions,
    episode_id: str | None = None,
    session: JerichoSession | None = None,
    *,
    agent: Agent | None = None,
    critic: Critic | None = None,
    llm_client: LLMClient | None = None,
    objectives: ObjectiveManager | None = None,
    knowledge: Knowledge | Literal["configured"] | None = CONFIGURED,
    after_episode: Sequence[Callable[[Path], None]] = (write_report,),
    human_input: TextIO | None = None,
    human_output: TextIO | None = None,
) -> Orchestrator:
    """Every part of one episode, as main.py builds it. `session` is reused across a run's episodes (the emulator is
    reset each time).

    A part given is used as it is, and the rest is built around it as for main.py: `agent` or `critic` (a
    benchmark's looper, a test's scripted one) stands for the configured kind, which is then neither looked up nor
    checked; `llm_client` serves every part that calls a model (else one is made when a configured kind needs it);
    `objectives`, else those the critic keeps; `knowledge`, a store already open, or None to play fresh (else the
    configured one); `after_episode`, the steps run on the finished folder (else report.html); `human_input` and
    `human_output`, where a human gate asks (else the terminal). This process sends the episode's traces where
    `[tool.zorkgpt.telemetry]` and the environment say (session.telemetry; a ConfigError for an endpoint that is no
    URL)."""
    telemetry.configure(config.telemetry, (config.llm.api_key(),))
    session = session or build_session(config, options)
    agent_kind, critic_kind = chosen_kinds(config, options, agent=agent is None, critic=critic is None)
    if llm_client is None:
        llm_client = llm_client_for(config, (agent_kind, critic_kind))
    if agent_kind is not None:
        agent = agent_kind.build(session, config, options, llm_client)
    if critic_kind is not None:
        critic = critic_kind.build(session, config, options, llm_client)
    if objectives is None:
        # A critic that reviews the objectives in its verdicts keeps them; otherwise they are read off the game state.
        objectives = ObjectiveManager(config.loop_break, "llm" if critic.reviews_objectives else "state")
    orchestrator = Orchestrator(
        config,
        session,
        agent,
        critic,
        llm_client,
        objectives,
        episode_id=episode_id,
        quiet=options.quiet,
        human_input=human_input,
        human_output=human_output,
        knowledge=open_knowledge(config, session) if isinstance(knowledge, str) else knowledge,
        after_episode=after_episode,
    )
    orchestrator.run_info = {"actions": str(Path(options.actions).resolve()) if options.actions else None}
    return orchestrator


def llm_client_for(
    config: GameConfiguration, kinds: Sequence[Kind | None], client_type: type[LLMClient] = LLMClient, **extra
) -> LLMClient | None:
    """A `client_type` (built with `extra`) for the kinds that call a model; None when none of them does."""
    if not any(kind is not None and kind.needs_llm for kind in kinds):
        return None
    return client_type(config.llm, config.llm.api_key(), config.orchestrator.max_consecutive_llm_failures, **extra)


def check_budget(config: GameConfiguration, *kinds: Kind, budget: str | None = None) -> None:
    """A budget needs a price for every model the kinds will call (else it could never be reached): the episode's
    own (`gameplay.max_cost_usd`, when set), or the one named `budget` (a batch's `--max-cost-usd`) whatever the
    episode's."""
    if budget is None and config.gameplay.max_cost_usd is None:
        return
    models = {model for kind in kinds if kind.models is not None for model in kind.models(config.llm)}
    missing = sorted(m for m in models if config.llm.price_of(m) is None)
    if missing:
        raise ConfigError(
            f"{budget or 'gameplay.max_cost_usd'} needs a price for {', '.join(missing)}: "
            f'add [tool.zorkgpt.llm.prices."{missing[0]}"]'
            " with input and output (USD per million tokens)"
        )
