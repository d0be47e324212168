"""A deterministic stand-in for `openai.OpenAI`, for tests and benchmarks: no network, scripted replies.

`LLMClient(config, "key", n, client=ScriptedOpenAI(reply))` runs the real client wrapper, reply parsing, token
accounting and failure handling; only the HTTP call is replaced. `reply(messages)` returns the content or raises
an `openai` exception to simulate timeouts, rate limits and server errors.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace


class ScriptedOpenAI:
    def __init__(self, reply: Callable[[list[dict]], str]):
        self.reply = reply
        self.requests: list[list[dict]] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self._create))

    def _create(self, model: str, messages: list[dict], temperature: float, max_tokens: int):
        self.requests.append(messages)
        content = self.reply(messages)
        return SimpleNamespace(
            choices=[SimpleNamespace(message=SimpleNamespace(content=content))],
            usage=SimpleNamespace(total_tokens=len(content.split()) + sum(len(m["content"]) // 4 for m in messages)),
        )


def cycling_replies(replies: list[str], critic_reply: str = '{"score": 0.8, "reason": "plausible"}'):
    """A reply function: agent prompts get `replies` in turn (cycling); critic and objective prompts a fixed JSON."""
    from managers.context import AGENT_SYSTEM_PROMPT

    position = 0

    def reply(messages: list[dict]) -> str:
        nonlocal position
        if messages[0]["content"] != AGENT_SYSTEM_PROMPT:
            return critic_reply if "Proposed command:" in messages[-1]["content"] else "{}"
        text = replies[position % len(replies)]
        position += 1
        return text

    return reply
