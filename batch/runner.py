"""`main.py batch`: every (cell, game, seed, episode) of a batch, in parallel, resumable, with one results table.

    uv run python main.py batch --games ../shared/games --seeds 1,2,3 --workers 2 --out batches/first
    uv run python main.py batch --games zork1,zork2 --grid grid.toml --backend ray --ray-address auto

The manifest (`OUT/manifest.jsonl`) gets one whole line per finished or crashed job; run the same command again and
it skips those and runs the others (an interrupted job starts over in a clean folder). Results: `OUT/results.json`,
`results.csv` and `results.md`. `--max-cost-usd X`: a budget for the whole batch (batch/budget.py). `--preset tales`:
a published benchmark's steps, seeds and games, and its table beside results.md (batch/presets.py, batch/tales.py).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import multiprocessing
import os
import shlex
import signal
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tomli
from tqdm import tqdm

from agents.registry import AGENTS, CRITICS
from batch import ray_cluster
from batch.budget import BatchManager, BudgetLedger, BudgetLink, ManagerLink, RayLink
from batch.jobs import (
    NOT_RUN,
    SPENT,
    RayRequestSlot,
    RequestLimiter,
    crashed,
    install_request_limits,
    job_id,
    not_run,
    run_job,
)
from batch.pool import run_jobs
from batch.presets import PRESETS, choose_stories
from batch.results import write_results
from batch.tales import write_table
from orchestration.wiring import check_budget, chosen_kinds
from session import telemetry
from session.config import ConfigError, GameConfiguration, RunOptions, layered
from session.emulator import watch_parent
from session.plugins import modules_of
from session.story_file import STORY_SUFFIXES

MANIFEST = "manifest.jsonl"
RAY_LOG = "ray-join.log"
"""What Ray says while the batch joins a cluster (--ray-address): its retries, the project it ships."""
# Ray workers run this project's code with this interpreter. Ray's `uv run` integration, read once when ray is first
# imported, would start each worker through `uv run` in Ray's session folder, outside this project and its extras.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
DEFAULT_CELL = "default"
MAX_BUDGET_USD = 1_000_000.0
"""The largest --max-cost-usd (as `gameplay.max_cost_usd`, which an episode's share of it becomes)."""


class BatchError(Exception):
    """Bad batch input: games, seeds, a grid file, a manifest of another batch."""


# -- what to run ------------------------------------------------------------------------------------------------
def story_files(spec: str) -> list[Path]:
    """A folder of story files, or comma-separated story files or game names (found beside $ZORK_ROM or in
    games/ or ../shared/games)."""
    found: list[Path] = []
    folders = [Path(os.environ["ZORK_ROM"]).parent] if os.environ.get("ZORK_ROM") else []
    folders += [Path("games"), Path("../shared/games")]
    for item in filter(None, (part.strip() for part in spec.split(","))):
        path = Path(item)
        if path.is_dir():
            found += sorted(p for p in path.iterdir() if p.suffix.lower() in STORY_SUFFIXES)
        elif path.is_file():
            found.append(path)
        else:
            matches = [p for folder in folders if folder.is_dir() for p in sorted(folder.glob(f"{item}.z*"))]
            if not matches:
                raise BatchError(f"--games: no story file or folder named {item!r}")
            found.append(matches[0])
    if not found:
        raise BatchError(f"--games {spec}: no story file")
    return [p.resolve() for p in found]


def read_grid(path: str | None) -> dict[str, dict[str, dict[str, Any]]]:
    """Named configurations: `[cells.<name>.<section>]` tables of `[tool.zorkgpt.*]` keys."""
    if path is None:
        return {DEFAULT_CELL: {}}
    try:
        data = tomli.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomli.TOMLDecodeError) as exc:
        raise BatchError(f"--grid {path}: not a readable TOML file ({exc})") from None
    cells = data.get("cells")
    if not isinstance(cells, dict) or not cells:
        raise BatchError(f"--grid {path}: needs [cells.<name>] tables")
    for name, sections in cells.items():
        if not isinstance(sections, dict) or not all(isinstance(v, dict) for v in sections.values()):
            raise BatchError(f"--grid {path}: cells.{name} must hold [cells.{name}.<section>] tables")
        if "/" in name:
            raise BatchError(f"--grid {path}: a cell name cannot hold '/': {name!r}")
    return cells


def chosen_stories(args: argparse.Namespace) -> tuple[list[Path], dict[str, str]]:
    """The story files of --games the batch plays (with --preset, those it takes), and the others with why."""
    stories = story_files(args.games)
    if args.preset is None:
        return stories, {}
    chosen, left_out = choose_stories(PRESETS[args.preset], stories)
    if not chosen:
        game, why = next(iter(left_out.items()))
        raise BatchError(
            f"--preset {args.preset}: it plays none of the {len(stories)} story files of --games (e.g. {game}: {why})"
        )
    return chosen, left_out


def plan(args: argparse.Namespace, stories: list[Path] | None = None) -> list[dict]:
    """Every job of the batch, in a stable order; `stories`: chosen_stories(args), when the caller has them."""
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise BatchError(f"--seeds {args.seeds!r}: comma-separated integers, e.g. 1,2,3") from None
    if not seeds or any(not 1 <= s < 2**31 for s in seeds):
        raise BatchError("--seeds: at least one seed, each from 1 to 2^31-1")
    if stories is None:
        stories, _ = chosen_stories(args)
    cli = {"gameplay": {"agent": args.agent, "critic": args.critic, "max_turns_per_episode": args.max_turns}}
    cli = {section: {k: v for k, v in keys.items() if v is not None} for section, keys in cli.items()}
    jobs = []
    for cell, sections in read_grid(args.grid).items():
        overrides = layered({"knowledge": {"enabled": False}}, cli, sections)  # a batch's episodes: independent samples
        try:
            config = GameConfiguration.from_toml(args.config, overrides)  # a bad cell fails now, not in a worker
            if AGENTS.resolve(config.gameplay.agent, config.llm.api_key()).needs_actions:
                raise ConfigError(f"--agent {config.gameplay.agent} plays a file of commands: a batch's jobs take none")
            # a kind that is not registered, or needs an API key it lacks
            kinds = [kind for kind in chosen_kinds(config, RunOptions()) if kind is not None]
            if args.max_cost_usd is not None:
                check_budget(config, *kinds, budget="--max-cost-usd")
        except ConfigError as exc:
            raise BatchError(f"cell {cell}: {exc}") from None
        # The job carries its whole configuration, plugins included: a worker (a spawned process, a Ray task on any
        # node) reads it with GameConfiguration.from_dict, which imports them before anything is resolved.
        settings = config.model_dump(mode="json")
        for story in stories:
            for seed in seeds:
                for episode in range(1, args.episodes + 1):
                    ident = job_id(cell, story.stem, seed, episode)
                    jobs.append(
                        {
                            "id": ident,
                            "cell": cell,
                            "game": story.stem,
                            "story": str(story),
                            "seed": seed,
                            "episode": episode,
                            "config": settings,
                            "folder": str((Path(args.out) / "episodes" / ident).resolve()),
                        }
                    )
    return jobs


# -- the manifest -----------------------------------------------------------------------------------------------
def read_manifest(out: Path) -> dict[str, dict]:
    """Finished and crashed jobs by id (a partly written last line is an interrupted write: that job reruns; a job
    the budget left unstarted is to run)."""
    done: dict[str, dict] = {}
    path = out / MANIFEST
    if not path.is_file():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "id" in row:
            done[row["id"]] = row
    return {ident: row for ident, row in done.items() if row.get("status") != NOT_RUN}


def record(out: Path, row: dict) -> None:
    """One whole line per job, flushed and synced before the next job is counted."""
    with (out / MANIFEST).open("a", encoding="utf-8") as manifest:
        manifest.write(json.dumps(row) + "\n")
        manifest.flush()
        os.fsync(manifest.fileno())


# -- running ----------------------------------------------------------------------------------------------------
def slot_counts(jobs: list[dict]) -> dict[str, int]:
    """base_url -> `[tool.zorkgpt.llm] max_concurrent_requests`, for every server the jobs may call."""
    counts: dict[str, int] = {}
    for job in jobs:
        llm = job["config"]["llm"]
        counts.setdefault(llm["base_url"], llm["max_concurrent_requests"])
    return counts


def plugin_sources(jobs: list[dict]) -> list[str]:
    """The folders (packages) and files (modules) of the plugins the jobs import that a Ray worker would not find by
    itself, for Ray's `py_modules`: the top-level package of each plugin and of each `module:attribute` kind, when it
    lies outside this project (shipped as the working directory) and outside the interpreter's own packages."""
    project = Path(__file__).resolve().parents[1]
    installed = [Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib", "stdlib", "platstdlib")]
    found: list[str] = []
    for job in jobs:
        gameplay = job["config"]["gameplay"]
        for module in modules_of(job["config"]["plugins"], (gameplay["agent"], gameplay["critic"])):
            spec = importlib.util.find_spec(module.partition(".")[0])  # plan() imported it: it is found
            if spec is None:
                continue
            places = list(spec.submodule_search_locations or []) or ([spec.origin] if spec.origin else [])
            for place in map(Path, places):
                place = place.resolve()
                if place.exists() and not any(place.is_relative_to(root) for root in (project, *installed)):
                    found.append(str(place))
    return list(dict.fromkeys(found))


def run_local(todo: list[dict], workers: int, on_result, budget: float | None = None, earlier: float = 0.0) -> None:
    """The jobs on `workers` local processes (batch.pool: a worker that dies costs its job, recorded as crashed).
    `budget`: the batch's (USD), of which the jobs run before spent `earlier`; no job is handed out once it is
    spent."""
    context = multiprocessing.get_context("spawn")
    manager = BatchManager(ctx=context)
    manager.start(watch_parent, (os.getpid(),))  # a killed batch must not leave its manager's process behind
    with manager:
        limits = {url: manager.BoundedSemaphore(n) for url, n in slot_counts(todo).items()}
        ledger = manager.BudgetLedger(earlier) if budget is not None else None
        target = run_job if ledger is None else functools.partial(run_job, budget=ManagerLink(ledger, budget))

        def died(job: dict, code: int | None) -> None:
            on_result(crashed(job, f"the worker process died ({_exit_name(code)})"))

        run_jobs(
            todo,
            workers,
            target,
            on_result,
            died,
            install_request_limits,
            (limits,),
            may_hand_out=lambda: ledger is None or ledger.total() < budget,
        )


def _exit_name(code: int | None) -> str:
    if code is None:
        return "exit status unknown"
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def run_ray(
    todo: list[dict],
    workers: int,
    address: str | None,
    out: Path,
    on_result,
    budget: float | None = None,
    earlier: float = 0.0,
) -> None:
    """The jobs as Ray tasks, all submitted at once; with `budget`, a task that starts once it is spent returns at
    once, not run."""
    if importlib.util.find_spec("ray") is None:
        raise BatchError("--backend ray needs the ray extra: uv sync --extra ray")
    if address:
        ray_cluster.reach(address)  # sets what ray reads once, when first imported
    import ray

    started_here = not ray.is_initialized()
    if started_here:
        project = str(Path(__file__).resolve().parents[1])
        quiet = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
        plugins = plugin_sources(todo)  # the tasks import them from their configuration; Ray ships their code
        shipped = {"py_modules": plugins} if plugins else {}
        if address:
            ray_cluster.join(address, out / RAY_LOG, runtime_env={"working_dir": project, **shipped}, **quiet)
        else:
            here = {"py_executable": sys.executable, "env_vars": {"PYTHONPATH": project}, **shipped}
            ray.init(num_cpus=workers, runtime_env=here, **quiet)
    try:
        remote = ray.remote(run_job)
        counts = slot_counts(todo)
        limiter = ray.remote(RequestLimiter).remote(counts)  # the shared limit, cluster-wide
        limits = {url: RayRequestSlot(limiter, url) for url in counts}
        link: BudgetLink | None = None
        if budget is not None:
            link = RayLink(ray.remote(BudgetLedger).remote(earlier), budget)  # the ledger, cluster-wide
        jobs = {remote.remote(job, limits, link): job for job in todo}
        pending = list(jobs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as exc:  # its worker died, after Ray's own retries, or its node
                    row = crashed(jobs[ref], f"{type(exc).__name__}: {exc}")
                on_result(row)
    finally:
        if started_here:
            ray.shutdown()


def run_batch(args: argparse.Namespace) -> dict:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stories, left_out = chosen_stories(args)
    jobs = plan(args, stories)
    done = read_manifest(out)
    unknown = set(done) - {job["id"] for job in jobs}
    if unknown:
        raise BatchError(
            f"{out / MANIFEST} holds jobs this batch does not plan (e.g. {sorted(unknown)[0]}): "
            "use another --out, or the same flags as before"
        )
    todo = [job for job in jobs if job["id"] not in done]
    with batch_span(args, jobs, len(todo)) as span:
        link = span.link()  # each episode's trace links to the batch's
        results = _run(args, out, jobs, [{**job, "trace_link": link} if link else job for job in todo], done, left_out)
        span.set({f"zorkgpt.batch.{key}": results.get(key) for key in ("episodes", "crashed", "wall_seconds")})
    telemetry.flush()
    return results


@contextmanager
def batch_span(args: argparse.Namespace, jobs: list[dict], to_run: int) -> Iterator[telemetry.Span]:
    """The batch's span (a trace of its own, which its episodes' traces link to), when the batch's configuration or
    the environment names an endpoint (session.telemetry); BatchError for one that is no URL."""
    config = GameConfiguration.from_dict(jobs[0]["config"]) if jobs else GameConfiguration.from_toml(args.config)
    try:
        telemetry.configure(config.telemetry, (config.llm.api_key(),))
    except ConfigError as exc:
        raise BatchError(str(exc)) from None
    attributes = {
        "openinference.span.kind": "CHAIN",
        "zorkgpt.batch.out": str(Path(args.out).resolve()),
        "zorkgpt.batch.jobs": len(jobs),
        "zorkgpt.batch.to_run": to_run,
        "zorkgpt.batch.workers": args.workers,
        "zorkgpt.batch.backend": args.backend,
        "zorkgpt.batch.cells": sorted({job["cell"] for job in jobs}),
        "zorkgpt.batch.games": sorted({job["game"] for job in jobs}),
    }
    with telemetry.span(f"batch {Path(args.out).name}", attributes, root=True) as span:
        yield span


def _run(
    args: argparse.Namespace, out: Path, jobs: list[dict], todo: list[dict], done: dict[str, dict], left_out: dict
) -> dict:
    """The jobs `todo` run (those of `done` ran before), the manifest written as each ends, and the results."""
    failed = sum(1 for row in done.values() if row["status"] != "finished")
    budget = args.max_cost_usd
    earlier = sum(row.get("cost_usd", 0.0) for row in done.values())  # a budget is the whole batch's, earlier runs too
    bar = tqdm(
        total=len(jobs),
        initial=len(jobs) - len(todo),
        unit="episode",
        dynamic_ncols=True,
        disable=args.quiet,
        file=sys.stderr,
    )
    running = min(args.workers, len(todo))
    bar.set_postfix(running=running, failed=failed)
    started = time.perf_counter()

    def on_result(row: dict) -> None:
        nonlocal failed
        record(out, row)
        done[row["id"]] = row
        failed += row["status"] == "crashed"
        bar.update(1)
        bar.set_postfix(running=min(args.workers, len(jobs) - len(done)), failed=failed)

    try:
        if args.backend == "ray":
            run_ray(todo, args.workers, args.ray_address, out, on_result, budget, earlier)
        else:
            run_local(todo, args.workers, on_result, budget, earlier)
        if budget is not None:  # the jobs the spent budget kept from being handed out
            for job in todo:
                if job["id"] not in done:
                    on_result(not_run(job, SPENT))
    finally:
        bar.close()
    rows = [done[job["id"]] for job in jobs if job["id"] in done]
    wall = time.perf_counter() - started
    results = write_results(out, rows, read_grid(args.grid), wall, args.workers, budget)
    if args.preset is not None:
        write_table(out, PRESETS[args.preset], rows, jobs, left_out, args.command)
    return results


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="main.py batch", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="a published benchmark's protocol: tales = 100 steps, seeds 1-5, every story file of --games (default "
        "../shared/games) Jericho supports with a max score, and OUT/tales.md beside results.md; --seeds, "
        "--max-turns, --episodes and --games given explicitly win, and the table says how the run differs",
    )
    parser.add_argument("--games", help="a folder of story files, or story files / game names, comma-separated")
    parser.add_argument("--seeds", help="comma-separated emulator seeds (default 1)")
    parser.add_argument("--episodes", type=int, help="episodes per (cell, game, seed) (default 1)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel episodes")
    parser.add_argument("--out", default="batches/latest", help="the batch folder (manifest, episodes, results)")
    parser.add_argument("--backend", choices=["local", "ray"], default="local")
    parser.add_argument(
        "--ray-address",
        help="a Ray cluster: HEAD:6379 (on a node of it), ray://HEAD:10001 or auto; "
        "with token authentication set RAY_AUTH_MODE=token; default: a local instance",
    )
    parser.add_argument("--grid", help="TOML of named configurations: [cells.<name>.<section>] key = value")
    # No argparse choices: a plugin's kinds are registered when the configuration is read (plan checks them). A kind
    # that plays a file of commands (`replay`) has no place here: a batch's jobs take none.
    agents = [name for name in AGENTS.choices() if name not in {k.name for k in AGENTS.kinds() if k.needs_actions}]
    parser.add_argument("--agent", help=f"an agent kind ({', '.join(agents)}) or a plugin's module:attribute")
    parser.add_argument(
        "--critic", help=f"a critic kind ({', '.join(CRITICS.choices())}) or a plugin's module:attribute"
    )
    parser.add_argument("--max-turns", type=int)
    parser.add_argument(
        "--max-cost-usd",
        type=float,
        metavar="USD",
        help="a budget for the whole batch: no job starts once its LLM calls have cost this much, and the running "
        "episodes end after their turn (needs a price for every model)",
    )
    parser.add_argument("--config", default="pyproject.toml")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    apply_preset(args)
    if args.games is None:
        parser.error("--games is required (or --preset, which has a default folder)")
    args.command = "uv run python main.py batch " + shlex.join(argv)  # as typed: a preset's table names it
    if args.workers < 1 or args.episodes < 1:
        parser.error("--workers and --episodes must be at least 1")
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_BUDGET_USD:
        parser.error(f"--max-cost-usd: above 0, at most {MAX_BUDGET_USD:,.0f}")
    return args


def apply_preset(args: argparse.Namespace) -> None:
    """The preset's steps, seeds, episodes and games, where the flags leave them unset (explicit flags win); without
    a preset, the batch's own defaults (seed 1, one episode)."""
    preset = PRESETS.get(args.preset) if args.preset else None
    defaults = {"seeds": "1", "episodes": 1, "games": None, "max_turns": None}
    if preset is not None:
        defaults = {
            "seeds": preset.seeds_flag(),
            "episodes": preset.episodes,
            "games": preset.games,
            "max_turns": preset.max_turns,
        }
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    try:
        results = run_batch(args)
    except (BatchError, ray_cluster.RayClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(Path(args.out) / "results.md")
    if args.preset is not None:
        print(Path(args.out) / f"{args.preset}.md")
    if results["crashed"]:
        print(f"{results['crashed']} episode(s) crashed: see {Path(args.out) / MANIFEST}", file=sys.stderr)
    spent = results.get("budget")
    if spent and (spent["cut_by_budget"] or spent["not_run"]):
        print(
            f"the budget (${spent['max_cost_usd']:.2f}) is spent: {len(spent['cut_by_budget'])} episode(s) cut, "
            f"{len(spent['not_run'])} job(s) not run",
            file=sys.stderr,
        )
    return 0
