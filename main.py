"""Play one episode of Zork I (or any Jericho game) with the chosen agent and critic.

    uv run python main.py                      # offline agent + critic (no API key needed)
    uv run python main.py --agent walkthrough  # Jericho's walkthrough, forced through the full orchestrator
"""

from __future__ import annotations

import argparse
import sys

from loguru import logger

from agents.base import Agent, Critic
from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.llm_critic import LLMCritic
from agents.offline_agent import OfflineAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from managers.objectives import ObjectiveManager
from orchestration.zork_orchestrator_v2 import ZorkOrchestratorV2
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession, StoryFileError, resolve_story_file

EXIT_USAGE = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="ZorkGPT: an LLM agent harness for Zork I with a loop-break system")
    parser.add_argument("--agent", choices=["auto", "offline", "llm", "walkthrough", "replay"])
    parser.add_argument("--critic", choices=["auto", "offline", "llm"])
    parser.add_argument("--actions", help="replay: a file with one command per line")
    parser.add_argument("--rom", help="story file (default: $ZORK_ROM, then [tool.zorkgpt.files] game_file_path)")
    parser.add_argument("--config", default="pyproject.toml", help="TOML file holding [tool.zorkgpt.*]")
    parser.add_argument("--max-turns", type=int, help="override gameplay.max_turns_per_episode")
    parser.add_argument("--episode-dir", help="override files.episode_dir (default game_files/episodes)")
    parser.add_argument("--seed", type=int, help="emulator RNG seed (default: the game's walkthrough seed)")
    parser.add_argument("--quiet", action="store_true", help="no per-turn console log")
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace) -> GameConfiguration:
    overrides = {
        "gameplay": {
            "agent": args.agent,
            "critic": args.critic,
            "max_turns_per_episode": args.max_turns,
            "seed": args.seed,
        },
        "files": {"episode_dir": args.episode_dir},
    }
    return GameConfiguration.from_toml(args.config, overrides)


def resolve_kind(kind: str, api_key: str | None) -> str:
    return ("llm" if api_key else "offline") if kind == "auto" else kind


def build_orchestrator(config: GameConfiguration, args: argparse.Namespace) -> ZorkOrchestratorV2:
    session = JerichoSession(resolve_story_file(args.rom, config.files.game_file_path), seed=config.gameplay.seed)
    api_key = config.api_key()
    agent_kind = resolve_kind(config.gameplay.agent, api_key)
    critic_kind = resolve_kind(config.gameplay.critic, api_key)
    client = None
    if "llm" in (agent_kind, critic_kind):
        if not api_key:
            raise ConfigError(f"--agent/--critic llm needs an API key in ${config.llm.api_key_env}")
        client = LLMClient(config.llm, api_key, config.orchestrator.max_consecutive_llm_failures)
    agent = build_agent(agent_kind, session, client, config, args.actions)
    critic: Critic = LLMCritic(client, config.llm) if critic_kind == "llm" else OfflineCritic()
    objectives = ObjectiveManager(
        config.loop_break, "llm" if agent_kind == "llm" else "state", client, config.llm
    )
    return ZorkOrchestratorV2(config, session, agent, critic, client, objectives, quiet=args.quiet)


def build_agent(kind: str, session: JerichoSession, client, config: GameConfiguration, actions: str | None) -> Agent:
    if kind == "llm":
        return LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies)
    if kind == "walkthrough":
        commands = session.walkthrough()
        if not commands:
            raise ConfigError(f"{session.game_name} has no Jericho walkthrough: use --agent replay --actions FILE")
        return ReplayAgent(commands, kind="walkthrough")
    if kind == "replay":
        if not actions:
            raise ConfigError("--agent replay needs --actions FILE (one command per line)")
        try:
            return ReplayAgent.from_file(actions)
        except OSError as exc:
            raise ConfigError(f"cannot read --actions {actions}: {exc.strerror}") from None
    nouns = frozenset(w.word for w in session.dictionary() if w.is_noun)
    return OfflineAgent(nouns, session.dictionary_word_length)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logger.remove()
    try:
        config = load_config(args)
        orchestrator = build_orchestrator(config, args)
    except (ConfigError, StoryFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        summary_path = orchestrator.play_episode()
    except KeyboardInterrupt:  # Ctrl-C: the records so far and summary.json are written; no traceback
        print(f"interrupted; records in {orchestrator.recorder.folder}", file=sys.stderr)
        return 130
    print(summary_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
