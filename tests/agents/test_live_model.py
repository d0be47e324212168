"""Opt-in: a short episode against the real model configured in pyproject.toml. Never part of CI.

    ZORKGPT_LIVE=1 OPENAI_API_KEY=... ZORK_ROM=../shared/games/zork1.z5 uv run pytest tests/agents/test_live_model.py

It spends real money (about 40 calls; a few cents with gpt-4o-mini) and checks what only a real model can show:
its replies parse in the configured reply mode, and the critic's scores vary with the proposals.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session.records import read_record_dicts, read_summary
from tests.helpers import make_config

LIVE_TURNS = 20
pytestmark = pytest.mark.skipif(
    os.environ.get("ZORKGPT_LIVE") != "1", reason="live LLM test: set ZORKGPT_LIVE=1 and an API key to run it"
)


def test_a_real_model_plays_twenty_turns(rom_path, tmp_path):
    from orchestration.wiring import RunOptions, build_orchestrator

    config = make_config(tmp_path, gameplay={"agent": "llm", "critic": "llm", "max_turns_per_episode": LIVE_TURNS})
    if not config.llm.api_key():
        pytest.fail(f"ZORKGPT_LIVE=1 needs an API key in ${config.llm.api_key_env}", pytrace=False)
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True))
    summary_path: Path = orchestrator.play_episode()
    summary, records = read_summary(summary_path.parent), read_record_dicts(summary_path.parent)

    assert summary["turns"] == LIVE_TURNS, summary["termination_reason"]
    unparsed = [r for r in records if (r.get("fallback") or "").startswith("unparseable_reply")]
    assert len(unparsed) <= LIVE_TURNS // 10, [r["parse_failures"] for r in unparsed]
    scores = {c["score"] for r in records for c in r["candidates"] if c["source"] == "llm"}
    assert len(scores) > 1, "the critic gave every proposal the same score"
    assert not summary["llm_failures"], summary["llm_failures"]
    assert summary["cost_usd"]["total"] > 0 or summary["unpriced_models"]
