"""One batch job: one episode of one game, seed and named configuration (a grid cell). Runs in any process."""

from __future__ import annotations

import shutil
import traceback
from pathlib import Path
from typing import Any

from loguru import logger


def install_request_limits(limits: dict[str, Any]) -> None:
    """Pool initializer: every LLM client of this process waits on the batch's shared limit for its base_url."""
    from agents import llm_client

    llm_client.REQUEST_LIMITS.update(limits)


class RayRequestSlot:
    """A context manager over one base_url's slots in a `RequestLimiter` actor: the Ray backend's shared limit."""

    def __init__(self, limiter: Any, base_url: str):
        self.limiter = limiter
        self.base_url = base_url

    def __enter__(self) -> None:
        import ray

        ray.get(self.limiter.acquire.remote(self.base_url))

    def __exit__(self, *exc) -> None:
        self.limiter.release.remote(self.base_url)


class RequestLimiter:
    """The slots of every base_url, for all the tasks of a Ray batch (run as an async Ray actor)."""

    def __init__(self, limits: dict[str, int]):
        import asyncio

        self.slots = {url: asyncio.Semaphore(count) for url, count in limits.items()}

    async def acquire(self, base_url: str) -> None:
        await self.slots[base_url].acquire()

    def release(self, base_url: str) -> None:
        self.slots[base_url].release()


def job_id(cell: str, game: str, seed: int, episode: int) -> str:
    return f"{cell}/{game}/seed{seed}/ep{episode}"


def crashed(job: dict, error: str, trace: str = "") -> dict:
    """The result row of a job that gave no summary: its episode raised, or its worker process died."""
    row = {key: job[key] for key in ("id", "cell", "game", "seed", "episode")}
    return {**row, "status": "crashed", "error": error[:500], "trace": trace[-1500:]}


def run_job(job: dict, limits: dict[str, Any] | None = None) -> dict:
    """Play the job's episode; its result row (`status` finished or crashed), never an exception. `limits`: the
    batch's shared request limits, when the process has not had them installed (Ray tasks)."""
    if limits:
        install_request_limits(limits)
    from orchestration.wiring import RunOptions, build_orchestrator, build_session
    from session.config import GameConfiguration
    from session.records import read_summary

    logger.remove()
    folder = Path(job["folder"])
    shutil.rmtree(folder, ignore_errors=True)  # an interrupted earlier try of this job: start it over
    try:
        # from_dict imports the configuration's plugins before anything is resolved: a spawned worker or a Ray task
        # gets them from the job alone
        overrides = {"files": {"episode_dir": str(folder)}, "gameplay": {"seed": job["seed"]}}
        config = GameConfiguration.from_dict(job["config"], overrides, source=f"job {job['id']}")
        args = RunOptions(rom=job["story"], quiet=True)
        session = build_session(config, args)
        try:
            summary = read_summary(build_orchestrator(config, args, session=session).play_episode().parent)
        finally:
            session.close()  # its emulators' processes end with the job, not when the worker collects it
    except Exception as exc:  # a crashed episode is recorded as such; the batch goes on
        return crashed(job, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=3))
    return {
        **{key: job[key] for key in ("id", "cell", "game", "seed", "episode")},
        "status": "finished",
        "final_score": summary["final_score"],
        "best_score": summary["best_score"],
        "max_score": summary["max_score"],
        "progress": summary.get("progress"),  # share of the walkthrough's checkpoints; None without a walkthrough
        "turns": summary["turns"],
        "termination_reason": summary["termination_reason"],
        "rewinds": summary.get("rewinds", 0),  # on_stuck = "rewind"; a summary from before rewinds has none
        "abandoned_turns": summary.get("abandoned_turns", 0),
        "llm_calls": sum(summary["llm_calls"].values()),
        "tokens": sum(summary["tokens"].values()),
        "cost_usd": summary["cost_usd"].get("total", 0.0),
        "wall_seconds": summary["wall_seconds"],
        "episode_folder": str(Path(summary["episode_id"]).name),
    }
