"""One batch job: one episode of one game, seed and named configuration (a grid cell). Runs in any process."""

from __future__ import annotations

import shutil
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loguru import logger

if TYPE_CHECKING:
    from batch.budget import BudgetLink, EpisodeShare

NOT_RUN = "not_run"
"""The `status` of a job the batch's budget left unstarted: the spend had reached it before the job's turn came."""
SPENT = "the batch's budget was spent"
UNANSWERED = "the batch's budget did not answer"
"""The `reason` of a not_run row: the ledger said so, or did not answer (which counts as spent)."""


def finished_rows(rows: list[dict]) -> list[dict]:
    """The rows with an episode to show: a crashed job has no summary, a job the budget left unstarted no episode."""
    return [row for row in rows if row.get("status") == "finished"]


def points_share(row: dict) -> float | None:
    """A finished row's best score over the game's maximum; None when the game gives no maximum."""
    max_score = row.get("max_score")
    return row["best_score"] / max_score if max_score else None


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


def not_run(job: dict, reason: str) -> dict:
    """The result row of a job that was never started: the batch's budget was spent."""
    row = {key: job[key] for key in ("id", "cell", "game", "seed", "episode")}
    return {**row, "status": NOT_RUN, "reason": reason}


def run_job(job: dict, limits: dict[str, Any] | None = None, budget: BudgetLink | None = None) -> dict:
    """Play the job's episode; its result row (`status` finished or crashed, or not_run when `budget`, the batch's,
    is spent), never an exception. `limits`: the batch's shared request limits, when the process has not had them
    installed (Ray tasks)."""
    if limits:
        install_request_limits(limits)
    from batch.budget import EpisodeShare, ReportingClient
    from orchestration.wiring import RunOptions, build_orchestrator, build_session, chosen_kinds, llm_client_for
    from session import telemetry
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
        share = EpisodeShare(budget, job["id"], config.gameplay) if budget is not None else None
        if share is not None and not share.start():
            return not_run(job, UNANSWERED if share.unanswered else SPENT)
        # with a batch budget, every call the episode makes is told to the batch's ledger
        client = llm_client_for(config, chosen_kinds(config, args), ReportingClient, share=share) if share else None
        session = build_session(config, args)
        try:
            orchestrator = build_orchestrator(config, args, session=session, llm_client=client)
            with telemetry.linked_to(job.get("trace_link")):  # the episode's trace links to the batch's span
                summary = read_summary(orchestrator.play_episode().parent)
        finally:
            session.close()  # its emulators' processes end with the job, not when the worker collects it
            telemetry.flush()  # a Ray worker may be ended without its exit handlers
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
        **({} if share is None else budget_fields(share, summary)),
    }


def budget_fields(share: EpisodeShare, summary: dict) -> dict:
    """A finished row's word on the batch's budget: whether it ended the episode, and whether its ledger failed to
    answer (then the share counted as spent)."""
    return {"cut_by_budget": share.cut(summary), **({"budget_unanswered": True} if share.unanswered else {})}
