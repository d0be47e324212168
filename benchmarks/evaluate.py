"""Evaluation suite: how many turns, LLM calls and dollars does the loop break save, and does it ever kill a good
episode?

    uv run python -m benchmarks.evaluate [--rom PATH] [--scenario NAME|PATH|all] [--config PATH] [--out DIR]
    uv run python -m benchmarks.evaluate --walkthroughs DIR      # the healthy scenario for every story file there
    uv run python -m benchmarks.evaluate --learning DIR [--episodes 5] [--max-turns 300]   # learning curves
    uv run --extra plot python -m benchmarks.evaluate --scenario all --out docs/results   # with pictures

Each scenario runs through the real orchestrator with the offline critic, loop break on and off: forced (scripted
commands always run; what the loop break would do is recorded) and, for stuck scenarios, with a steerable looper
(a stubborn agent that falls back to other exits when rejected). Every figure is read from the records the
episodes wrote. Calls and dollars saved are the turns saved at the cost of a stuck LLM turn, measured by
`benchmarks.llm_calls` (the dam_ab replay through the LLM agent and critic against a scripted server, priced at the
configured agent model). Writes results.json, results.md and, with matplotlib installed, one picture per stuck
scenario.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loguru import logger

from agents.llm_agent import LLMAgent
from agents.llm_client import LLMClient
from agents.looper_agent import LooperAgent
from agents.offline_critic import OfflineCritic
from agents.replay_agent import ReplayAgent
from agents.scripted_llm import ScriptedOpenAI, cycling_replies
from benchmarks import cli, learning, throughput
from managers.loop_break.progress import ProgressResult, ProgressTracker
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs import llm_path
from playthroughs.scenarios import BuiltScenario, ScenarioError, build_scenario, never_stopped, scenario_names
from session.config import ConfigError, GameConfiguration
from session.events import EventType
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.records import LOOP_ENDINGS, TurnRecord, read_record_dicts, read_summary
from session.story_file import STORY_SUFFIXES, StoryFileError
from session.tables import markdown_table

DETECTOR_EVENTS = {
    "identical_action": EventType.IDENTICAL_ACTION_WARNING,
    "parse_failure": EventType.PARSE_FAILURE_RECOVERY,
    "collaboration_loop": EventType.COLLABORATION_LOOP,
    "failure_gate": EventType.LOOP_GATE,
    "stuck_warning": EventType.LOOP_BREAK_WARNING,
}
"""First-detection names (the scenario table's) of events other than `loop_detected`, whose `kind` names it."""
PLOTTED_EVENTS = (
    EventType.LOOP_BREAK_WARNING,
    EventType.STUCK_TERMINATION,
    EventType.LOOP_GATE,
    EventType.IDENTICAL_ACTION_WARNING,
    EventType.PARSE_FAILURE_RECOVERY,
)
"""Events whose first turn the scenario plots mark (besides every `loop_detected` kind)."""
STUCK_LLM_SCENARIO = "dam_ab"
"""The stuck replay whose LLM cost per turn prices the turns the loop break saves."""
ORIGINAL_EPISODE_TURNS = 341  # the recorded episode the Dam scenarios reproduce (scenarios/dam_*.toml)


# -- running one episode -------------------------------------------------------------------------------------
def run_episode(rom: Path, config: GameConfiguration, agent, llm_client=None) -> tuple[dict, list[dict]]:
    """One episode of `agent` with the offline critic, no knowledge store and no report: its summary and records."""
    orchestrator = build_orchestrator(
        config,
        RunOptions(rom=str(rom), quiet=True),
        agent=agent,
        critic=OfflineCritic(),
        llm_client=llm_client,
        knowledge=None,
        after_episode=(),
    )
    folder = orchestrator.play_episode().parent
    return read_summary(folder), read_record_dicts(folder)


def episode_figures(summary: dict, records: list[dict], built: BuiltScenario | None = None) -> dict:
    """The report of one episode, read from its summary and its events."""
    events = [(r["turn"], e) for r in records for e in r["events"]]
    first: dict[str, int] = {}
    for turn, event in events:
        if event["event_type"] == EventType.LOOP_DETECTED:
            first.setdefault(event["kind"], turn)
        for detector, event_type in DETECTOR_EVENTS.items():
            if event["event_type"] == event_type:
                first.setdefault(detector, turn)
    penalties = [e for _, e in events if e["event_type"] == EventType.LOOP_PENALTY_APPLIED]
    figures = {
        "turns": summary["turns"],
        "termination_reason": summary["termination_reason"],
        "termination_turn": records[-1]["turn"] if records else 0,
        "last_progress_turn": summary["loop_break"]["last_progress_turn"],
        "final_score": summary["final_score"],
        "first_detection": dict(sorted(first.items(), key=lambda item: item[1])),
        "penalties_applied": len(penalties),
        "turned_to_reject": sum(1 for e in penalties if e.get("turned_to_reject")),
        "warnings_shown": sum(1 for _, e in events if e["event_type"] == EventType.LOOP_BREAK_WARNING),
        "would_reject": sum(1 for r in records if r["would_reject"]),
        "llm_calls": sum(summary["llm_calls"].values()),
    }
    if built is not None and built.loop:
        loop_start = len(built.prefix)
        outside = [r["turn"] for r in records if r["turn"] > loop_start and r["room_id_after"] not in built.loop_rooms]
        figures["left_loop_turn"] = outside[0] if outside else None
    return figures


def scenario_agents(built: BuiltScenario, mode: str, config: GameConfiguration):
    """(agent, llm_client) for a run mode: `forced` replays the commands, `looper` steers, `llm` is the scripted
    LLM of an unparseable-reply scenario."""
    if built.spec.driver == "unparseable_llm":
        client = LLMClient(config.llm, "scripted", 3, client=ScriptedOpenAI(cycling_replies(built.loop)))
        return LLMAgent(client, config.llm, config.orchestrator.max_invalid_replies), client
    if mode == "looper":
        return LooperAgent(built.prefix, built.loop), None
    return ReplayAgent(built.commands, kind="replay"), None


def evaluate_scenario(built: BuiltScenario, rom: Path, config_path: str, folder: Path, llm_turn: dict) -> dict:
    """Loop break on against off, in every mode; `llm_turn` is the cost of a stuck LLM turn
    (`playthroughs.llm_path.measure`)."""
    healthy = built.spec.kind == "healthy"
    if built.spec.driver == "unparseable_llm":
        modes = ["llm"]
    else:
        modes = ["forced"] if healthy else ["forced", "looper"]
    length = len(built.commands) if built.spec.driver == "replay" else len(built.loop)
    report: dict = {
        "scenario": built.name,
        "kind": built.spec.kind,
        "description": built.spec.description,
        "prefix_turns": len(built.prefix),
        "scenario_turns": length,
    }
    for mode in modes:
        for loop_break in (True, False):
            config = GameConfiguration.from_toml(
                config_path,
                {
                    "files": {"episode_dir": str(folder / built.name / mode / ("on" if loop_break else "off"))},
                    "gameplay": {"max_turns_per_episode": length},
                    "loop_break": {"enabled": loop_break},
                },
            )
            agent, client = scenario_agents(built, mode, config)
            summary, records = run_episode(rom, config, agent, client)
            report[f"{mode}_{'on' if loop_break else 'off'}"] = episode_figures(summary, records, built)
            report.setdefault("_records", {})[f"{mode}_{'on' if loop_break else 'off'}"] = records
        on, off = report[f"{mode}_on"], report[f"{mode}_off"]
        on["turns_saved"] = off["turns"] - on["turns"]
        on["llm_calls_saved"] = round(on["turns_saved"] * llm_turn["total_calls_per_turn"])
        on["usd_saved"] = round(on["turns_saved"] * llm_turn["cost_per_turn_usd"], 4)
    if healthy:
        forced = report["forced_on"]
        report["false_termination"] = forced["termination_reason"] in LOOP_ENDINGS
        report["adjustment_rejection_rate"] = round(forced["turned_to_reject"] / max(1, forced["turns"]), 4)
        report["would_reject_rate"] = round(forced["would_reject"] / max(1, forced["turns"]), 4)
    return report


# -- overhead and memory -------------------------------------------------------------------------------------
def memory_probe(rom: Path, turns: int) -> dict:
    """Peak and current RSS of a fresh process that plays `turns` turns of the camp_in_room loop (on the Dam, which
    is lit), forced, never terminated. Not the dam_ab looper: steered, a looper may leave its loop and
    die in the dark (dam_ab's did at turn 577 once the repetition window grew to 16), and dam_ab forced walks into the
    dark Maintenance Room until the lamp dies (turn 504); either would measure a short episode under a long one's
    name, so the probe now fails when the episode ends early."""
    code = (
        "import json,sys;from benchmarks.evaluate import play_memory_probe;"
        f"print(json.dumps(play_memory_probe({str(rom)!r}, {turns})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def play_memory_probe(rom: str, turns: int) -> dict:
    """What `memory_probe`'s fresh process runs: `turns` turns of the camp_in_room loop, then its own peak and current
    RSS; a RuntimeError when the episode ended before them."""
    logger.remove()
    built = build_scenario("camp_in_room", rom)
    with tempfile.TemporaryDirectory() as folder:
        config = GameConfiguration.from_toml(
            "pyproject.toml", {"files": {"episode_dir": folder}, **never_stopped(turns)}
        )
        # The orchestrator alone: reading the records back (as run_episode does) would measure the reader.
        loop = built.loop * (turns // max(1, len(built.loop)) + 1)
        agent = ReplayAgent((built.prefix + loop)[:turns], kind="replay")
        options = RunOptions(rom=rom, quiet=True)
        orchestrator = build_orchestrator(config, options, agent=agent, critic=OfflineCritic(), knowledge=None)
        summary = read_summary(orchestrator.play_episode().parent)
    if summary["turns"] != turns:
        ended = f"{summary['turns']} turns, not {turns} ({summary['termination_reason']})"
        raise RuntimeError(f"the memory probe played {ended}")
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    return {
        "turns": summary["turns"],
        "termination_reason": summary["termination_reason"],
        "peak_rss_mb": round(int(status["VmHWM"].split()[0]) / 1024, 1),
        "rss_mb": round(int(status["VmRSS"].split()[0]) / 1024, 1),
    }


# -- outputs -------------------------------------------------------------------------------------------------
SCENARIO_COLUMNS = (
    "scenario",
    "mode",
    "loop break off: turns (end)",
    "on: turns (end)",
    "last progress",
    "turns saved",
    "first detections",
    "penalties",
    "turned to reject",
    "warnings",
    "left loop at",
)


def scenario_table(reports: list[dict]) -> str:
    rows = []
    for report in reports:
        for mode in ("forced", "looper", "llm"):
            on, off = report.get(f"{mode}_on"), report.get(f"{mode}_off")
            if on is None:
                continue
            left = on.get("left_loop_turn")
            rows.append(
                (
                    report["scenario"],
                    mode,
                    f"{off['turns']} ({off['termination_reason']})",
                    f"{on['turns']} ({on['termination_reason']})",
                    on["last_progress_turn"],
                    on["turns_saved"],
                    ", ".join(f"{k} {v}" for k, v in on["first_detection"].items()) or "none",
                    on["penalties_applied"],
                    on["turned_to_reject"],
                    on["warnings_shown"],
                    left if left is not None else "-",
                )
            )
    return "\n".join(markdown_table(SCENARIO_COLUMNS, rows)) + "\n"


def plot_scenario(report: dict, out: Path, signals: tuple[str, ...]) -> Path | None:
    """Score and turns-since-progress over turns, loop break on (solid) and off (dashed), detections marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    first_mode = next(key[: -len("_on")] for key in report["_records"] if key.endswith("_on"))
    records_on = report["_records"][f"{first_mode}_on"]
    records_off = report["_records"][f"{first_mode}_off"]
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    for records, style, label in ((records_off, "--", "loop break off"), (records_on, "-", "loop break on")):
        turns = [r["turn"] for r in records]
        top.plot(turns, [r["score_after"] for r in records], style, label=label)
        bottom.plot(turns, [p.turns_stuck for p in progress_over(records, signals)], style, label=label)
    marks = {}
    for record in records_on:
        for event in record["events"]:
            kind = event["event_type"]
            if kind == EventType.LOOP_DETECTED:
                marks.setdefault(f"detected: {event['kind']}", record["turn"])
            elif kind in PLOTTED_EVENTS:
                marks.setdefault(kind.replace("_", " "), record["turn"])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, (label, turn) in enumerate(sorted(marks.items(), key=lambda item: item[1])):
        for axis in (top, bottom):
            axis.axvline(
                turn,
                color=colours[(index + 2) % len(colours)],
                linewidth=1,
                alpha=0.8,
                label=f"{label} (turn {turn})" if axis is bottom else None,
            )
    if report["prefix_turns"]:
        for axis in (top, bottom):
            axis.axvspan(0, report["prefix_turns"], color="grey", alpha=0.12)
    top.set_ylabel("score")
    bottom.set_ylabel("turns since progress")
    bottom.set_xlabel("turn (grey: scripted prefix)")
    top.set_title(f"{report['scenario']}: {report['description'][:90]}", fontsize=9)
    top.legend(fontsize=7, loc="upper left")
    bottom.legend(fontsize=7, loc="upper left")
    figure.tight_layout()
    path = out / f"{report['scenario']}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def progress_over(records: list[dict], signals: tuple[str, ...]) -> list[ProgressResult]:
    """The real ProgressTracker replayed over recorded turns (works for loop-break-off runs too)."""
    tracker = ProgressTracker(set(signals))
    return [tracker.observe(TurnRecord(**data)) for data in records]


# -- entry point ---------------------------------------------------------------------------------------------
def evaluate(
    rom: Path, names: list[str], config_path: str, out: Path, with_overhead: bool = True, episodes: Path | None = None
) -> dict:
    """Run the scenarios (names or .toml paths); episodes go to `episodes` (default: a temporary folder)."""
    out.mkdir(parents=True, exist_ok=True)
    logger.remove()
    started = time.perf_counter()
    reports = []
    with tempfile.TemporaryDirectory() as temporary:
        scenarios = [build_scenario(name, rom) for name in names]  # one that cannot be built fails before any play
        stuck = (
            dict(zip(names, scenarios)).get(STUCK_LLM_SCENARIO) or build_scenario(STUCK_LLM_SCENARIO, rom)
        ).commands
        llm_turn = llm_path.measure(rom, stuck, Path(config_path), Path(temporary) / "llm_turn")
        for built in scenarios:
            reports.append(evaluate_scenario(built, rom, config_path, episodes or Path(temporary), llm_turn))
    signals = tuple(GameConfiguration.from_toml(config_path).loop_break.progress_signals)
    pictures = [str(p) for r in reports if r["kind"] == "stuck" and (p := plot_scenario(r, out, signals))]
    result: dict = {
        "game_file": str(rom),
        "llm_turn": llm_turn,
        "scenarios": [{k: v for k, v in r.items() if k != "_records"} for r in reports],
    }
    if with_overhead:
        commands = JerichoSession(rom).walkthrough()
        result["overhead"] = throughput.measure(rom, commands, repeats=5)
        result["overhead_looping"] = throughput.looping_ms(rom, 1000, repeats=3)
        result["memory"] = {str(turns): memory_probe(rom, turns) for turns in (1000, 10000)}
        result["memory"]["growth_1k_to_10k"] = round(
            result["memory"]["10000"]["peak_rss_mb"] / result["memory"]["1000"]["peak_rss_mb"] - 1, 4
        )
    result["pictures"] = pictures
    result["wall_seconds"] = round(time.perf_counter() - started, 1)
    result |= {"command": command("benchmarks.evaluate"), "commit": commit()}
    (out / "results.json").write_text(json.dumps(result, indent=2) + "\n")
    heading = f"Command: `{result['command']}`  \nCommit: {result['commit']}\n\n"
    (out / "results.md").write_text(heading + scenario_table(reports) + money_lines(result) + overhead_lines(result))
    return result


def money_lines(result: dict) -> str:
    turn = result["llm_turn"]
    saved = [s[f"{mode}_on"] for s in result["scenarios"] for mode in ("forced", "looper") if f"{mode}_on" in s]
    return (
        f"\nMoney: a stuck LLM turn costs {turn['total_calls_per_turn']} calls, {turn['tokens_per_turn']:,} tokens and "
        f"${turn['cost_per_turn_usd']:.6f} at {turn['model']} ({STUCK_LLM_SCENARIO} through the LLM agent and critic, "
        f"scripted server, tokens estimated at 4 characters each). Over these runs the loop break saved "
        f"{sum(s['turns_saved'] for s in saved):,} turns, {sum(s['llm_calls_saved'] for s in saved):,} LLM calls and "
        f"${sum(s['usd_saved'] for s in saved):.2f} at that price (dollars scale with the model's price per token).\n"
    )


def overhead_lines(result: dict) -> str:
    if "overhead" not in result:
        return ""
    o, loop, m = result["overhead"], result["overhead_looping"], result["memory"]
    return (
        f"\nOverhead (walkthrough, median of 5): full orchestrator {o['orchestrator_ms']} ms/turn, raw FrotzEnv.step "
        f"{o['raw_step_ms']} ms/step, overhead {o['overhead_ms']} ms/turn ({o['ratio']}x raw); of it the loop break "
        f"{o['loop_break_ms']} ms/turn and the progress facts it reads {o['progress_facts_ms']} ms/turn. "
        f"While looping (dam_ab looper, {loop['turns']:,} turns, never stopped, median of 3): full orchestrator "
        f"{loop['orchestrator_ms']} ms/turn, the loop break {loop['loop_break_ms']} ms/turn, the progress facts "
        f"{loop['progress_facts_ms']} ms/turn.\n"
        f"Memory (camp_in_room loop, forced, never stopped, report written): peak RSS "
        f"{m['1000']['peak_rss_mb']} MB after {m['1000']['turns']:,} turns, "
        f"{m['10000']['peak_rss_mb']} MB after {m['10000']['turns']:,} turns ({m['growth_1k_to_10k']:+.1%}).\n"
    )


def evaluate_walkthroughs(folder: Path, config_path: str, out: Path) -> list[dict]:
    """The healthy walkthrough scenario for every story file in `folder` that Jericho has a walkthrough for."""
    logger.remove()
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as episodes:
        for story in sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES):
            session = JerichoSession(story)
            commands = session.walkthrough()
            if not commands:
                rows.append({"game": story.name, "skipped": "no Jericho walkthrough"})
                continue
            config = GameConfiguration.from_toml(
                config_path, {"files": {"episode_dir": episodes}, "gameplay": {"max_turns_per_episode": len(commands)}}
            )
            summary, records = run_episode(story, config, ReplayAgent(commands, kind="walkthrough"))
            figures = episode_figures(summary, records)
            rows.append(
                {
                    "game": session.game_name,
                    "turns": figures["turns"],
                    "walkthrough_steps": len(commands),
                    "score": f"{summary['final_score']}/{summary['max_score']}",
                    "termination_reason": figures["termination_reason"],
                    "false_termination": figures["termination_reason"] in LOOP_ENDINGS,
                    "turned_to_reject": figures["turned_to_reject"],
                    "would_reject": figures["would_reject"],
                }
            )
    (out / "walkthroughs.json").write_text(json.dumps(rows, indent=2) + "\n")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_rom(parser)
    parser.add_argument("--scenario", default="all", help="a name from playthroughs/scenarios, a .toml path, or all")
    cli.add_config(parser)
    cli.add_out(parser, default="benchmarks/results")
    parser.add_argument("--walkthroughs", help="folder of story files: one healthy-walkthrough row per game")
    parser.add_argument("--no-overhead", action="store_true", help="skip the overhead and memory measurements")
    parser.add_argument("--learning", help="folder of story files: N episodes each with the knowledge store")
    parser.add_argument("--episodes", type=int, default=5, help="--learning: episodes per game")
    parser.add_argument("--max-turns", type=int, default=300, help="--learning: turns per episode")
    parser.add_argument(
        "--seeds",
        type=cli.numbers,
        help="--learning: comma-separated emulator seeds, each a curve (default: the game's)",
    )
    args = parser.parse_args(argv)
    out = Path(args.out)
    try:
        GameConfiguration.from_toml(args.config)
        if args.learning:
            result = learning.run(Path(args.learning), args.config, out, args.episodes, args.max_turns, args.seeds)
            print((out / "learning.md").read_text())
            print(
                f"wrote {out / 'learning.json'}, {out / 'learning.md'}"
                + (f", {result['picture']}" if result["picture"] else "")
            )
            return 0
        if args.walkthroughs:
            columns = [
                "game",
                "walkthrough_steps",
                "turns",
                "score",
                "termination_reason",
                "false_termination",
                "turned_to_reject",
                "would_reject",
                "skipped",
            ]
            rows = evaluate_walkthroughs(Path(args.walkthroughs), args.config, out)
            print("\n".join(markdown_table(columns, [[row.get(c, "") for c in columns] for row in rows])))
            return 0
        rom = cli.story_path(args.rom)
        names = scenario_names() if args.scenario == "all" else [args.scenario]
        result = evaluate(rom, names, args.config, out, with_overhead=not args.no_overhead)
    except (ScenarioError, StoryFileError, ConfigError) as exc:
        return cli.fail(exc)
    print((out / "results.md").read_text())
    if not result["pictures"]:
        print("(no pictures: install the plot extra, `uv run --extra plot python -m benchmarks.evaluate ...`)")
    print(
        f"wrote {out / 'results.json'}, {out / 'results.md'}, {len(result['pictures'])} pictures "
        f"in {result['wall_seconds']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
