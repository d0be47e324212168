"""An episode on the LLM path against a scripted server, as `main.py --agent llm --critic llm` plays it, and how a
perfect player fared there.

A scripted OpenAI-compatible server on 127.0.0.1 (`agents.scripted_llm.ScriptedServer`) plays the model: the real
`openai` client over HTTP, the LLM agent in thought mode, the LLM critic reviewing objectives inside its verdicts, the
loop break on. The scripted model (`agents.scripted_llm.WalkthroughModel`) replies `{"thought", "command"}` with the
turn's command, and when its proposal was rejected it proposes the same command again (a stubborn model: the most
calls a rejection can cost). The scripted critic always scores 0.8, so every rejection comes from the pre-check or
the loop break. Tokens are the server's estimate (`CHARS_PER_TOKEN`) and dollars are those tokens at the configured
price of `agent_model`. `walkthrough_figures` says which commands did not run as written, and why.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from agents.prompts import role_of
from agents.scripted_llm import ReasoningModel, ScriptedServer, WalkthroughModel
from playthroughs.scenarios import ScenarioError
from playthroughs.trajectories import clean_outcomes
from session.commands import GameDictionary, normalize_command
from session.config import GameConfiguration, layered
from session.jericho_session import JerichoSession
from session.records import BLOCKING_SOURCES, LOOP_ENDINGS, UNPARSEABLE_FALLBACK, read_record_dicts, read_summary

SCRIPTED_KEY = "scripted-local-key"


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


def play(
    rom: Path,
    commands: list[str],
    config_path: Path,
    episode_dir: Path,
    shown: dict | None = None,
    more_overrides: dict | None = None,
    listen: Callable[[list[dict]], None] | None = None,
    reasoning: ReasoningModel | None = None,
    served: dict | None = None,
    critic: str = "llm",
) -> tuple[dict, list[dict], GameConfiguration]:
    """Play `commands` through the LLM path against a scripted server (`WalkthroughModel`): the episode's summary,
    its records and the configuration it ran with. `shown` (a dict) receives the messages of the last agent and
    critic requests; `more_overrides` ({section: {key: value}}) are applied to the configuration first; `listen`
    sees every request's messages (benchmarks.context_truth keeps the prompts); with `reasoning` the server plays a
    reasoning model, and `served` (a dict) receives what it refused and cut (`refused`, `cut`) and every request's
    parameters (`bodies`)."""
    from orchestration.wiring import RunOptions, build_orchestrator

    model = WalkthroughModel(commands)

    def reply(messages: list[dict]) -> str:
        if listen is not None:
            listen(messages)
        return model(messages)

    with ScriptedServer(reply, reasoning) as server:
        overrides = layered(
            more_overrides,
            {
                "llm": {"base_url": server.base_url, "max_retries": 0, "timeout_seconds": 10},
                "gameplay": {"agent": "llm", "critic": critic, "max_turns_per_episode": len(commands)},
                "files": {"episode_dir": str(episode_dir)},
                # The turn's calls only: with a knowledge store, the LLM critic adds one synthesis call per episode.
                "knowledge": {"enabled": False},
            },
        )
        config = GameConfiguration.from_toml(config_path, overrides)
        with _scripted_environment(config.llm.api_key_env):
            orchestrator = build_orchestrator(config, RunOptions(rom=str(rom), quiet=True))
            model.turn = lambda: orchestrator.game_state.turn_count + 1  # the turn being played
            summary_path = orchestrator.play_episode()
            orchestrator.session.close()
        if shown is not None:
            shown.update(server.last_messages)
        if served is not None:
            served.update(refused=server.refused, cut=server.cut, bodies=list(server.bodies))
    return read_summary(summary_path.parent), read_record_dicts(summary_path.parent), config


def measure(
    rom: Path,
    commands: list[str],
    config_path: Path,
    episode_dir: Path,
    shown: dict | None = None,
    more_overrides: dict | None = None,
    listen: Callable[[list[dict]], None] | None = None,
    critic: str = "llm",
    notes: frozenset[int] = frozenset(),
) -> dict:
    """Play `commands` through the LLM path against a scripted server (`play`); the figures of the episode. `notes`:
    the steps that are notes to the reader (`notes_to_the_reader`), which may run nothing.

    `cacheable_prefix_share`: of the characters of the agent's requests, the share that a provider's prompt cache
    could serve, the start each request shares with the one before (the system prompt, then the game's opening)."""
    shared = Counter()
    previous = ""

    def heard(messages: list[dict]) -> None:
        nonlocal previous
        if listen is not None:
            listen(messages)
        if role_of(messages) == "agent":
            text = "\n".join(str(m.get("content", "")) for m in messages)
            shared["chars"] += len(text)
            shared["prefix"] += len(os.path.commonprefix([previous, text]))
            previous = text

    summary, records, config = play(
        rom, commands, config_path, episode_dir, shown, more_overrides, heard, critic=critic
    )
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
        "cacheable_prefix_share": round(shared["prefix"] / shared["chars"], 3) if shared["chars"] else 0.0,
        "tokens_per_turn": round(sum(summary["tokens"].values()) / turns),
        "cost_usd": summary["cost_usd"],
        "cost_per_turn_usd": round(summary["cost_usd"]["total"] / turns, 6),
        **walkthrough_figures(commands, records, summary, notes),
    }


def walkthrough_figures(
    commands: list[str], records: list[dict], summary: dict, notes: frozenset[int] = frozenset()
) -> dict:
    """How a perfect player fared: each step is meant to run as it is written, but for the steps of `notes`
    (`notes_to_the_reader`), which may instead run nothing.

    `refused`: steps the harness did not run as written, by what turned them down (the pre-check, the reply parser,
    the loop break's blocks, an interpreter command, or the critic's score after the loop break's penalties);
    `notes_not_sent`: notes to the reader that ran nothing, as they should;
    `told_then_run`: steps the pre-check answered with the game's words, and that ran when proposed again;
    `stopped`: the loop break ended the episode before the last step."""
    refused: Counter = Counter()
    examples: list[dict] = []
    told_then_run = notes_not_sent = 0
    for record in records:
        if record["turn"] > len(commands):
            break
        step = commands[record["turn"] - 1]
        sources = [c["source"] for c in record["candidates"] if not c["accepted"]]
        ran_as_written = record["ran"] and normalize_command(record["command"]) == normalize_command(step)
        if ran_as_written:
            told_then_run += "precheck" in sources
            continue
        if record["turn"] in notes and not record["ran"]:
            notes_not_sent += 1
            continue
        kind = refusal_kind(record, sources)
        refused[kind] += 1
        if len(examples) < MAX_EXAMPLES:
            reasons = [c["reason"] for c in record["candidates"] if not c["accepted"]] or record["parse_failures"]
            examples.append(
                {
                    "turn": record["turn"],
                    "step": step,
                    "ran": record["command"],
                    "by": kind,
                    "reason": str(reasons[-1])[:160] if reasons else "",
                }
            )
    ended_early = summary["turns"] < len(commands)
    return {
        "steps": len(commands),
        "refused": dict(refused),
        "refused_steps": sum(refused.values()),
        "refused_examples": examples,
        "notes_not_sent": notes_not_sent,
        "told_then_run": told_then_run,
        "stopped": summary["termination_reason"] in LOOP_ENDINGS and ended_early,
    }


MAX_EXAMPLES = 8
"""Refused steps listed by `walkthrough_figures` (the count covers them all)."""


def refusal_kind(record: dict, sources: list[str]) -> str:
    """What kept a step from running as written: `reply` (no reply of the turn could be read as a command), a
    blocking source (`precheck`, `ban`, `final_rejection`, `not_run`), else `critic` (the score, penalties
    included, fell below the threshold)."""
    if str(record.get("fallback") or "").startswith(UNPARSEABLE_FALLBACK):
        return "reply"
    blocking = [source for source in sources if source in BLOCKING_SOURCES]
    return blocking[-1] if blocking else "critic"


def walkthrough_check(rom: Path, config_path: Path, episode_dir: Path) -> dict:
    """The game's walkthrough through the LLM path (`measure`), next to plain Jericho's final score for it; its
    notes to the reader are no refused steps."""
    commands = JerichoSession(rom).walkthrough()
    if not commands:
        raise ScenarioError(f"{rom.name} has no Jericho walkthrough")
    clean = clean_outcomes(rom, commands)[-1].score
    notes = notes_to_the_reader(rom, commands)
    return {"clean_score": clean, **measure(rom, commands, config_path, episode_dir, notes=notes)}


def notes_to_the_reader(story: Path, commands: list[str]) -> frozenset[int]:
    """The steps (numbered from 1) that are no command: plain Jericho plays them and nothing changes, and the game
    knows no word of their first (curses' `[ Repeatedly "turn sceptre" until the coffin opens ]`, answered "That's
    not a verb I recognise."). Prose the game would not understand is never sent; a reader does what the note says."""
    session = JerichoSession(story)
    before = session.reset()
    known = GameDictionary.of((entry.word for entry in session.dictionary()), session.dictionary_word_length)
    notes = set()
    for turn, step in enumerate(commands, start=1):
        after = session.step(step)
        if not known.knows((step.split() or [""])[0]) and after.world_hash == before.world_hash:
            notes.add(turn)
        before = after
    return frozenset(notes)
