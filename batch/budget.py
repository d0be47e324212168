"""A budget for a whole batch (`main.py batch --max-cost-usd X`), shared by every worker, local process or Ray task.

One ledger (`BudgetLedger`) holds what each job of the batch has spent: in the batch's multiprocessing Manager for
local workers, in a Ray actor for Ray tasks. A job asks it before its episode starts (a spent budget: the job is not
run), and its episode's LLM client tells it what the episode has spent after every call, hearing back what the rest
of the batch has spent (`ReportingClient`). The episode's own cap, `gameplay.max_cost_usd`, which the orchestrator
compares with the episode's spend after every turn, is then set to what the rest of the batch left (`EpisodeShare`):
once the batch's spend reaches the budget, each running episode ends as `budget` after a turn, its records and
summary whole.

Why after every LLM call: money is spent there and nowhere else, so that is the first moment the ledger can know, at
one round trip per call (a call to a model takes far longer), with no thread and no polling. The bound it gives:
after the moment the batch's spend reaches the budget, each episode then running spends at most one more turn's calls:
the rest of the turn in progress when a call of it was still to come (that call hears the news), else the next turn
(the turn's last call had heard before the news, its turn's check had nothing to end on). So the batch overshoots
by at most the costliest turn of each job in flight; an episode-end call after the last turn (the knowledge store's
notes, when a cell turns the store on) adds one call per episode.

A ledger that does not answer (the batch's driver gone, its Manager or actor lost, REPLY_SECONDS passed) counts as a
spent budget: the job does not start, or its episode ends after the turn in progress. It never waits, and never
spends unwatched.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from multiprocessing.managers import SyncManager
from typing import Any, Protocol

from agents.llm_client import LLMClient
from session.config import GameplayConfig
from session.records import Ending

REPLY_SECONDS = 10.0
"""How long a Ray task waits for the ledger's answer before it counts the budget as spent."""
SMALLEST_CAP = 1e-9
"""The episode's cap once nothing is left (`gameplay.max_cost_usd` must be above 0): any call it made ends it."""


class BudgetLedger:
    """What each job of a batch has spent (USD), and what runs of the same batch before this one spent."""

    def __init__(self, earlier: float = 0.0):
        self.earlier = earlier
        """Spent by the jobs the batch's manifest already holds."""
        self.spent: dict[str, float] = {}
        self.lock = threading.Lock()  # a Manager serves each worker's calls in a thread of its own

    def report(self, job_id: str, spent: float) -> float:
        """Note what `job_id` has spent so far; what the rest of the batch has spent."""
        with self.lock:
            self.spent[job_id] = max(spent, self.spent.get(job_id, 0.0))
            return self.earlier + sum(self.spent.values()) - self.spent[job_id]

    def total(self) -> float:
        with self.lock:
            return self.earlier + sum(self.spent.values())


class BatchManager(SyncManager):
    """The shared objects of a batch's local workers: the request limits' semaphores and the budget's ledger."""


BatchManager.register("BudgetLedger", BudgetLedger)


class BudgetLink(Protocol):
    """A worker's way to the batch's ledger."""

    budget: float
    """The batch's budget (USD)."""

    def report(self, job_id: str, spent: float) -> float | None:
        """What the rest of the batch has spent, once the ledger has `spent` for this job; None when it does not
        answer."""


@dataclass
class ManagerLink:
    """The ledger in the batch's Manager (local workers)."""

    ledger: Any
    """A Manager proxy of a BudgetLedger."""
    budget: float

    def report(self, job_id: str, spent: float) -> float | None:
        try:
            return self.ledger.report(job_id, spent)
        except (OSError, EOFError):  # the Manager is gone with the batch's driver
            return None


@dataclass
class RayLink:
    """The ledger in a Ray actor (Ray tasks, on any node)."""

    ledger: Any
    """A Ray actor handle of a BudgetLedger."""
    budget: float

    def report(self, job_id: str, spent: float) -> float | None:
        import ray

        try:
            return ray.get(self.ledger.report.remote(job_id, spent), timeout=REPLY_SECONDS)
        except ray.exceptions.RayError:  # the actor or the driver is lost, or the answer is late (GetTimeoutError)
            return None


class EpisodeShare:
    """One job's share of the batch's budget: its episode's `gameplay.max_cost_usd`, kept at what the rest of the
    batch left (never above the episode's own cap, when the configuration gives one)."""

    def __init__(self, link: BudgetLink, job_id: str, gameplay: GameplayConfig):
        self.link = link
        self.job_id = job_id
        self.gameplay = gameplay
        self.own_cap = gameplay.max_cost_usd
        self.unanswered = False
        """The ledger did not answer once: the share was taken as spent."""

    def start(self) -> bool:
        """Whether the batch's budget leaves anything for this job (its cap set to that); False: it is not run."""
        return self.update(0.0)

    def update(self, spent: float) -> bool:
        """Tell the ledger what the episode has spent; its cap follows. Whether the budget still holds more."""
        others = self.link.report(self.job_id, spent)
        self.unanswered |= others is None
        left = 0.0 if others is None else self.link.budget - others
        cap = max(left, SMALLEST_CAP)
        self.gameplay.max_cost_usd = cap if self.own_cap is None else min(cap, self.own_cap)
        return left > spent

    def cut(self, summary: dict) -> bool:
        """Whether the batch's budget ended the episode (its own budget, if any, was not spent)."""
        spent = summary["cost_usd"].get("total", 0.0)
        return summary["termination_reason"] == Ending.BUDGET and (self.own_cap is None or spent < self.own_cap)


class ReportingClient(LLMClient):
    """An LLMClient that tells its episode's share what the episode has spent after every call (a failed call's
    tokens count too)."""

    def __init__(self, *args, share: EpisodeShare, **kwargs):
        super().__init__(*args, **kwargs)
        self.share = share

    def chat(self, *args, **kwargs) -> str:
        try:
            return super().chat(*args, **kwargs)
        finally:
            self.share.update(sum(self.usage.cost_usd.values()))
