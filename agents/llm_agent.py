"""The LLM agent: asks an OpenAI-compatible model for one command and validates the reply."""

from __future__ import annotations

from agents.base import AgentContext, InvalidReply
from agents.llm_client import LLMClient
from agents.reply import parse_command
from managers.context import AGENT_SYSTEM_PROMPT, render_agent_prompt
from session.config import LLMConfig

FORMAT_GUIDANCE = (
    "Your last reply was not a single game command ({problem}). Reply with ONE command only, on one line, "
    "with no heading, label, quotes or explanation. Example: open mailbox"
)


class LLMAgent:
    kind = "llm"
    forced = False

    def __init__(self, client: LLMClient, config: LLMConfig, max_invalid_replies: int = 3):
        self.client = client
        self.config = config
        self.max_invalid_replies = max_invalid_replies
        self.parse_failures: list[dict] = []
        """Replies that failed validation since the orchestrator last drained this list."""

    def propose(self, context: AgentContext) -> str:
        messages = [
            {"role": "system", "content": AGENT_SYSTEM_PROMPT},
            {"role": "user", "content": render_agent_prompt(context)},
        ]
        last: InvalidReply | None = None
        for _ in range(self.max_invalid_replies):
            reply = self.client.chat(
                "agent", self.config.agent_model, messages, self.config.agent_temperature, self.config.agent_max_tokens
            )
            try:
                return parse_command(reply)
            except InvalidReply as exc:
                last = exc
                self.parse_failures.append({"kind": exc.kind, "reply": exc.reply[:300]})
                messages = messages[:2] + [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": FORMAT_GUIDANCE.format(problem=exc.detail)},
                ]
        assert last is not None
        raise last

    def drain_parse_failures(self) -> list[dict]:
        failures, self.parse_failures = self.parse_failures, []
        return failures
