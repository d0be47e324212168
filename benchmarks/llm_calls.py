"""What the LLM path costs per turn: calls by role, prompt characters, tokens and dollars, on scripted play.

    uv run python -m benchmarks.llm_calls [--rom PATH] [--scenario NAME ...] [--config PATH] [--out FILE]
                                          [--baseline FILE]   # an earlier run's JSON, beside this one's
    uv run python -m benchmarks.llm_calls --show-prompts TURN [--rom GAME]   # the agent's and critic's prompts at
                                                                             # TURN of GAME's walkthrough

A scripted OpenAI-compatible server on 127.0.0.1 (`agents.scripted_llm.ScriptedServer`) plays the model, and the
episode runs as `main.py --agent llm --critic llm` would: the real `openai` client over HTTP, the LLM agent in
thought mode, the LLM critic reviewing objectives inside its verdicts, the loop break on. The scripted model
(`agents.scripted_llm.WalkthroughModel`) replies `{"thought", "command"}` with the turn's command of the scenario,
and when its proposal was rejected it proposes the same command again (a stubborn model: the most calls a rejection
can cost). The scripted critic always scores 0.8, so every rejection comes from the pre-check or the loop break.
Tokens are the server's estimate (`CHARS_PER_TOKEN`) and dollars are those tokens at the configured price of
`agent_model` (gpt-4o-mini by default). Each run also says which commands did not run as written, and why
(`walkthrough_figures`).

The default scenarios are the zork1 walkthrough (target: at most 2.0 calls per turn) and two stuck replays
(target: at most 2.5), with ZorkGPT's 71.5K prompt characters per turn as the reference for prompt size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from loguru import logger

from agents.prompts import role_of
from agents.scripted_llm import ReasoningModel, ScriptedServer, WalkthroughModel
from playthroughs.scenarios import ScenarioError, build_scenario
from playthroughs.trajectories import clean_outcomes
from session.commands import GameDictionary, normalize_command
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.records import BLOCKING_SOURCES, LOOP_ENDINGS, UNPARSEABLE_FALLBACK, read_record_dicts, read_summary
from session.story_file import StoryFileError
from session.tables import markdown_table

DEFAULT_SCENARIOS = ("healthy_walkthrough", "dam_back_and_forth", "camp_in_room")
TARGET_CALLS_PER_TURN = {"healthy": 2.0, "stuck": 2.5}
ZORKGPT_PROMPT_CHARS_PER_TURN = 71_500
"""Characters ZorkGPT sends per turn on the same walkthrough."""
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
        overrides = {section: dict(values) for section, values in (more_overrides or {}).items()}
        for section, values in {
            "llm": {"base_url": server.base_url, "max_retries": 0, "timeout_seconds": 10},
            "gameplay": {"agent": "llm", "critic": critic, "max_turns_per_episode": len(commands)},
            "files": {"episode_dir": str(episode_dir)},
            # The turn's calls only: with a knowledge store, the LLM critic adds one synthesis call per episode.
            "knowledge": {"enabled": False},
        }.items():
            overrides.setdefault(section, {}).update(values)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rom",
        default=os.environ.get("ZORK_ROM", "../shared/games/zork1.z5"),
        help="a story file, or a game's name (e.g. zork2)",
    )
    parser.add_argument("--scenario", action="append", help=f"default: {', '.join(DEFAULT_SCENARIOS)}")
    parser.add_argument("--config", default="pyproject.toml")
    parser.add_argument(
        "--critic", default="llm", choices=("llm", "when_risky"), help="the critic kind played (default: llm)"
    )
    parser.add_argument("--out", help="also write the figures to this JSON file, and a table beside it (.md)")
    parser.add_argument("--baseline", help="a JSON file an earlier run wrote: its figures go beside these in the table")
    parser.add_argument(
        "--show-prompts",
        type=int,
        metavar="TURN",
        help="print the prompts of this turn of the game's walkthrough (any game that has one)",
    )
    args = parser.parse_args(argv)
    logger.remove()
    rows = {}
    try:
        rom = story_path(args.rom)
        if args.show_prompts is not None:
            print(example_prompts(rom, args.show_prompts, Path(args.config)))
            return 0
        for name in args.scenario or DEFAULT_SCENARIOS:
            built = build_scenario(name, rom)
            with tempfile.TemporaryDirectory() as folder:
                figures = measure(rom, built.commands, Path(args.config), Path(folder), critic=args.critic)
            kind = "healthy" if built.spec.kind == "healthy" else "stuck"
            rows[name] = {"kind": kind, "target_calls_per_turn": TARGET_CALLS_PER_TURN[kind], **figures}
            print(_line(name, rows[name]), flush=True)
    except (ScenarioError, ConfigError, StoryFileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(rows, indent=2) + "\n")
        baseline = json.loads(Path(args.baseline).read_text()) if args.baseline else {}
        out.with_suffix(".md").write_text(markdown(rows, baseline, command("benchmarks.llm_calls", argv), commit()))
    return 0


def markdown(rows: dict, baseline: dict, how: str, at: str) -> str:
    """The figures as a table, with the baseline's (an earlier run's JSON) beside them where it has the scenario."""

    def cell(name: str, key: str, fmt: str) -> str:
        now = format(rows[name][key], fmt)
        before = baseline.get(name, {}).get(key)
        return now if before is None else f"{format(before, fmt)} → {now}"

    lines = [
        "# LLM calls, prompt size and cost per turn (benchmarks/llm_calls.py)",
        "",
        f"Command: `{how}`  ",
        f"Commit: {at}. Cells `a → b`: the baseline's figure, then this run's. ZorkGPT sends about "
        f"{ZORKGPT_PROMPT_CHARS_PER_TURN:,} prompt characters a turn on the same walkthrough.",
        "",
    ]
    columns = (
        "scenario",
        "turns (end)",
        "calls/turn: agent, critic",
        "total (target)",
        "prompt chars/turn",
        "cacheable prefix",
        "tokens/turn",
        "cost/turn",
        "steps not run as written",
    )
    table = [
        (
            name,
            f"{row['turns']} ({row['termination_reason']})",
            ", ".join(f"{n:.2f}" for n in row["calls_per_turn"].values()),
            f"{cell(name, 'total_calls_per_turn', '.2f')} (≤ {row['target_calls_per_turn']})",
            cell(name, "prompt_chars_per_turn", ","),
            cell(name, "cacheable_prefix_share", ".0%"),
            cell(name, "tokens_per_turn", ","),
            f"${row['cost_per_turn_usd']:.6f}",
            row.get("refused_steps", 0),
        )
        for name, row in rows.items()
    ]
    return "\n".join(lines + markdown_table(columns, table)) + "\n"


def example_prompts(rom: Path, turn: int, config_path: Path) -> str:
    """The messages the agent and the critic are sent at turn `turn` of the game's walkthrough, as Markdown.

    ScenarioError when the game has no walkthrough or a shorter one."""
    walkthrough = JerichoSession(rom).walkthrough()
    if not walkthrough:
        raise ScenarioError(f"{rom.name} has no Jericho walkthrough: there are no walkthrough prompts to show")
    if not 1 <= turn <= len(walkthrough):
        raise ScenarioError(f"--show-prompts {turn}: {rom.name}'s walkthrough has turns 1 to {len(walkthrough)}")
    shown: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        summary, records, _ = play(rom, walkthrough[:turn], config_path, Path(folder), shown)
    played = records[-1]["turn"] if records else 0
    heading = f"# {summary['game']}: the prompts of walkthrough turn {played}"
    if played < turn:
        heading += f" (the episode ended there: {summary['termination_reason']})"
    parts = [heading, "", f"Command: `{command('benchmarks.llm_calls')}`  ", f"Commit: {commit()}", ""]
    for role in ("agent", "critic"):
        for message in shown.get(role, []):
            parts += [f"**{role}, {message['role']} message:**", "", "```text", message["content"], "```", ""]
    return "\n".join(parts)


def story_path(rom: str) -> Path:
    """`--rom`: a story file, or a game's name found as batch runs find them (`zork2`: beside $ZORK_ROM, in games/
    or ../shared/games)."""
    from batch.runner import BatchError, story_files

    path = Path(rom)
    if path.is_file():
        return path
    if rom and path.name == rom and not path.suffix:  # a bare name, not a path
        try:
            return story_files(rom)[0]
        except BatchError:
            pass
    raise StoryFileError(f"--rom {rom}: no story file, nor a game of that name")


def _line(name: str, row: dict) -> str:
    roles = ", ".join(f"{role} {n:.2f}" for role, n in row["calls_per_turn"].items())
    verdict = "within" if row["total_calls_per_turn"] <= row["target_calls_per_turn"] else "ABOVE"
    return (
        f"{name}: {row['turns']} turns ({row['termination_reason']}); LLM calls/turn {row['total_calls_per_turn']:.2f}"
        f" ({roles}; {verdict} target {row['target_calls_per_turn']});"
        f" prompt chars/turn {row['prompt_chars_per_turn']:,}"
        f" (ZorkGPT {ZORKGPT_PROMPT_CHARS_PER_TURN:,}), {row['cacheable_prefix_share']:.0%} a cacheable prefix;"
        f" tokens/turn {row['tokens_per_turn']:,};"
        f" cost ${row['cost_usd']['total']:.4f} (${row['cost_per_turn_usd']:.6f}/turn)"
    )


if __name__ == "__main__":
    sys.exit(main())
