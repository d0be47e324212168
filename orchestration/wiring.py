"""The wiring: configuration and run options to a session, agents, critic and orchestrator, as one user's run has
them. main.py, the batch runner, the benchmarks and the tests all build episodes here, so each plays exactly as
`main.py` does."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.base import Agent, Critic
from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.offline_agent import OfflineAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from managers.knowledge import Knowledge, load_store
from managers.objectives import ObjectiveManager
from orchestration.orchestrator import Orchestrator
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession, resolve_story_file
from viewer.report import write_report


@dataclass(frozen=True)
class RunOptions:
    """What a run takes besides the configuration (main.py's flags of the same names)."""

    rom: str | None = None
    """The story file; None: `$ZORK_ROM`, then `[tool.zorkgpt.files] game_file_path`."""
    actions: str | None = None
    """The replay agent's file of commands (`--agent replay --actions FILE`)."""
    quiet: bool = False
    """No per-turn console line."""


def resolve_kind(kind: str, api_key: str | None) -> str:
    """`auto` is the LLM when an API key is there, else the offline agent or critic."""
    return ("llm" if api_key else "offline") if kind == "auto" else kind


def build_session(config: GameConfiguration, options: RunOptions) -> JerichoSession:
    """The Jericho session for the story file given (else the configured one), under the configured seed."""
    return JerichoSession(resolve_story_file(options.rom, config.files.game_file_path), seed=config.gameplay.seed)


def open_knowledge(config: GameConfiguration, session: JerichoSession) -> Knowledge | None:
    """The game's knowledge store, read now (KnowledgeError when it cannot be used); None when it is off."""
    if not config.knowledge.enabled:
        return None
    default = Path(config.files.episode_dir) / "knowledge" / f"{session.game_name}.json"
    path = Path(config.knowledge.path) if config.knowledge.path else default
    return Knowledge(load_store(path, session.game_name, session.story_md5), path)


def build_orchestrator(
    config: GameConfiguration,
    options: RunOptions,
    episode_id: str | None = None,
    session: JerichoSession | None = None,
) -> Orchestrator:
    """Every part of one episode. `session` is reused across a run's episodes (the emulator is reset each time)."""
    session = session or build_session(config, options)
    api_key = config.api_key()
    agent_kind = resolve_kind(config.gameplay.agent, api_key)
    critic_kind = resolve_kind(config.gameplay.critic, api_key)
    client = None
    if "llm" in (agent_kind, critic_kind):
        if not api_key:
            raise ConfigError(f"--agent/--critic llm needs an API key in ${config.llm.api_key_env}")
        client = LLMClient(config.llm, api_key, config.orchestrator.max_consecutive_llm_failures)
    check_budget(config, agent_kind, critic_kind)
    agent = build_agent(agent_kind, session, client, config, options.actions)
    critic: Critic = (
        LLMCritic(client, config.llm, session.game_name, config.gameplay.critic_rejection_threshold)
        if critic_kind == "llm"
        else OfflineCritic()
    )
    # The LLM critic reviews objectives inside its verdicts; without it they are read off the game state.
    objectives = ObjectiveManager(config.loop_break, "llm" if critic_kind == "llm" else "state")
    orchestrator = Orchestrator(
        config,
        session,
        agent,
        critic,
        client,
        objectives,
        episode_id=episode_id,
        quiet=options.quiet,
        knowledge=open_knowledge(config, session),
        after_episode=(write_report,),
    )
    orchestrator.run_info = {"actions": str(Path(options.actions).resolve()) if options.actions else None}
    return orchestrator


def check_budget(config: GameConfiguration, agent_kind: str, critic_kind: str) -> None:
    """A budget needs a price for every model that will be called (else it could never be reached)."""
    if config.gameplay.max_cost_usd is None:
        return
    models = {config.llm.agent_model} if agent_kind == "llm" else set()
    models |= {config.llm.critic_model} if critic_kind == "llm" else set()
    missing = sorted(m for m in models if config.llm.price_of(m) is None)
    if missing:
        raise ConfigError(
            f"gameplay.max_cost_usd needs a price for {', '.join(missing)}: "
            f'add [tool.zorkgpt.llm.prices."{missing[0]}"]'
            " with input and output (USD per million tokens)"
        )


def build_agent(kind: str, session: JerichoSession, client, config: GameConfiguration, actions: str | None) -> Agent:
    if kind == "llm":
        return LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies, session.game_name)
    if kind == "walkthrough":
        commands = session.walkthrough()
        if not commands:
            raise ConfigError(f"{session.game_name} has no Jericho walkthrough: use --agent replay --actions FILE")
        return ReplayAgent(commands, kind="walkthrough")
    if kind == "replay":
        if not actions:
            raise ConfigError("--agent replay needs --actions FILE (one command per line)")
        return ReplayAgent.from_file(actions)
    # Every word, not only those Jericho flags as nouns: its flags differ from one process to the next on some story
    # files (lgop, sherlock), which made the offline agent's play differ from run to run.
    words = frozenset(w.word for w in session.dictionary())
    return OfflineAgent(words, session.dictionary_word_length)
