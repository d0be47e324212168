"""A deterministic stand-in for `openai.OpenAI`, for tests and benchmarks: no network, scripted replies.

`LLMClient(config, "key", n, client=ScriptedOpenAI(reply))` runs the real client wrapper, reply parsing, token
accounting and failure handling; only the HTTP call is replaced. `reply(messages)` returns the content or raises
an `openai` exception to simulate timeouts, rate limits and server errors.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

from agents.prompts import role_of


class ScriptedOpenAI:
    def __init__(self, reply: Callable[[list[dict]], str]):
        self.reply = reply
        self.requests: list[list[dict]] = []
        self.params: list[dict] = []
        """Everything else each request sent (model, temperature, the token cap, response_format)."""
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, model: str, messages: list[dict], **params):
        self.requests.append(messages)
        self.params.append({"model": model, **params})
        content = self.reply(messages)
        prompt = sum(len(str(m["content"])) // 4 for m in messages)
        completion = len(str(content).split())
        return SimpleNamespace(
            choices=[SimpleNamespace(message=SimpleNamespace(content=content))],
            usage=SimpleNamespace(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion),
        )


def cycling_replies(replies: list[str], critic_reply: str = '{"score": 0.8, "reason": "plausible"}'):
    """A reply function: agent prompts get `replies` in turn (cycling); critic prompts a fixed JSON verdict."""
    position = 0

    def reply(messages: list[dict]) -> str:
        nonlocal position
        if role_of(messages) != "agent":
            return critic_reply
        text = replies[position % len(replies)]
        position += 1
        return text

    return reply
