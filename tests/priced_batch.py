"""A batch whose LLM calls cost money, for the tests of `main.py batch --max-cost-usd`: a scripted model on 127.0.0.1
(agents.scripted_llm.ScriptedServer, never a real API) with a price, a configuration that calls it, and the checks
of a batch its budget stopped."""

from __future__ import annotations

import csv
import json
import time
from pathlib import Path

from agents.scripted_llm import PLAUSIBLE_VERDICT, cycling_replies
from session.records import EVENTS_FILE, read_records, read_summary
from tests.helpers import story_file

MODEL = "scripted-priced"
PRICE = 100.0
"""USD per million tokens, in and out: a turn (an agent's and a critic's call) costs about $0.1."""
COMMANDS = ["look", "inventory", "north", "south"]
"""What the scripted agent proposes, in turn: nothing that ends a game of zork1."""
CALL_SECONDS = 0.05
"""How long each call takes: both workers are playing when the budget is reached, not one before the other is up."""
BUDGET = 3.0
"""About 25 turns of the scripted model: both workers play a few turns each, then the budget stops them."""


def priced_model():
    """The scripted model's reply function: the agent cycles through COMMANDS, the critic lets each pass."""
    replies = cycling_replies(
        [json.dumps({"thought": "one more step", "command": c}) for c in COMMANDS], json.dumps(PLAUSIBLE_VERDICT)
    )

    def reply(messages: list[dict]) -> str:
        time.sleep(CALL_SECONDS)
        return replies(messages)

    return reply


def priced_config(path: Path, base_url: str, api_key_env: str = "OPENAI_API_KEY") -> Path:
    """A configuration whose llm agent and critic call MODEL at `base_url` at PRICE, with the loop break off: only the
    budget or the turn limit ends an episode."""
    path.write_text(
        f'[tool.zorkgpt.llm]\nbase_url = "{base_url}"\napi_key_env = "{api_key_env}"\n'
        f'agent_model = "{MODEL}"\ncritic_model = "{MODEL}"\nmax_retries = 0\ntimeout_seconds = 30.0\n'
        f'[tool.zorkgpt.llm.prices."{MODEL}"]\ninput = {PRICE}\noutput = {PRICE}\n'
        "[tool.zorkgpt.loop_break]\nenabled = false\n"
    )
    return path


def budget_flags(out: Path, config: Path, budget: float, seeds: str = "1,2,3,4") -> list[str]:
    """`main.py batch` flags: zork1 on `seeds`, two workers, the llm agent and critic, up to 60 turns each."""
    flags = ["--games", str(story_file("zork1.z5")), "--seeds", seeds, "--workers", "2", "--max-turns", "60"]
    flags += ["--agent", "llm", "--critic", "llm", "--config", str(config), "--out", str(out), "--quiet"]
    return [*flags, "--max-cost-usd", str(budget)]


def manifest_rows(out: Path) -> dict[str, dict]:
    return {row["id"]: row for row in map(json.loads, (out / "manifest.jsonl").read_text().splitlines())}


def assert_stopped_by_the_budget(out: Path, budget: float, jobs: int) -> dict[str, dict]:
    """The checks of a batch its budget stopped. Every job has a row: the started ones finished, cut by the budget
    (`budget` ending, records and summary whole), the others `not_run`. What they spent reached the budget and went
    past it by at most the costliest turn of each job started (after the spend reached the budget, each running
    episode plays at most one more turn's calls). The tables say which jobs were cut and which were not run.
    Returns the manifest's rows by id."""
    rows = manifest_rows(out)
    assert len(rows) == jobs
    started = sorted(ident for ident, row in rows.items() if row["status"] != "not_run")
    unstarted = sorted(ident for ident, row in rows.items() if row["status"] == "not_run")
    assert started and unstarted, rows
    spent = worst_turns = 0.0
    for ident in started:
        row = rows[ident]
        assert row["status"] == "finished" and row["termination_reason"] == "budget" and row["cut_by_budget"], row
        folder = out / "episodes" / ident / row["episode_folder"]
        summary = read_summary(folder)
        assert summary["termination_reason"] == "budget"
        lines = (folder / EVENTS_FILE).read_text(encoding="utf-8").splitlines()
        assert lines and all(isinstance(json.loads(line), dict) for line in lines)  # every line whole
        records = read_records(folder)
        assert len(records) == summary["turns"] >= 1
        spent += summary["cost_usd"]["total"]
        worst_turns += max(sum(record.llm_cost_usd.values()) for record in records)
    assert all(rows[ident]["reason"] == "the batch's budget was spent" for ident in unstarted)
    assert all(not (out / "episodes" / ident).exists() for ident in unstarted)
    assert budget - 1e-5 <= spent <= budget + worst_turns + 1e-5, (spent, budget, worst_turns)

    results = json.loads((out / "results.json").read_text())
    assert sorted(results["budget"]["cut_by_budget"]) == started
    assert sorted(results["budget"]["not_run"]) == unstarted
    assert results["episodes"] == len(started) and results["crashed"] == 0
    cell = results["cells"][0]
    assert (cell["episodes"], cell["cut_by_budget"], cell["not_run"]) == (len(started), len(started), len(unstarted))
    table = (out / "results.md").read_text()
    assert "| cost_usd | cut_by_budget | not_run |" in table
    cut_part, not_run_part = table.split("## Cut by the budget")[1].split("## Not run: the budget was spent")
    assert all(f"- {ident}" in cut_part for ident in started)
    assert all(f"- {ident}" in not_run_part for ident in unstarted)
    with (out / "results.csv").open(newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert lines[0]["cut_by_budget"] == str(len(started)) and lines[0]["not_run"] == str(len(unstarted))
    return rows
