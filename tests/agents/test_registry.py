"""A new agent or critic kind is added from its own module alone. The toy kinds below are registered here, nowhere else,
and play real zork1 episodes through the wiring and through main.py's command line."""

from __future__ import annotations

from pathlib import Path

import pytest

import main
from agents.base import Agent, Critic, Proposal
from agents.registry import AGENTS, CRITICS, Kind
from agents.scripted_llm import ScriptedServer
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import ConfigError
from session.context import AgentContext
from session.records import Judgement, read_record_dicts, read_summary
from tests.helpers import PYPROJECT, make_config
from tests.local_http import bypass_proxies

TOY_WALK = ["open mailbox", "take leaflet", "north", "east", "open window", "enter window"]
"""Each step changes the game (no pre-check refuses it): the toy critic's verdict decides every one."""
TOY_REASON = "the toy critic likes every move"


class ToyAgent(Agent):
    """Walks TOY_WALK, one step a turn, saying which step it is."""

    kind = "toy"

    def __init__(self):
        self.steps = 0

    def propose(self, context: AgentContext) -> Proposal:
        self.steps += 1
        failures = ({"kind": "toy", "reply": "a toy reply it could not read"},) if self.steps == 1 else ()
        return Proposal(TOY_WALK[(self.steps - 1) % len(TOY_WALK)], f"toy step {self.steps}", failures)


class ToyCritic(Critic):
    kind = "toy"

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        return Judgement(0.9, TOY_REASON)


class ToyModelAgent(Agent):
    """An LLM-backed toy: asks its own model (`toy-model`) for the command."""

    kind = "toy-model"
    prompted = True

    def __init__(self, client):
        self.client = client

    def propose(self, context: AgentContext) -> Proposal:
        messages = [{"role": "system", "content": "You play a text game."}, {"role": "user", "content": "Command?"}]
        return Proposal(self.client.chat("agent", "toy-model", messages, 0.0, 20).strip())


@pytest.fixture
def toy_kinds():
    kinds = [
        (AGENTS, AGENTS.register(Kind("toy", lambda session, config, options, client: ToyAgent()))),
        (CRITICS, CRITICS.register(Kind("toy", lambda session, config, options, client: ToyCritic()))),
        (
            AGENTS,
            AGENTS.register(
                Kind(
                    "toy-model",
                    lambda session, config, options, client: ToyModelAgent(client),
                    models=lambda llm: ("toy-model",),
                )
            ),
        ),
    ]
    yield
    for registry, kind in kinds:
        registry.unregister(kind.name)


def _records(summary_path: Path) -> list[dict]:
    return read_record_dicts(summary_path.parent)


def test_a_toy_agent_and_critic_play_through_the_wiring(toy_kinds, rom_path, tmp_path, no_api_key):
    config = make_config(tmp_path, gameplay={"agent": "toy", "critic": "toy", "max_turns_per_episode": len(TOY_WALK)})
    orchestrator = build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True))
    summary_path = orchestrator.play_episode()
    summary, records = read_summary(summary_path.parent), _records(summary_path)
    assert (summary["agent"], summary["critic"], summary["turns"]) == ("toy", "toy", len(TOY_WALK))
    assert [r["command"] for r in records] == TOY_WALK
    assert {r["critic_reason"] for r in records} == {TOY_REASON}
    assert [r["thought"] for r in records] == [f"toy step {n}" for n in range(1, len(TOY_WALK) + 1)]
    assert records[0]["parse_failures"] == [{"kind": "toy", "reply": "a toy reply it could not read"}]
    assert not any(r["parse_failures"] for r in records[1:])
    assert records[-1]["room_name_after"] == "Kitchen"
    assert summary["llm_calls"] == {} and summary["critic_retries"] == 0  # the protocol's defaults


def test_a_toy_agent_plays_from_the_command_line(toy_kinds, rom_path, tmp_path, capsys, no_api_key):
    flags = ["--rom", str(rom_path), "--episode-dir", str(tmp_path), "--max-turns", "3", "--no-knowledge"]
    code = main.main(["--config", str(PYPROJECT), "--quiet", *flags, "--agent", "toy", "--critic", "offline"])
    assert code == 0
    summary_path = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert read_summary(summary_path.parent)["agent"] == "toy"
    assert [r["command"] for r in _records(summary_path)] == TOY_WALK[:3]


def test_an_unknown_kind_is_one_clear_error(toy_kinds, rom_path, tmp_path, capsys, no_api_key):
    config = make_config(tmp_path, gameplay={"agent": "nonesuch"})
    with pytest.raises(ConfigError, match=r"no agent kind 'nonesuch'; the kinds: auto, offline, .*toy"):
        build_orchestrator(config, RunOptions(rom=str(rom_path)))
    toml = tmp_path / "config.toml"
    toml.write_text('[tool.zorkgpt.gameplay]\ncritic = "nonesuch"\n')
    code = main.main(["--config", str(toml), "--rom", str(rom_path), "--episode-dir", str(tmp_path), "--quiet"])
    err = capsys.readouterr().err
    assert code == main.EXIT_USAGE and err.count("\n") == 1
    assert "no critic kind 'nonesuch'; the kinds: auto, offline, llm, when_risky, toy" in err
    # --agent takes any name (a plugin's kinds are known only once the configuration is read): the registry refuses
    argv = ["--config", str(PYPROJECT), "--rom", str(rom_path), "--episode-dir", str(tmp_path), "--quiet"]
    code = main.main([*argv, "--agent", "nonesuch"])
    err = capsys.readouterr().err
    assert code == main.EXIT_USAGE and err.count("\n") == 1
    assert "no agent kind 'nonesuch'; the kinds: auto, offline, llm, walkthrough, replay, toy" in err


def test_a_kind_that_calls_a_model_gets_the_key_client_and_budget_checks(
    toy_kinds, rom_path, tmp_path, monkeypatch, no_api_key
):
    config = make_config(tmp_path, gameplay={"agent": "toy-model", "critic": "offline", "max_turns_per_episode": 2})
    with pytest.raises(ConfigError, match=r"--agent toy-model needs an API key in \$OPENAI_API_KEY"):
        build_orchestrator(config, RunOptions(rom=str(rom_path)))
    monkeypatch.setenv("OPENAI_API_KEY", "scripted")
    budget = make_config(tmp_path, gameplay={"agent": "toy-model", "max_cost_usd": 1.0})
    with pytest.raises(ConfigError, match="max_cost_usd needs a price for toy-model"):
        build_orchestrator(budget, RunOptions(rom=str(rom_path)))
    bypass_proxies(monkeypatch)
    replies = iter(["open mailbox", "north"])
    with ScriptedServer(lambda messages: next(replies)) as server:
        config = make_config(
            tmp_path,
            gameplay={"agent": "toy-model", "critic": "offline", "max_turns_per_episode": 2},
            llm={"base_url": server.base_url, "max_retries": 0},
        )
        summary_path = build_orchestrator(config, RunOptions(rom=str(rom_path), quiet=True)).play_episode()
    summary = read_summary(summary_path.parent)
    assert summary["llm_calls"] == {"agent": 2} and summary["unpriced_models"] == ["toy-model"]
    assert [r["command"] for r in _records(summary_path)] == ["open mailbox", "north"]


def test_a_kind_name_is_checked_when_registered(toy_kinds):
    for name in ("auto", "toy", "Not A Name"):
        with pytest.raises(ValueError):
            AGENTS.register(Kind(name, lambda session, config, options, client: ToyAgent()))
    assert "toy" in AGENTS.choices() and "toy" in CRITICS.choices()


def test_a_batch_refuses_an_unknown_kind_before_any_job(rom_path, tmp_path, capsys, no_api_key):
    from batch import runner

    grid = tmp_path / "grid.toml"
    grid.write_text('[cells.odd.gameplay]\nagent = "nonesuch"\n')
    argv = ["--games", str(rom_path), "--grid", str(grid), "--out", str(tmp_path / "out"), "--quiet"]
    assert runner.main([*argv, "--config", str(PYPROJECT)]) == 2
    assert "cell odd: tool.zorkgpt.gameplay.agent: no agent kind 'nonesuch'" in capsys.readouterr().err
    assert not (tmp_path / "out" / runner.MANIFEST).exists()
