"""What the LLM path costs per turn: calls by role, prompt characters, tokens and dollars, on scripted play.

    uv run python -m benchmarks.llm_calls [--rom PATH] [--scenario NAME ...] [--config PATH] [--out FILE]
                                          [--baseline FILE]   # an earlier run's JSON, beside this one's
    uv run python -m benchmarks.llm_calls --show-prompts TURN [--rom GAME]   # the agent's and critic's prompts at
                                                                             # TURN of GAME's walkthrough

A scripted OpenAI-compatible server on 127.0.0.1 (`agents.scripted_llm.ScriptedServer`) plays the model, and the
episode runs as `main.py --agent llm --critic llm` would (`playthroughs.llm_path.play`): the real `openai` client
over HTTP, the LLM agent in thought mode, the LLM critic reviewing objectives inside its verdicts, the loop break on.
The scripted model (`agents.scripted_llm.WalkthroughModel`) replies `{"thought", "command"}` with the turn's command
of the scenario, and when its proposal was rejected it proposes the same command again (a stubborn model: the most
calls a rejection can cost). The scripted critic always scores 0.8, so every rejection comes from the pre-check or
the loop break. Tokens are the server's estimate (`CHARS_PER_TOKEN`) and dollars are those tokens at the configured
price of `agent_model` (gpt-4o-mini by default). Each run also says which commands did not run as written, and why
(`playthroughs.llm_path.walkthrough_figures`).

The default scenarios are the zork1 walkthrough (target: at most 2.0 calls per turn) and two stuck replays
(target: at most 2.5), with ZorkGPT's 71.5K prompt characters per turn as the reference for prompt size.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from loguru import logger

from benchmarks import cli
from playthroughs.llm_path import measure, play
from playthroughs.scenarios import ScenarioError, build_scenario
from session.config import ConfigError
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.story_file import StoryFileError
from session.tables import markdown_table

DEFAULT_SCENARIOS = ("healthy_walkthrough", "dam_back_and_forth", "camp_in_room")
TARGET_CALLS_PER_TURN = {"healthy": 2.0, "stuck": 2.5}
ZORKGPT_PROMPT_CHARS_PER_TURN = 71_500
"""Characters ZorkGPT sends per turn on the same walkthrough."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rom",
        default=os.environ.get("ZORK_ROM", "../shared/games/zork1.z5"),
        help="a story file, or a game's name (e.g. zork2)",
    )
    parser.add_argument("--scenario", action="append", help=f"default: {', '.join(DEFAULT_SCENARIOS)}")
    cli.add_config(parser)
    parser.add_argument(
        "--critic", default="llm", choices=("llm", "when_risky"), help="the critic kind played (default: llm)"
    )
    cli.add_out(parser, help="also write the figures to this JSON file, and a table beside it (.md)")
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
        return cli.fail(exc)
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
