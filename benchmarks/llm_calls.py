"""What the LLM path costs per turn: calls by role, prompt characters, tokens and dollars, on scripted play.

    uv run python -m benchmarks.llm_calls [--rom PATH] [--scenario NAME ...] [--config PATH] [--out FILE]
    uv run python -m benchmarks.llm_calls --show-prompts TURN    # what the agent and critic are sent at TURN

A scripted OpenAI-compatible server on 127.0.0.1 (`agents.scripted_llm.ScriptedServer`) plays the model, and the
episode runs as `main.py --agent llm --critic llm` would: the real `openai` client over HTTP, the LLM agent in
thought mode, the LLM critic reviewing objectives inside its verdicts, the loop break on. The scripted agent
replies `{"thought", "command"}` with the scenario's next command, and when its proposal was rejected it proposes
the same command again (a stubborn model: the most calls a rejection can cost). The scripted critic always
scores 0.8, so every rejection comes from the loop break. Tokens are the server's estimate (`CHARS_PER_TOKEN`)
and dollars are those tokens at the configured price of `agent_model` (gpt-4o-mini by default).

The default scenarios are the zork1 walkthrough (target: at most 2.0 calls per turn) and two stuck replays
(target: at most 2.5), with ZorkGPT's 71.5K prompt characters per turn as the reference for prompt size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from argparse import Namespace
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from loguru import logger

from agents.prompts import OBJECTIVE_REVIEW, REJECTED_HEADING, role_of
from agents.scripted_llm import ScriptedServer
from benchmarks.scenarios import ScenarioError, build_scenario
from session.config import ConfigError, GameConfiguration
from session.jericho_session import StoryFileError

DEFAULT_SCENARIOS = ("healthy_walkthrough", "dam_back_and_forth", "camp_in_room")
TARGET_CALLS_PER_TURN = {"healthy": 2.0, "stuck": 2.5}
ZORKGPT_PROMPT_CHARS_PER_TURN = 71_500
"""Characters ZorkGPT sends per turn on the same walkthrough (the figure issue 11 measured)."""
SCRIPTED_KEY = "scripted-local-key"


def scripted_player(commands: list[str]):
    """The reply function of a model that plays `commands` in order and judges every proposal 0.8."""
    position = -1
    review_marker = OBJECTIVE_REVIEW.splitlines()[0]

    def reply(messages: list[dict]) -> str:
        nonlocal position
        prompt = str(messages[-1].get("content", ""))
        if role_of(messages) == "agent":
            if REJECTED_HEADING not in prompt and len(messages) == 2:  # a new turn, not a retry
                position += 1
            command = commands[min(position, len(commands) - 1)]
            return json.dumps({"thought": f"Next step of my plan: {command}.", "command": command})
        verdict: dict = {"score": 0.8, "reason": "a plausible next step"}
        if review_marker in prompt:
            verdict |= {"completed": [], "new_objectives": []}
        return json.dumps(verdict)

    return reply


@contextmanager
def _scripted_environment(key_variable: str) -> Iterator[None]:
    """For the episode only: the scripted key in `key_variable`, and 127.0.0.1 reached without any proxy."""
    names = (key_variable, "NO_PROXY", "no_proxy")
    saved = {name: os.environ.get(name) for name in names}
    os.environ[key_variable] = SCRIPTED_KEY
    for name in names[1:]:
        os.environ[name] = ",".join(filter(None, [saved[name], "127.0.0.1", "localhost"]))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def measure(
    rom: Path,
    commands: list[str],
    config_path: Path,
    episode_dir: Path,
    shown: dict | None = None,
    reply: Callable[[list[dict]], str] | None = None,
    overrides: dict | None = None,
) -> dict:
    """Play `commands` through the LLM path against a scripted server; the figures of the episode.

    `shown` (a dict) receives the messages of the last agent and critic requests. `reply` answers every request
    instead of `scripted_player(commands)` (e.g. that player, wrapped to keep every prompt). `overrides`: more
    configuration, by section (e.g. `{"gameplay": {"seed": 1}}`)."""
    from main import build_orchestrator  # main wires agents and managers exactly as a user's run does

    with ScriptedServer(reply or scripted_player(commands)) as server:
        settings = {
            "llm": {"base_url": server.base_url, "max_retries": 0, "timeout_seconds": 10},
            "gameplay": {"agent": "llm", "critic": "llm", "max_turns_per_episode": len(commands)},
            "files": {"episode_dir": str(episode_dir)},
            # The turn's calls only: with a knowledge store, the LLM critic adds one synthesis call per episode.
            "knowledge": {"enabled": False},
        }
        for section, values in (overrides or {}).items():
            settings.setdefault(section, {}).update(values)
        config = GameConfiguration.from_toml(config_path, settings)
        with _scripted_environment(config.llm.api_key_env):
            orchestrator = build_orchestrator(config, Namespace(rom=str(rom), actions=None, quiet=True))
            summary = json.loads(orchestrator.play_episode().read_text())
        if shown is not None:
            shown.update(server.last_messages)
    turns = max(summary["turns"], 1)
    calls = summary["llm_calls"]
    return {
        "model": config.llm.agent_model,
        "turns": summary["turns"],
        "termination_reason": summary["termination_reason"],
        "score": summary.get("final_score"),
        "calls_per_turn": {role: round(n / turns, 3) for role, n in sorted(calls.items())},
        "total_calls_per_turn": round(sum(calls.values()) / turns, 3),
        "prompt_chars_per_turn": round(sum(summary["prompt_chars"].values()) / turns),
        "tokens_per_turn": round(sum(summary["tokens"].values()) / turns),
        "cost_usd": summary["cost_usd"],
        "cost_per_turn_usd": round(summary["cost_usd"]["total"] / turns, 6),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rom", default=os.environ.get("ZORK_ROM", "../shared/games/zork1.z5"))
    parser.add_argument("--scenario", action="append", help=f"default: {', '.join(DEFAULT_SCENARIOS)}")
    parser.add_argument("--config", default="pyproject.toml")
    parser.add_argument("--out", help="also write the figures to this JSON file")
    parser.add_argument("--show-prompts", type=int, metavar="TURN", help="print the prompts of this walkthrough turn")
    args = parser.parse_args(argv)
    logger.remove()
    rows = {}
    try:
        if args.show_prompts:
            print(example_prompts(Path(args.rom), args.show_prompts, Path(args.config)))
            return 0
        for name in args.scenario or DEFAULT_SCENARIOS:
            built = build_scenario(name, args.rom)
            with tempfile.TemporaryDirectory() as folder:
                figures = measure(Path(args.rom), built.commands, Path(args.config), Path(folder))
            kind = "healthy" if built.spec.kind == "healthy" else "stuck"
            rows[name] = {"kind": kind, "target_calls_per_turn": TARGET_CALLS_PER_TURN[kind], **figures}
            print(_line(name, rows[name]), flush=True)
    except (ScenarioError, ConfigError, StoryFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


def example_prompts(rom: Path, turn: int, config_path: Path) -> str:
    """The messages the agent and the critic are sent at walkthrough turn `turn`, as Markdown."""
    commands = build_scenario("healthy_walkthrough", rom).commands[: max(turn, 1)]
    shown: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        measure(rom, commands, config_path, Path(folder), shown)
    parts = []
    for role in ("agent", "critic"):
        for message in shown.get(role, []):
            parts += [f"**{role}, {message['role']} message:**", "", "```text", message["content"], "```", ""]
    return "\n".join(parts)


def _line(name: str, row: dict) -> str:
    roles = ", ".join(f"{role} {n:.2f}" for role, n in row["calls_per_turn"].items())
    verdict = "within" if row["total_calls_per_turn"] <= row["target_calls_per_turn"] else "ABOVE"
    return (
        f"{name}: {row['turns']} turns ({row['termination_reason']}); LLM calls/turn {row['total_calls_per_turn']:.2f}"
        f" ({roles}; {verdict} target {row['target_calls_per_turn']}); prompt chars/turn {row['prompt_chars_per_turn']:,}"
        f" (ZorkGPT {ZORKGPT_PROMPT_CHARS_PER_TURN:,}); tokens/turn {row['tokens_per_turn']:,};"
        f" cost ${row['cost_usd']['total']:.4f} (${row['cost_per_turn_usd']:.6f}/turn)"
    )


if __name__ == "__main__":
    sys.exit(main())
