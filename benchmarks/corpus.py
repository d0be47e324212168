"""The loop break over a whole corpus of story files: optimal, noisy and stuck trajectories on every game.

    uv run python -m benchmarks.corpus --games ../shared/games --out docs/results/corpus
    uv run python -m benchmarks.corpus --games ../shared/games --only zork1,hhgg --kinds optimal,noisy

Every trajectory (see playthroughs/trajectories.py) is played through the real orchestrator with the offline critic
and the configuration given (`--config`, default pyproject.toml): forced (its commands always run; what the loop
break would do is recorded) and, for stuck kinds, also by the steerable looper, which falls back to other exits
when the loop break's penalties reject its move. Figures are read from the records the episodes wrote.

The healthy kind `llm_walkthrough` plays the walkthrough through the LLM path instead, nothing forced: the LLM
agent and critic against a scripted server on 127.0.0.1 whose model replies with the next step as JSON
(playthroughs/llm_path.py). Every step must run as written (none refused by the pre-check, the reply parser or the
loop break), the loop break must not stop it, and it must reach plain Jericho's final score.

Writes `corpus.json` (every run), `corpus.md` (per game and kind, and a summary against the targets) and, with
`--records DIR`, every episode's records for replaying other rules over them (benchmarks/margins.py). Trajectories
are cached (`--cache`, default benchmarks/results/cache) by story file and generator version
(playthroughs/trajectory_cache.py): building noisy walkthroughs is the slow part (each detour is checked against the
rest of the walkthrough).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from loguru import logger

from batch.pool import run_jobs
from benchmarks import cli
from playthroughs import llm_path
from playthroughs.episodes import play_trajectory
from playthroughs.trajectories import STUCK_KINDS, Trajectory, stuck_target
from playthroughs.trajectory_cache import build
from session.config import ConfigError, GameConfiguration, layered
from session.provenance import command, commit
from session.records import EVENTS_FILE, LOOP_ENDINGS
from session.story_file import STORY_SUFFIXES, StoryFileError
from session.tables import markdown_table

LLM_WALKTHROUGH = "llm_walkthrough"
"""The healthy kind played through the LLM path (see the module's docstring)."""
DEFAULT_KINDS = f"optimal,noisy,stuck,{LLM_WALKTHROUGH}"
KINDS = ("optimal", "noisy", "stuck", *STUCK_KINDS, LLM_WALKTHROUGH)
"""What `--kinds` may name."""


def kinds_list(text: str) -> list[str]:
    """`--kinds`: comma-separated KINDS; a kind no run has is an error, not a benchmark that plays nothing."""
    kinds = [kind.strip() for kind in text.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"unknown kind {', '.join(unknown) or '(none)'}: one of {', '.join(KINDS)}")
    return kinds


# -- running ---------------------------------------------------------------------------------------------------
def figures(trajectory: Trajectory, mode: str, summary: dict, records: list[dict], threshold: float) -> dict:
    """What one run shows, read from its records."""
    end = records[-1]["turn"] if records else 0
    reason = summary["termination_reason"]
    warned = sorted({r["turn"] for r in records for e in r["events"] if e["event_type"] == "loop_break_warning"})
    turned = [r["turn"] for r in records if r["forced"] and r["would_reject"] and r["critic_base_score"] >= threshold]
    row = {
        "game": trajectory.game,
        "kind": trajectory.kind,
        "variant": trajectory.variant,
        "mode": mode,
        "turns": len(records),
        "script_turns": len(trajectory.commands),
        "termination_reason": reason,
        "termination_turn": end,
        "final_score": summary["final_score"],
        "max_score": summary["max_score"],
        "warning_turns": len(warned),
        "turned_to_reject": len(turned),
        "detections": sorted({e["kind"] for r in records for e in r["events"] if e["event_type"] == "loop_detected"}),
        "gates": sum(e["event_type"] == "loop_gate" for r in records for e in r["events"]),
        "penalties": sum(e["event_type"] == "loop_penalty_applied" for r in records for e in r["events"]),
        "stop_rule": next(
            (e["rule"] for r in records for e in r["events"] if e["event_type"] == "stuck_termination"), None
        ),
    }
    if trajectory.kind in ("optimal", "noisy"):
        healthy = [r for r in records if r["turn"] <= trajectory.healthy_until]
        row.update(
            {
                "healthy_until": trajectory.healthy_until,
                "clean_score": trajectory.clean_score,
                "script_score": trajectory.script_score,
                "false_stop": reason in LOOP_ENDINGS and end <= trajectory.healthy_until,
                "healthy_turns": len(healthy),
                "healthy_warning_turns": sum(1 for t in warned if t <= trajectory.healthy_until),
                "healthy_turned_to_reject": sum(1 for t in turned if t <= trajectory.healthy_until),
            }
        )
    else:
        start = trajectory.loop_start
        limit = stuck_target(trajectory.kind)
        # A death by hunger, time or a fall ends some loops before any stop rule: the game ended them.
        stopped = reason in LOOP_ENDINGS or (reason == "game_over" and end >= start)
        row.update(
            {
                "loop_start": start,
                "target": limit,
                "ended_after": end - start + 1 if stopped else None,
                "ended_by": reason if stopped else None,
                "within_target": stopped and 0 < end - start + 1 <= limit,
                "stopped_in_prefix": reason in LOOP_ENDINGS and end < start,
            }
        )
        if mode == "looper":
            outside = [
                r["turn"]
                for r in records
                if r["turn"] >= start
                and r["room_id_after"] not in trajectory.loop_rooms
                and r["room_id_after"] is not None
            ]
            row["left_loop_turn"] = outside[0] if outside else None
    return row


def run_game(job: dict) -> list[dict]:
    """All trajectories of one story file, each run forced (and steered, for stuck kinds)."""
    logger.remove()
    story = Path(job["story"])
    config_overrides = job["overrides"]
    rows: list[dict] = []
    built = build(story, set(job["kinds"]), job["factors"], job["seeds"], job["cuts"], Path(job["cache"]))
    with tempfile.TemporaryDirectory() as temporary:
        episodes = Path(job["records"] or temporary) / story.stem
        if LLM_WALKTHROUGH in job["kinds"]:
            rows += llm_walkthrough(story, job, episodes / f"{LLM_WALKTHROUGH}-llm")
        for index, trajectory in enumerate(built):
            modes = ["forced"] if trajectory.kind in ("optimal", "noisy") else ["forced", "looper"]
            for mode in modes:
                folder = episodes / f"{index:03d}-{trajectory.kind}-{mode}"
                overrides = layered(
                    {
                        "files": {"episode_dir": str(folder)},
                        "gameplay": {"max_turns_per_episode": len(trajectory.commands)},
                    },
                    config_overrides,
                )
                config = GameConfiguration.from_toml(job["config"], overrides)
                summary, records = play_trajectory(story, trajectory, config, mode)
                row = figures(trajectory, mode, summary, records, config.gameplay.critic_rejection_threshold)
                row["records"] = str(next(folder.iterdir()) / EVENTS_FILE) if job["records"] else None
                rows.append(row)
    return rows


def llm_walkthrough(story: Path, job: dict, folder: Path) -> list[dict]:
    """The walkthrough through the LLM path (no row for a game without a walkthrough)."""
    optimal = build(story, {"optimal"}, [], [], [], Path(job["cache"]))
    if not optimal:
        return []
    (walk,) = optimal
    config = Path(job["config"])
    summary, records, _ = llm_path.play(story, walk.commands, config, folder, more_overrides=job["overrides"])
    notes = llm_path.notes_to_the_reader(story, walk.commands)
    checked = llm_path.walkthrough_figures(walk.commands, records, summary, notes)
    turns = max(summary["turns"], 1)
    return [
        {
            "game": walk.game,
            "kind": LLM_WALKTHROUGH,
            "variant": "walkthrough",
            "mode": "llm",
            "turns": len(records),
            "script_turns": len(walk.commands),
            "termination_reason": summary["termination_reason"],
            "termination_turn": records[-1]["turn"] if records else 0,
            "final_score": summary["final_score"],
            "max_score": summary["max_score"],
            "clean_score": walk.clean_score,
            "refused_steps": checked["refused_steps"],
            "refused": checked["refused"],
            "refused_examples": checked["refused_examples"],
            "told_then_run": checked["told_then_run"],
            "notes_not_sent": checked["notes_not_sent"],
            "stopped": checked["stopped"],
            "calls_per_turn": round(sum(summary["llm_calls"].values()) / turns, 3),
            "records": str(next(folder.iterdir()) / EVENTS_FILE) if job["records"] else None,
        }
    ]


def run(stories: list[Path], args: argparse.Namespace, overrides: dict) -> list[dict]:
    jobs = [
        {
            "story": str(story),
            "out": str(args.out),
            "kinds": args.kinds,
            "factors": args.factors,
            "seeds": args.seeds,
            "cuts": args.cuts,
            "config": args.config,
            "records": str(args.records) if args.records else None,
            "cache": str(args.cache),
            "overrides": overrides,
        }
        for story in stories
    ]
    rows: list[dict] = []
    if args.jobs > 1:

        def done(game_rows: list[dict]) -> None:
            rows.extend(game_rows)
            _progress(game_rows)

        run_jobs(jobs, args.jobs, run_game, done, _died)
    else:
        for job in jobs:
            game_rows = run_game(job)
            rows += game_rows
            _progress(game_rows)
    return sorted(rows, key=lambda r: (r["game"], r["kind"], r["variant"], r["mode"]))


def _progress(rows: list[dict]) -> None:
    if rows:
        print(f"  {rows[0]['game']}: {len(rows)} runs", file=sys.stderr, flush=True)


def _died(job: dict, code: int | None) -> None:
    """A worker that died takes its game's runs with it (the tables count the games they hold): say so, go on."""
    print(f"  {Path(job['story']).stem}: no runs, the worker process died (exit code {code})", file=sys.stderr)


# -- tables ----------------------------------------------------------------------------------------------------
def summarize(rows: list[dict]) -> dict:
    """The issue's targets, over every run."""
    healthy = [r for r in rows if r["kind"] in ("optimal", "noisy")]
    optimal = [r for r in rows if r["kind"] == "optimal"]
    through_llm = [r for r in rows if r["kind"] == LLM_WALKTHROUGH]
    stuck_forced = [r for r in rows if r["kind"] in STUCK_KINDS and r["mode"] == "forced"]
    wandering_looper = [r for r in rows if r["kind"] == "wandering" and r["mode"] == "looper"]
    optimal_turns = sum(r["healthy_turns"] for r in optimal)
    ended = [r["ended_after"] for r in stuck_forced if r["ended_after"] is not None]
    return {
        "games": len({r["game"] for r in rows}),
        "runs": len(rows),
        "healthy_runs": len(healthy),
        "healthy_false_stops": [f"{r['game']}/{r['kind']}/{r['variant']}" for r in healthy if r["false_stop"]],
        "optimal_score_mismatches": [r["game"] for r in optimal if r["final_score"] != r["clean_score"]],
        "optimal_turns": optimal_turns,
        "optimal_warning_share": round(sum(r["healthy_warning_turns"] for r in optimal) / max(1, optimal_turns), 4),
        "optimal_turned_share": round(sum(r["healthy_turned_to_reject"] for r in optimal) / max(1, optimal_turns), 4),
        "noisy_warning_share": _share(healthy, "noisy", "healthy_warning_turns"),
        "stuck_runs": len(stuck_forced),
        "stuck_within_target": sum(1 for r in stuck_forced if r["within_target"]),
        "stuck_never_ended": [
            f"{r['game']}/{r['kind']}/{r['variant']}" for r in stuck_forced if r["ended_after"] is None
        ],
        "stuck_late": [
            f"{r['game']}/{r['kind']}/{r['variant']}: {r['ended_after']}"
            for r in stuck_forced
            if r["ended_after"] is not None and not r["within_target"]
        ],
        "stuck_ended_after_median": sorted(ended)[len(ended) // 2] if ended else None,
        # Detected: the wandering detection fired, or the cycle rule ended the loop first (a round of moves the game
        # sends to random rooms, zork2's carousel, is a cycle of commands before it is a repeating window of rooms).
        "wandering_detected": sum(
            1
            for r in rows
            if r["kind"] == "wandering"
            and r["mode"] == "forced"
            and ("wandering" in r["detections"] or r.get("stop_rule") == "cycle")
        ),
        "wandering_runs": len(wandering_looper),
        "wandering_left": sum(1 for r in wandering_looper if r.get("left_loop_turn") is not None),
        **(
            {
                "llm_walkthrough_runs": len(through_llm),
                "llm_walkthrough_refused_steps": sum(r["refused_steps"] for r in through_llm),
                "llm_walkthrough_stopped": [r["game"] for r in through_llm if r["stopped"]],
                "llm_walkthrough_score_mismatches": [
                    r["game"] for r in through_llm if r["final_score"] != r["clean_score"]
                ],
            }
            if through_llm
            else {}
        ),
    }


def _share(rows: list[dict], kind: str, key: str) -> float:
    chosen = [r for r in rows if r["kind"] == kind]
    return round(sum(r[key] for r in chosen) / max(1, sum(r["healthy_turns"] for r in chosen)), 4)


def markdown(rows: list[dict], summary: dict) -> str:
    lines = [
        "# The loop break over the corpus (benchmarks/corpus.py)",
        "",
        f"Command: `{command('benchmarks.corpus')}`  ",
        f"Commit: {commit()}",
        "",
        "## Summary",
        "",
    ]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in summary.items()]
    lines += ["", "## Per game", "", per_game_table(rows), "## Per stuck kind (forced)", "", per_kind_table(rows)]
    lines += ["## Healthy play (forced): stops before the last healthy turn must be none", ""]
    healthy = []
    for r in rows:
        if r["kind"] in ("optimal", "noisy"):
            end = f"{r['termination_reason']} @ {r['termination_turn']}" + (
                " **FALSE STOP**" if r["false_stop"] else ""
            )
            healthy.append(
                (
                    r["game"],
                    r["kind"],
                    r["variant"],
                    f"{r['turns']} ({r['healthy_until']})",
                    end,
                    f"{r['final_score']} / {r['clean_score']}",
                    r["healthy_warning_turns"],
                    r["healthy_turned_to_reject"],
                )
            )
    lines += markdown_table(HEALTHY_COLUMNS, healthy)
    through_llm = [r for r in rows if r["kind"] == LLM_WALKTHROUGH]
    if through_llm:
        lines += ["", "## Healthy play through the LLM path: every step must run as written", ""]
        llm_rows = []
        for r in through_llm:
            by = ", ".join(f"{kind} {n}" for kind, n in sorted(r["refused"].items()))
            end = f"{r['termination_reason']} @ {r['termination_turn']}" + (" **STOPPED**" if r["stopped"] else "")
            mark = "" if r["final_score"] == r["clean_score"] else " **SHORT**"
            llm_rows.append(
                (
                    r["game"],
                    end,
                    f"{r['final_score']} / {r['clean_score']}{mark}",
                    f"{r['refused_steps']}{f' ({by})' if by else ''}",
                    r["told_then_run"],
                    f"{r['calls_per_turn']:.2f}",
                )
            )
        lines += markdown_table(LLM_COLUMNS, llm_rows)
    lines += ["", "## Stuck play: turns from the loop's start to its end (forced), and the steerable looper", ""]
    looper = {(r["game"], r["kind"], r["variant"]): r for r in rows if r["mode"] == "looper"}
    stuck = []
    for r in rows:
        if r["kind"] in STUCK_KINDS and r["mode"] == "forced":
            steered = looper.get((r["game"], r["kind"], r["variant"]), {})
            ended = r["ended_after"] if r["ended_after"] is not None else "never"
            mark = "" if r["within_target"] else " **LATE**"
            by = " (game over)" if r.get("ended_by") == "game_over" else ""
            left = steered.get("left_loop_turn")
            stuck.append(
                (
                    r["game"],
                    r["kind"],
                    r["variant"],
                    r["loop_start"],
                    f"{ended}{by} ({r['target']}){mark}",
                    ", ".join(r["detections"]) or "-",
                    f"{steered.get('termination_reason', '-')} @ {steered.get('termination_turn', '-')}",
                    left if left is not None else "-",
                )
            )
    lines += markdown_table(STUCK_COLUMNS, stuck)
    return "\n".join(lines) + "\n"


HEALTHY_COLUMNS = (
    "game",
    "kind",
    "variant",
    "turns (healthy)",
    "end",
    "score / clean",
    "warning turns",
    "turned to reject",
)
LLM_COLUMNS = (
    "game",
    "end",
    "score / clean",
    "steps refused (by)",
    "told by the pre-check, then run",
    "LLM calls/turn",
)
STUCK_COLUMNS = (
    "game",
    "kind",
    "variant",
    "loop starts",
    "forced: ended after (target)",
    "detections",
    "looper: end",
    "looper left the loop at",
)
PER_GAME_COLUMNS = (
    "game",
    "optimal: end, score",
    "noisy 1 / 2 / 3: false stops",
    "stuck within target",
    "median turns to end",
    "wandering: looper left",
)
PER_KIND_COLUMNS = ("kind", "target", "runs", "within target", "median turns to end", "slowest", "stopped by")


def per_game_table(rows: list[dict]) -> str:
    """One line per game: optimal and noisy outcomes, stuck scenarios within target, wandering looper."""
    table = []
    for game in sorted({r["game"] for r in rows}):
        mine = [r for r in rows if r["game"] == game]
        optimal = next((r for r in mine if r["kind"] == "optimal"), None)
        noisy = {r["variant"].split(",")[0][-1]: r for r in mine if r["kind"] == "noisy"}
        stuck = [r for r in mine if r["kind"] in STUCK_KINDS and r["mode"] == "forced"]
        ended = sorted(r["ended_after"] for r in stuck if r["ended_after"] is not None)
        steered = [r for r in mine if r["kind"] == "wandering" and r["mode"] == "looper"]
        first = (
            f"{optimal['termination_reason']}, {optimal['final_score']}/{optimal['clean_score']}" if optimal else "-"
        )
        noise = " / ".join(("STOP" if noisy[f]["false_stop"] else "0") if f in noisy else "-" for f in "123")
        left = sum(r.get("left_loop_turn") is not None for r in steered)
        table.append(
            (
                game,
                first,
                noise,
                f"{sum(r['within_target'] for r in stuck)}/{len(stuck)}",
                ended[len(ended) // 2] if ended else "-",
                f"{left}/{len(steered)}" if steered else "-",
            )
        )
    return "\n".join(markdown_table(PER_GAME_COLUMNS, table)) + "\n"


def per_kind_table(rows: list[dict]) -> str:
    table = []
    for kind in STUCK_KINDS:
        mine = [r for r in rows if r["kind"] == kind and r["mode"] == "forced"]
        if not mine:
            continue
        ended = sorted(r["ended_after"] for r in mine if r["ended_after"] is not None)
        slowest = "never" if len(ended) < len(mine) else ended[-1]
        rules = Counter(r.get("stop_rule") or r["termination_reason"] for r in mine)
        by = ", ".join(f"{rule} {count}" for rule, count in rules.most_common())
        table.append(
            (
                kind,
                stuck_target(kind),
                len(mine),
                sum(r["within_target"] for r in mine),
                ended[len(ended) // 2] if ended else "-",
                slowest,
                by,
            )
        )
    return "\n".join(markdown_table(PER_KIND_COLUMNS, table)) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_games(parser, required=True)
    cli.add_only(parser, help="comma-separated story names (file stems) to run, e.g. zork1,hhgg")
    parser.add_argument(
        "--kinds", default=DEFAULT_KINDS, type=kinds_list, help=f"optimal, noisy, stuck, stuck kinds, {LLM_WALKTHROUGH}"
    )
    cli.add_trajectory_options(parser)
    cli.add_config(parser)
    cli.add_set(parser)
    cli.add_out(parser, default="benchmarks/results/corpus")
    cli.add_cache(parser)
    cli.add_records(parser)
    cli.add_jobs(parser)
    args = parser.parse_args(argv)
    args.factors = [int(f) for f in args.factors.split(",")]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.cuts = [float(c) for c in args.cuts.split(",")]
    args.out = Path(args.out)
    folder = Path(args.games)
    try:
        overrides = cli.set_overrides(args.set)
        GameConfiguration.from_toml(args.config, overrides)
        if not folder.is_dir():
            raise StoryFileError(f"--games {folder}: not a folder of story files")
        stories = sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
        if args.only:
            wanted = set(args.only.split(","))
            stories = [p for p in stories if p.stem in wanted]
        if not stories:
            raise StoryFileError(f"no story files (.z1-.z8) in {folder}" + (f" named {args.only}" if args.only else ""))
    except (ConfigError, StoryFileError, ValueError) as exc:
        return cli.fail(exc)
    started = time.perf_counter()
    rows = run(stories, args, overrides)
    summary = summarize(rows)
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = ",\n".join(json.dumps(row, separators=(",", ":")) for row in rows)  # one run per line: diffs stay readable
    (args.out / "corpus.json").write_text(f'{{"summary": {json.dumps(summary)},\n"runs": [\n{runs}\n]}}\n')
    (args.out / "corpus.md").write_text(markdown(rows, summary))
    print(json.dumps(summary, indent=1))
    print(f"wrote {args.out / 'corpus.json'} and {args.out / 'corpus.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
