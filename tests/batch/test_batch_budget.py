"""`main.py batch --max-cost-usd X`: one budget for the whole batch, kept by a ledger every worker tells what its
episode spends after each LLM call. Against a priced, scripted model on 127.0.0.1: two local workers stop within a
turn per running job of the budget, their records whole, the jobs never started listed as not run; the ledger's
arithmetic, an episode's cap following the rest of the batch, a ledger that stops answering, and the tables."""

from __future__ import annotations

import json
import time

import pytest

from agents.scripted_llm import ScriptedServer
from batch import runner
from batch.budget import SMALLEST_CAP, BatchManager, BudgetLedger, EpisodeShare, ManagerLink
from batch.jobs import run_job
from batch.results import BUDGET_COLUMNS, COLUMNS, write_results
from session.config import GameConfiguration
from tests.helpers import (
    BUDGET,
    MODEL,
    assert_stopped_by_the_budget,
    budget_flags,
    manifest_rows,
    priced_config,
    priced_model,
)
from tests.local_http import bypass_proxies


@pytest.fixture
def scripted_key(monkeypatch):
    """The llm kinds need a key; the scripted server takes any, and nothing else is called."""
    bypass_proxies(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")


@pytest.mark.slow
def test_two_local_workers_stop_within_a_turn_per_running_job_and_list_the_jobs_never_started(
    tmp_path, scripted_key, capsys
):
    out = tmp_path / "batch"
    with ScriptedServer(priced_model()) as server:
        flags = budget_flags(out, priced_config(tmp_path / "priced.toml", server.base_url), BUDGET)
        assert runner.main(flags) == 0
        rows = assert_stopped_by_the_budget(out, BUDGET, jobs=4)
        started = [ident for ident, row in rows.items() if row["status"] == "finished"]
        assert len(started) <= 2  # one job per worker: none ended before the budget did
        assert "the budget ($3.00) is spent" in capsys.readouterr().err

        # Run again: the budget is the whole batch's, earlier runs included: nothing more starts, the jobs not run
        # are listed again, and every episode stays as it was.
        folders = sorted(p for p in (out / "episodes").rglob("*") if p.is_dir())
        calls = sum(server.calls.values())
        assert runner.main(flags) == 0
        assert sum(server.calls.values()) == calls
        assert sorted(p for p in (out / "episodes").rglob("*") if p.is_dir()) == folders
        assert manifest_rows(out) == rows
        assert json.loads((out / "results.json").read_text())["budget"]["not_run"] == sorted(
            ident for ident, row in rows.items() if row["status"] == "not_run"
        )


def test_a_budget_needs_a_price_for_every_model_one_error_line(tmp_path, scripted_key, capsys):
    config = tmp_path / "unpriced.toml"
    config.write_text('[tool.zorkgpt.llm]\nagent_model = "unpriced-model"\ncritic_model = "unpriced-model"\n')
    out = tmp_path / "out"
    assert runner.main(budget_flags(out, config, 1.0)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "error: cell default: --max-cost-usd needs a price for unpriced-model: "
        'add [tool.zorkgpt.llm.prices."unpriced-model"]'
    )
    assert not (out / runner.MANIFEST).exists()
    # the offline kinds call no model: a budget needs no price for them
    offline = ["--agent", "offline", "--critic", "offline", "--max-turns", "1"]
    assert runner.plan(runner.parse_args([*budget_flags(out, config, 1.0), *offline]))


@pytest.mark.parametrize("value", ["0", "-1", "2000000"])
def test_a_budget_is_above_zero_and_at_most_a_million(value, capsys):
    with pytest.raises(SystemExit) as exit_:
        runner.parse_args(["--games", "zork1", "--max-cost-usd", value])
    assert exit_.value.code == 2 and "--max-cost-usd: above 0" in capsys.readouterr().err


def test_the_ledger_tells_each_job_what_the_rest_of_the_batch_spent():
    ledger = BudgetLedger(earlier=1.0)
    assert ledger.report("a", 0.0) == 1.0
    assert ledger.report("b", 0.5) == 1.0
    assert ledger.report("a", 0.25) == 1.5
    assert ledger.report("a", 0.1) == 1.5  # a job's spend only grows
    assert ledger.total() == 1.75


class FixedLink:
    """A ledger's answers, given in turn (None: it did not answer)."""

    def __init__(self, budget: float, answers: list[float | None]):
        self.budget = budget
        self.answers = answers
        self.told: list[float] = []

    def report(self, job_id: str, spent: float) -> float | None:
        self.told.append(spent)
        return self.answers.pop(0)


def gameplay(**keys):
    return GameConfiguration.from_dict({}, {"gameplay": keys}).gameplay


def test_an_episode_cap_is_what_the_rest_of_the_batch_left_never_above_its_own():
    played = gameplay()
    share = EpisodeShare(FixedLink(10.0, [4.0, 7.0, 9.5, 12.0]), "job", played)
    assert share.start() and played.max_cost_usd == 6.0
    assert share.update(1.0) and played.max_cost_usd == 3.0
    assert not share.update(0.6) and played.max_cost_usd == 0.5  # 9.5 + 0.6 reached 10: the turn's check ends it
    assert not share.update(0.7) and played.max_cost_usd == SMALLEST_CAP
    assert share.cut({"termination_reason": "budget", "cost_usd": {"total": 0.7}})

    own = gameplay(max_cost_usd=2.0)
    share = EpisodeShare(FixedLink(10.0, [1.0, 9.0]), "job", own)
    assert share.start() and own.max_cost_usd == 2.0
    assert share.update(0.5) and own.max_cost_usd == 1.0
    assert not share.cut({"termination_reason": "budget", "cost_usd": {"total": 2.0}})  # its own budget ended it
    assert not share.cut({"termination_reason": "max_turns", "cost_usd": {"total": 0.5}})

    spent = gameplay()
    assert not EpisodeShare(FixedLink(10.0, [10.0]), "job", spent).start()
    unanswered = EpisodeShare(FixedLink(10.0, [None]), "job", gameplay())
    assert not unanswered.start() and unanswered.unanswered


def test_a_ledger_whose_batch_is_gone_answers_at_once_with_none():
    manager = BatchManager()
    manager.start()
    link = ManagerLink(manager.BudgetLedger(0.0), 5.0)
    assert link.report("job", 1.0) == 0.0
    manager.shutdown()
    started = time.monotonic()
    assert link.report("job", 2.0) is None
    assert time.monotonic() - started < 5


class AnswersOnce:
    """A ledger that lets the job start, then never answers again (the batch's driver is gone)."""

    budget = 100.0

    def __init__(self):
        self.reports = 0

    def report(self, job_id: str, spent: float) -> float | None:
        self.reports += 1
        return 0.0 if self.reports == 1 else None


def test_an_episode_whose_ledger_stops_answering_ends_after_its_turn(tmp_path, scripted_key):
    with ScriptedServer(priced_model()) as server:
        flags = budget_flags(tmp_path / "out", priced_config(tmp_path / "priced.toml", server.base_url), 100.0)
        job = runner.plan(runner.parse_args(flags))[0]
        link = AnswersOnce()
        row = run_job(job, budget=link)
    assert row["status"] == "finished" and row["turns"] == 1, row
    assert row["termination_reason"] == "budget" and row["cut_by_budget"] and row["budget_unanswered"]
    assert link.reports == 1 + row["llm_calls"]  # the start, then each call
    assert job["config"]["llm"]["agent_model"] == MODEL


def row(ident: str, status: str = "finished", **fields) -> dict:
    base = {"id": ident, "cell": "c", "game": "g", "seed": 1, "episode": 1, "status": status}
    if status != "finished":
        return {**base, **fields}
    figures = {"final_score": 0, "best_score": 0, "max_score": 10, "turns": 3, "termination_reason": "budget"}
    return {**base, **figures, "llm_calls": 6, "tokens": 60, "cost_usd": 0.5, "wall_seconds": 1.0, **fields}


def test_the_tables_have_the_budget_columns_only_with_a_budget(tmp_path):
    rows = [row("a", cut_by_budget=True), row("b", cut_by_budget=False), row("c", "not_run"), row("d", "crashed")]
    result = write_results(tmp_path, rows, {}, 1.0, 2, budget=0.9)
    line = result["cells"][0]
    assert (line["episodes"], line["crashed"], line["cut_by_budget"], line["not_run"]) == (2, 1, 1, 1)
    assert (result["episodes"], result["crashed"]) == (3, 1)
    assert result["budget"] == {"max_cost_usd": 0.9, "spent_usd": 1.0, "cut_by_budget": ["a"], "not_run": ["c"]}
    header = (tmp_path / "results.csv").read_text().splitlines()[0].split(",")
    assert tuple(header) == COLUMNS + BUDGET_COLUMNS
    assert (
        "Budget $0.90 (--max-cost-usd), $1.0000 spent: 1 episodes cut by it, 1 jobs not run."
        in (tmp_path / "results.md").read_text()
    )

    plain = write_results(tmp_path, [row("a"), row("d", "crashed")], {}, 1.0, 2)
    assert "budget" not in plain and set(BUDGET_COLUMNS).isdisjoint(plain["cells"][0])
    assert tuple((tmp_path / "results.csv").read_text().splitlines()[0].split(",")) == COLUMNS
    assert "cut_by_budget" not in (tmp_path / "results.md").read_text()
