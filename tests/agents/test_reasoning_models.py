"""Reasoning models, served as their providers serve them, with only the model's name configured.

The integration tests play zork1's walkthrough through `_run_game_loop` on the LLM path against the scripted server
on 127.0.0.1 playing a reasoning model (agents.scripted_llm.ReasoningModel): OpenAI's o-series (refuses `max_tokens`
and any temperature but 1, hidden reasoning that can spend the whole cap and leave the content empty) and
DeepSeek-R1 as vLLM or Ollama serve it (the reasoning in a `<think>` block that the cap can cut)."""

from __future__ import annotations

from types import SimpleNamespace

import openai
import pytest

from agents.base import LLMCallFailed
from agents.llm_client import LLMClient
from agents.llm_settings import CHAT_FAMILY, DEFAULT_FAMILIES, LLMConfig, ModelFamily
from agents.scripted_llm import ReasoningModel
from playthroughs.llm_path import play
from session.jericho_session import JerichoSession
from tests.helpers import PYPROJECT, story_file

pytestmark = pytest.mark.usefixtures("no_proxy")  # the scripted server is on 127.0.0.1


def long_thought_every(n: int, tokens: int, usual: int = 1500):
    """A model that, on every n-th request, reasons longer than its family's cap."""
    return lambda request: tokens if request % n == 0 else usual


def play_zork1(tmp_path, model: str, reasoning: ReasoningModel) -> tuple[dict, list[dict], dict]:
    rom = story_file("zork1.z5")
    served: dict = {}
    only_the_name = {"llm": {"agent_model": model, "critic_model": model}}
    summary, records, _ = play(
        rom, JerichoSession(rom).walkthrough(), PYPROJECT, tmp_path, more_overrides=only_the_name,
        reasoning=reasoning, served=served,
    )  # fmt: skip
    return summary, records, served


@pytest.mark.slow
def test_an_o_series_model_named_only_plays_zork1_to_victory(tmp_path):
    """Every 7th request reasons 12,000 tokens, past the family's 8,000-token cap: the server returns empty
    content cut by `length`, and that call alone is asked again with a larger cap, which the role keeps."""
    summary, records, served = play_zork1(tmp_path, "o4-mini", ReasoningModel(long_thought_every(7, 12_000)))
    assert summary["termination_reason"] == "victory" and summary["final_score"] == 350
    assert all(record["ran"] for record in records)
    assert served["refused"] == 0  # nothing the model refuses was sent
    assert {key for body in served["bodies"] for key in body} == {"model", "max_completion_tokens", "response_format"}
    assert served["cut"] > 0 and summary["llm_adjustments"] == {"cap": served["cut"]}
    caps = [body["max_completion_tokens"] for body in served["bodies"]]
    assert set(caps) == {8000, 32000} and served["cut"] <= 2  # once per role: the larger cap is kept
    assert summary["llm_failures"] == {}
    assert summary["token_details"]["agent"]["reasoning"] > 0


@pytest.mark.slow
def test_a_think_block_cut_by_the_cap_is_asked_again_never_replaced_by_a_command(tmp_path):
    """DeepSeek-R1 through Ollama: the reasoning is in the reply. A block the cap cuts (unclosed) is no reply to
    read: the call is made again with a larger cap, and the step the model meant runs."""
    reasoning = ReasoningModel(long_thought_every(5, 9000), refuses_chat_parameters=False, think_block=True)
    summary, records, served = play_zork1(tmp_path, "deepseek-r1:14b", reasoning)
    assert summary["termination_reason"] == "victory"
    walkthrough = JerichoSession(story_file("zork1.z5")).walkthrough()
    assert all(record["ran"] for record in records)
    assert [record["command"] for record in records] == [step.lower() for step in walkthrough[: len(records)]]
    assert served["cut"] > 0 and summary["llm_adjustments"] == {"cap": served["cut"]}


def test_a_model_no_family_knows_is_called_as_the_server_asks(tmp_path):
    """A reasoning model by a name no family matches is called as a chat model; the server refuses `max_tokens`,
    then the temperature, each once, and the harness sends what it takes from then on."""
    rom = story_file("zork1.z5")
    commands = JerichoSession(rom).walkthrough()[:12]
    served: dict = {}
    summary, records, _ = play(
        rom, commands, PYPROJECT, tmp_path, more_overrides={"llm": {"agent_model": "lab-reasoner-2",
        "critic_model": "lab-reasoner-2"}}, reasoning=ReasoningModel(), served=served,
    )  # fmt: skip
    assert summary["termination_reason"] == "max_turns", summary["termination_reason"]
    assert [record["command"] for record in records] == [step.lower() for step in commands]
    assert served["refused"] == 2
    # and its reasoning spends the chat cap: asked again with room to think, once per role
    assert summary["llm_adjustments"] == {"max_tokens": 1, "temperature": 1, "cap": 2}
    assert summary["llm_failures"] == {}
    sent = {key for body in served["bodies"][2:] for key in body}
    assert sent == {"model", "max_completion_tokens", "response_format"}
    assert [body["max_completion_tokens"] for body in served["bodies"][2:6]] == [300, 8000, 300, 8000]


# -- the client's own rules --------------------------------------------------------------------------------------
class CappedServer:
    """In process: replies cut by the cap (`finish_reason` length) while the cap is below `needs` tokens."""

    def __init__(self, needs: int, content: str = "", answer: str = '{"thought": "t", "command": "look"}'):
        self.needs, self.content, self.answer = needs, content, answer
        self.caps: list[int | None] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, model, messages, **params):
        cap = params.get("max_tokens", params.get("max_completion_tokens"))
        self.caps.append(cap)
        cut = cap is not None and cap < self.needs
        message = SimpleNamespace(content=self.content if cut else self.answer)
        usage = SimpleNamespace(prompt_tokens=10, completion_tokens=cap or 5, total_tokens=10 + (cap or 5))
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="length" if cut else "stop")],
                               usage=usage)  # fmt: skip


@pytest.mark.parametrize("content", ["", "<think>Which way is the house? The path", "<think>a plan</think>  "])
def test_a_reply_cut_before_it_said_anything_is_asked_once_more_with_a_larger_cap(content):
    server = CappedServer(needs=1000, content=content)
    client = LLMClient(LLMConfig(), "key", 3, client=server)
    assert client.chat("agent", "m", [], 0.7, 300) == server.answer
    assert server.caps == [300, 8000]
    client.chat("agent", "m", [], 0.7, 300)  # the larger cap is kept for the role's later calls
    assert server.caps == [300, 8000, 8000]


def test_a_reply_cut_again_fails_and_is_never_asked_a_third_time():
    server = CappedServer(needs=100_000)
    client = LLMClient(LLMConfig(), "key", 3, client=server)
    with pytest.raises(LLMCallFailed) as failed:
        client.chat("agent", "m", [], 0.7, 8000)
    assert failed.value.category == "empty_response" and server.caps == [8000, 32000]


def test_a_cut_reply_that_said_something_is_kept_and_no_cap_means_no_retry():
    said = CappedServer(needs=1000, content='{"thought": "go", "command": "north"}')
    assert LLMClient(LLMConfig(), "key", 3, client=said).chat("agent", "m", [], 0.7, 300).endswith('"north"}')
    assert said.caps == [300]
    uncapped = CappedServer(needs=1000)
    client = LLMClient(LLMConfig(token_limit_parameter="none"), "key", 3, client=uncapped)
    assert client.chat("agent", "m", [], 0.7, 300) == uncapped.answer and uncapped.caps == [None]


def test_a_400_that_names_no_parameter_sent_is_a_failure_not_a_retry():
    calls = []

    def create(model, messages, **params):
        calls.append(params)
        response = SimpleNamespace(status_code=400, headers={}, request=None)
        raise openai.BadRequestError("Invalid 'messages': too many", response=response, body=None)

    client = LLMClient(LLMConfig(), "key", 3, client=SimpleNamespace(chat=SimpleNamespace(
        completions=SimpleNamespace(create=create))))  # fmt: skip
    with pytest.raises(LLMCallFailed) as failed:
        client.chat("agent", "gpt-4o-mini", [], 0.7, 300)
    assert failed.value.category == "http_400" and len(calls) == 1


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("o4-mini", "o-series"),
        ("openai/o3", "o-series"),
        ("o1-preview", "o-series"),
        ("gpt-5.1", "gpt-5"),
        ("gpt-5-mini", "gpt-5"),
        ("deepseek/deepseek-r1-0528", "deepseek-r1"),
        ("deepseek-reasoner", "deepseek-r1"),
        ("qwq:32b", "qwq"),
        ("Qwen/QwQ-32B", "qwq"),
        ("openai/gpt-oss-120b", "gpt-oss"),
    ],
)
def test_a_model_name_finds_its_family(model, family):
    assert LLMConfig().family_of(model) == DEFAULT_FAMILIES[family]


@pytest.mark.parametrize("model", ["gpt-4o-mini", "o40", "gpt-50", "llama3.1:8b", "mistral-large"])
def test_other_names_are_chat_models(model):
    config = LLMConfig(agent_model=model)
    assert config.family_of(model) == CHAT_FAMILY
    assert config.max_tokens_for("agent") == 300 and config.sends_temperature_to(model)


def test_a_configured_family_comes_before_the_built_in_ones_and_explicit_settings_win():
    mine = ModelFamily(match=["o4-mini-lab"], token_limit_parameter="max_tokens", max_tokens=2000)
    config = LLMConfig(agent_model="o4-mini-lab", model_families={"mine": mine})
    assert config.family_of("o4-mini-lab") == mine and config.family_of("o4-mini") == DEFAULT_FAMILIES["o-series"]
    assert config.max_tokens_for("agent") == 2000 and config.token_parameter_for("o4-mini-lab") == "max_tokens"
    explicit = LLMConfig(agent_model="o4-mini", agent_max_tokens=500, send_temperature=True)
    assert explicit.max_tokens_for("agent") == 500 and explicit.sends_temperature_to("o4-mini")
