"""Play episodes of Zork I (or any Jericho game) with the chosen agent and critic.

    uv run python main.py                      # offline agent + critic (no API key needed)
    uv run python main.py --episodes 5         # five episodes back to back, each learning from the ones before
    uv run python main.py --agent walkthrough  # Jericho's walkthrough, forced through the full orchestrator
    uv run python main.py --resume game_files/episodes/<episode_id>   # go on with an interrupted episode
    uv run python main.py view [DIR ...] [--port N]   # watch and review episodes in the browser (127.0.0.1)

Exit codes: 0 the episode ended (victory, game over, max turns, a loop break); 2 bad input (flags, configuration,
story file, replay file, an episode folder that cannot be written or resumed) or a game whose Z-machine emulator
crashed or hung; 3 the LLM became unavailable; 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (records and summary.json are
written in every one of these cases).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from loguru import logger

from agents.registry import AGENTS, CRITICS
from managers.knowledge import KnowledgeError
from orchestration.episode import EPISODE_FILE, ResumeError, read_interrupted
from orchestration.recorder import RecordsUnwritable
from orchestration.wiring import RunOptions, build_orchestrator, build_session
from session.config import ConfigError, GameConfiguration
from session.emulator import EmulatorFailed
from session.jericho_session import JerichoSession
from session.records import Ending, TurnRecord, read_summary
from session.safe_text import printable
from session.story_file import StoryFileError
from session.tables import markdown_table

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3


class SignalInterrupt(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled like Ctrl-C: the turn in progress is dropped, records and summary are written."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="ZorkGPT: an LLM agent harness for Zork I with a loop-break system",
        epilog="Also: `main.py view [DIR ...]` (the episode viewer) and `main.py batch --games ...` (many episodes "
        "in parallel); each takes --help.",
    )
    # No argparse choices: a plugin's kinds are registered when the configuration is read, and a path is no name.
    parser.add_argument("--agent", help=f"an agent kind ({', '.join(AGENTS.choices())}) or a plugin's module:attribute")
    parser.add_argument(
        "--critic", help=f"a critic kind ({', '.join(CRITICS.choices())}) or a plugin's module:attribute"
    )
    parser.add_argument("--actions", help="replay: a file with one command per line")
    parser.add_argument("--rom", help="story file (default: $ZORK_ROM, then [tool.zorkgpt.files] game_file_path)")
    parser.add_argument("--config", default="pyproject.toml", help="TOML file holding [tool.zorkgpt.*]")
    parser.add_argument("--max-turns", type=int, help="override gameplay.max_turns_per_episode")
    parser.add_argument("--episode-dir", help="override files.episode_dir (default game_files/episodes)")
    parser.add_argument("--seed", type=int, help="emulator RNG seed (default: the game's walkthrough seed)")
    parser.add_argument("--resume", metavar="EPISODE_DIR", help="go on with an interrupted episode, in its files")
    parser.add_argument("--episodes", type=int, help="override gameplay.episodes: episodes played back to back")
    parser.add_argument("--knowledge", metavar="PATH", help="the knowledge store to read and add to (JSON)")
    parser.add_argument("--no-knowledge", action="store_true", help="play fresh: no knowledge store")
    parser.add_argument("--quiet", action="store_true", help="no per-turn console log")
    return parser.parse_args(argv)


def load_config(args: argparse.Namespace) -> GameConfiguration:
    overrides = {
        "gameplay": {
            "agent": args.agent,
            "critic": args.critic,
            "max_turns_per_episode": args.max_turns,
            "seed": args.seed,
            "episodes": args.episodes,
        },
        "files": {"episode_dir": args.episode_dir},
        "knowledge": {"path": args.knowledge, "enabled": False if args.no_knowledge else None},
    }
    config = GameConfiguration.from_toml(args.config, overrides)  # imports its plugins first
    agent = AGENTS.resolve(config.gameplay.agent, config.llm.api_key())  # an unknown kind: one line, before the game
    CRITICS.resolve(config.gameplay.critic, config.llm.api_key())
    if args.actions and not agent.needs_actions:
        readers = " or ".join(f"--agent {kind.name}" for kind in AGENTS.kinds() if kind.needs_actions)
        raise ConfigError(f"--actions is read only by {readers}")
    return config


def run_options(args: argparse.Namespace) -> RunOptions:
    return RunOptions(rom=args.rom, actions=args.actions, quiet=args.quiet)


# -- resuming ------------------------------------------------------------------------------------------------------
def load_resume(args: argparse.Namespace) -> tuple[GameConfiguration, str, list[TurnRecord]]:
    """The saved configuration, the episode id and the records of the folder to resume (ConfigError otherwise).

    The episode's own settings (story file, agent, replay file, seed, every configuration key) are restored; only
    --max-turns and --quiet may change. The episode goes on in the folder given, under its name: a folder moved or
    renamed since keeps every record in one place."""
    folder = Path(args.resume)
    info, records = read_interrupted(folder)
    overrides = {"files": {"episode_dir": str(folder.parent)}}
    if args.max_turns is not None:
        overrides["gameplay"] = {"max_turns_per_episode": args.max_turns}
    config = GameConfiguration.from_dict(info["config"], overrides, source=str(folder / EPISODE_FILE))
    args.rom, args.actions = info["story_file"], info.get("actions")
    return config, folder.resolve().name, records


# -- the command ---------------------------------------------------------------------------------------------------
def _raise_interrupt(signum: int, _frame) -> None:
    raise SignalInterrupt(signum)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["view"]:
        return view(argv[1:])
    if argv[:1] == ["batch"]:
        from batch import runner

        logger.remove()
        return runner.main(argv[1:])
    args = parse_args(argv)
    logger.remove()
    records: list[TurnRecord] | None = None
    try:
        if args.resume:
            config, episode_id, records = load_resume(args)
        else:
            config, episode_id = load_config(args), None
        session = build_session(config, run_options(args))
    except (ConfigError, StoryFileError, EmulatorFailed) as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _raise_interrupt)
    if hasattr(signal, "SIGXFSZ"):  # a file-size limit: a write error the recorder handles, not a dead process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    episodes = 1 if records else config.gameplay.episodes  # a resumed episode finishes; it starts no run
    summaries: list[dict] = []
    for _ in range(episodes):
        code, summary = play_one(config, args, session, episode_id, records)
        if summary is not None:
            summaries.append(summary)
        if code != 0 or summary is None:
            return code
        episode_id, records = None, None
    if episodes > 1:
        print(write_run(Path(config.files.episode_dir), summaries))
    return 0


def view(argv: list[str]) -> int:
    """`main.py view [DIR ...] [--port N]`: the episode viewer (default folder: the configured episode_dir, read
    from pyproject.toml only when no folder is given; without a pyproject.toml, the default episode_dir)."""
    from viewer import server

    def configured() -> str:
        if not Path("pyproject.toml").is_file():
            return GameConfiguration().files.episode_dir
        return GameConfiguration.from_toml("pyproject.toml").files.episode_dir

    try:
        return server.main(argv, configured)
    except ConfigError as exc:
        print(f"error: {printable(str(exc))} (or name the folder to view: main.py view DIR)", file=sys.stderr)
        return EXIT_USAGE


def play_one(
    config: GameConfiguration,
    args: argparse.Namespace,
    session: JerichoSession,
    episode_id: str | None,
    records: list[TurnRecord] | None,
) -> tuple[int, dict | None]:
    """One episode: its exit code (0 when it ended normally) and its summary (None when it never started)."""
    try:
        orchestrator = build_orchestrator(config, run_options(args), episode_id, session)
    except (ConfigError, StoryFileError, KnowledgeError) as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE, None
    try:
        summary_path = orchestrator.play_episode(resume=records)
    except KeyboardInterrupt as exc:  # Ctrl-C or a signal: the records so far and summary.json are written
        signum = exc.signum if isinstance(exc, SignalInterrupt) else signal.SIGINT
        recorder = orchestrator.recorder  # None: stopped before the episode folder existed
        where = f"; records in {recorder.folder}" if recorder is not None else ""
        print(f"interrupted ({signal.Signals(signum).name}){where}", file=sys.stderr)
        return 128 + signum, None
    except (RecordsUnwritable, ResumeError, StoryFileError) as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_USAGE, None
    summary = read_summary(summary_path.parent)
    print("\n".join(closing_lines(summary, summary_path.parent, config.files.episode_dir)))
    print(summary_path)
    if orchestrator.game_state.termination_reason == Ending.LLM_UNAVAILABLE:
        print(f"error: the LLM became unavailable; records in {summary_path.parent}", file=sys.stderr)
        return EXIT_LLM_UNAVAILABLE, summary
    if orchestrator.game_state.termination_reason == Ending.EMULATOR_FAILED:
        failure = printable(orchestrator.emulator_failure or "")
        print(f"error: {failure}; records in {summary_path.parent}", file=sys.stderr)
        return EXIT_USAGE, summary
    return 0, summary


ENDINGS = {
    Ending.VICTORY: "won",
    Ending.GAME_OVER: "game over (the player died)",
    Ending.MAX_TURNS: "the turn limit",
    Ending.STUCK: "stopped by the loop break",
    Ending.LOOP_GATE: "stopped by a loop gate",
    Ending.BUDGET: "the budget (max_cost_usd) was spent",
    Ending.LLM_UNAVAILABLE: "the LLM became unavailable",
    Ending.SCRIPT_EXHAUSTED: "the script ran out",
    Ending.INTERRUPTED: "interrupted",
    Ending.RECORDS_UNWRITABLE: "the records could not be written",
    Ending.EMULATOR_FAILED: "the game's Z-machine emulator crashed or hung",
    Ending.ERROR: "an error",
}
"""How the console's closing lines say each termination reason."""


def closing_lines(summary: dict, folder: Path, episode_dir: str) -> list[str]:
    """What an episode came to, for the console: score of the maximum, turns, rooms and the ending (with the loop
    break's reason), the LLM's calls and cost, and where to look at it (report.html, `main.py view`)."""
    reason = summary.get("termination_reason") or Ending.ERROR
    ending = ENDINGS.get(reason, reason)
    why = (summary.get("loop_break") or {}).get("stop_why")
    if why and reason == Ending.STUCK:
        ending += f": {why}"
    best = f" (best {summary['best_score']})" if summary["best_score"] != summary["final_score"] else ""
    of = f" of {summary['max_score']}" if summary.get("max_score") else ""  # 0: Jericho does not know the game's
    lines = [
        f"{summary['game']}: score {summary['final_score']}{of}{best} after {summary['turns']} turns, "
        f"{summary['rooms_visited']} rooms; ended: {ending}.",
    ]
    calls = summary.get("llm_calls") or {}
    if calls:
        lines.append(f"LLM: {sum(calls.values())} calls, ${summary.get('cost_usd', {}).get('total', 0.0):.4f}.")
    else:
        lines.append("LLM: no calls (the offline agent and critic).")
    lines.append(f"Report: {folder / 'report.html'}")
    lines.append(f"Watch and review: uv run python main.py view {printable(episode_dir)}")
    return lines


RUN_COLUMNS = (
    "episode_id",
    "final_score",
    "best_score",
    "progress",
    "turns",
    "termination_reason",
    "rooms_visited",
    "rewinds",
    "abandoned_turns",
)


def write_run(episode_dir: Path, summaries: list[dict]) -> Path:
    """run.json and run.md over a run's episodes, in `<episode_dir>/runs/<first episode id>/`; the run.json path."""
    rows = []
    for number, summary in enumerate(summaries, start=1):
        row = {"episode": number, **{key: summary.get(key) for key in RUN_COLUMNS}}
        row["llm_calls"] = sum(summary.get("llm_calls", {}).values())
        row["cost_usd"] = summary.get("cost_usd", {}).get("total", 0.0)
        rows.append(row)
    folder = episode_dir / "runs" / summaries[0]["episode_id"]
    folder.mkdir(parents=True, exist_ok=True)
    run = {"game": summaries[0]["game"], "episodes": rows, "knowledge_store": summaries[-1].get("knowledge_store")}
    (folder / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    columns = ["episode", *RUN_COLUMNS, "llm_calls", "cost_usd"]
    table = markdown_table(columns, [[row[c] for c in columns] for row in rows])
    (folder / "run.md").write_text(f"# {run['game']}: {len(rows)} episodes\n\n" + "\n".join(table) + "\n")
    return folder / "run.json"


if __name__ == "__main__":
    sys.exit(main())
