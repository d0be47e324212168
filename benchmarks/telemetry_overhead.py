"""What tracing costs an episode when its receiver is of no use: zork1 on the LLM path (the walkthrough model of
agents.scripted_llm on 127.0.0.1, a span per turn and per call) played N turns with no exporter, with the endpoint
unreachable (a closed port) and with it hanging (a socket that accepts and never answers), the three alternated
round after round. The episode's wall time is summary.json's (`wall_seconds`); its figures and records must be the
same under all three. A machine other work shares slows single runs at random, by more than tracing could: each
receiver is judged by the median over the rounds of its time against the untraced run of the same round (the runs of
a round follow each other, so what slows them is much the same), and beside it by this process's CPU time.

    uv run python -m benchmarks.telemetry_overhead --rom ../shared/games/zork1.z5 --turns 150 --rounds 9 \\
        --out docs/results/telemetry_overhead.json

writes the JSON and a table beside it (.md), with the command and commit.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from loguru import logger

from agents.scripted_llm import ScriptedServer, WalkthroughModel
from benchmarks import cli
from orchestration.orchestrator import Orchestrator
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.receivers import closed_endpoint, hanging_endpoint
from session import telemetry
from session.config import GameConfiguration
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.records import read_record_dicts, read_summary
from session.story_file import StoryFileError
from session.tables import markdown_table

MODES = ("none", "unreachable", "hanging")
MODEL = "gpt-4o-mini"
KEY_VARIABLE = "ZORKGPT_SCRIPTED_MODEL_KEY"
"""The API key variable of these episodes: the scripted model takes any key, and a real one is never sent to it."""
WITHIN = 0.10
"""The acceptable slow-down of an episode whose receiver is unreachable or hangs, against no exporter."""
CLOCKS = ("episode_id", "wall_seconds")
"""What differs between two runs of the same episode whatever they trace: its id and its clocks."""


def play(rom: Path, walkthrough: list[str], turns: int, endpoint: str | None, folder: Path) -> dict[str, Any]:
    """One episode of `turns` turns traced to `endpoint` (None: no exporter): its summary and records less the
    clocks, its wall time, and the time the spans it left took to flush after it."""
    holder: dict[str, Orchestrator] = {}
    model = WalkthroughModel(walkthrough, lambda: holder["orchestrator"].game_state.turn_count + 1)
    with ScriptedServer(model) as server:
        overrides = {
            "gameplay": {"agent": "llm", "critic": "llm", "max_turns_per_episode": turns},
            "llm": {
                "base_url": server.base_url,
                "api_key_env": KEY_VARIABLE,
                "agent_model": MODEL,
                "critic_model": MODEL,
                "max_retries": 0,
            },
            "files": {"episode_dir": str(folder)},
            "knowledge": {"enabled": False},
            "telemetry": {"endpoint": endpoint} if endpoint else {"enabled": False},
        }
        config = GameConfiguration.from_dict({}, overrides, source="benchmarks.telemetry_overhead")
        orchestrator = build_orchestrator(config, RunOptions(rom=str(rom), quiet=True), after_episode=())
        holder["orchestrator"] = orchestrator
        cpu = time.process_time()
        episode = orchestrator.play_episode().parent
        cpu = time.process_time() - cpu
    started = time.perf_counter()
    telemetry.flush()
    flushed = time.perf_counter() - started
    summary = read_summary(episode)
    records = [{k: v for k, v in r.items() if k != "wall_seconds"} for r in read_record_dicts(episode)]
    return {
        "wall_seconds": summary["wall_seconds"],
        "cpu_seconds": round(cpu, 4),
        "flush_seconds": round(flushed, 4),
        "figures": {k: v for k, v in summary.items() if k not in CLOCKS},
        "records": records,
        "delivery": telemetry.delivery(),
    }


def measure(rom: Path, turns: int, rounds: int) -> dict[str, Any]:
    """Every mode played `rounds` times, the modes alternated within each round."""
    walkthrough = JerichoSession(rom).walkthrough()
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as scratch, hanging_endpoint() as hanging:
        endpoints = {"none": None, "unreachable": closed_endpoint(), "hanging": hanging}
        for round_number in range(rounds):
            for mode in MODES:
                folder = Path(scratch) / f"{mode}-{round_number}"
                runs[mode].append(play(rom, walkthrough, turns, endpoints[mode], folder))
    baseline = runs["none"][0]
    untraced_cpu = statistics.median(run["cpu_seconds"] for run in runs["none"])
    modes = {}
    for mode, played in runs.items():
        ratios = [run["wall_seconds"] / alone["wall_seconds"] for run, alone in zip(played, runs["none"])]
        cpu = statistics.median(run["cpu_seconds"] for run in played)
        modes[mode] = {
            "wall_seconds": [run["wall_seconds"] for run in played],
            "median_wall_seconds": round(statistics.median(run["wall_seconds"] for run in played), 4),
            "slower_than_none": round(statistics.median(ratios) - 1, 4),
            "cpu_seconds": [run["cpu_seconds"] for run in played],
            "cpu_more_than_none": round(cpu / untraced_cpu - 1, 4),
            "median_flush_seconds": round(statistics.median(run["flush_seconds"] for run in played), 4),
            "same_figures_and_records": all(
                run["figures"] == baseline["figures"] and run["records"] == baseline["records"] for run in played
            ),
            "spans": played[-1]["delivery"],
        }
    traced = [modes[mode] for mode in MODES if mode != "none"]
    return {
        "game": "zork1",
        "turns": turns,
        "rounds": rounds,
        "llm_calls_per_episode": sum(baseline["figures"]["llm_calls"].values()),
        "modes": modes,
        "within_10_percent": all(mode["slower_than_none"] <= WITHIN for mode in traced),
        "same_figures_and_records": all(mode["same_figures_and_records"] for mode in modes.values()),
    }


def markdown(result: dict[str, Any], how: str, at: str) -> str:
    rows = [
        [
            mode,
            len(figures["wall_seconds"]),
            f"{figures['median_wall_seconds']:.3f}",
            f"{figures['slower_than_none'] * 100:+.1f} %",
            f"{figures['cpu_more_than_none'] * 100:+.1f} %",
            f"{figures['median_flush_seconds']:.3f}",
            figures["same_figures_and_records"],
            _spans(figures["spans"]),
        ]
        for mode, figures in result["modes"].items()
    ]
    columns = ["receiver", "episodes", "median wall s", "vs none", "CPU vs none", "flush after s", "same figures"]
    columns += ["spans so far"]
    return (
        "# What tracing costs an episode whose receiver is of no use (benchmarks/telemetry_overhead.py)\n\n"
        f"Command: `{how}`  \nCommit: {at}. zork1 on the LLM path (scripted model on 127.0.0.1), "
        f"{result['turns']} turns and {result['llm_calls_per_episode']} LLM calls an episode, the three receivers "
        f"alternated over {result['rounds']} rounds. `vs none`: the median over the rounds of the wall time "
        "against the round's untraced run; `CPU vs none`: this process's median CPU time against the untraced "
        "runs'; `flush after`: the wait for the spans left once the episode is over (it is not in the episode).\n\n"
        + "\n".join(markdown_table(columns, rows))
        + "\n\n"
        + f"- within 10 %: {result['within_10_percent']}\n"
        + f"- same figures and records under every receiver: {result['same_figures_and_records']}\n"
    )


def _spans(delivery: dict[str, int] | None) -> str:
    if delivery is None:
        return "none made"
    return f"sent {delivery['sent']}, dropped {delivery['dropped']}, failed {delivery['failed']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_rom(parser)
    parser.add_argument("--turns", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=9)
    cli.add_out(parser, default="docs/results/telemetry_overhead.json", help="the JSON; the table beside it")
    args = parser.parse_args(argv)
    if args.turns < 1 or args.rounds < 1:
        parser.error("--turns and --rounds must be at least 1")
    logger.remove()
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"  # the scripted model and the receivers are on this machine
    os.environ[KEY_VARIABLE] = "scripted"
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"):
        os.environ.pop(name, None)  # each mode names its own receiver
    try:
        rom = cli.story_path(args.rom)
    except StoryFileError as exc:
        return cli.fail(exc)
    result = measure(rom, args.turns, args.rounds)
    result["command"], result["commit"] = command("benchmarks.telemetry_overhead", argv), commit()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(result, result["command"], result["commit"]))
    print(out.with_suffix(".md"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
