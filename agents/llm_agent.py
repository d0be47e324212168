"""The LLM agent: asks an OpenAI-compatible model for a short thought and one command, and validates the reply."""

from __future__ import annotations

from typing import Any

from agents.base import Agent, InvalidReply, Proposal
from agents.llm_client import LLMClient, json_schema
from agents.llm_settings import LLMConfig
from agents.prompts import AGENT_REPLY, AGENT_RETRY, agent_system_prompt, render_agent_prompt
from agents.reply import parse_reply, reply_note
from session.context import AgentContext

AGENT_REPLY_SCHEMA = json_schema(
    "agent_reply", {"thought": {"type": "string"}, "command": {"type": "string"}, "note": {"type": "string"}}
)
"""`response_format` for `[tool.zorkgpt.llm] response_format = "json_schema"` (OpenAI's structured outputs)."""


class LLMAgent(Agent):
    kind = "llm"
    prompted = True

    def __init__(self, client: LLMClient, config: LLMConfig, max_invalid_replies: int = 3, game: str = ""):
        self.client = client
        self.config = config
        self.max_invalid_replies = max_invalid_replies
        self.system_prompt = agent_system_prompt(game, config.agent_reply)
        self.structured = self._schema_wanted()
        """Ask the server to enforce the JSON reply; turned off for the episode once the server refuses it."""
        self.unusable_turns = 0
        """Proposals in a row, up to the last, none of whose replies could be used."""
        self.parse_failures: list[dict] = []
        """Replies that failed validation and were not yet handed over with a proposal (a failed call in between
        leaves them here for the next one)."""

    def propose(self, context: AgentContext) -> Proposal:
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": render_agent_prompt(context)},
        ]
        last: InvalidReply | None = None
        for _ in range(self.tries()):
            reply = self._ask(messages)
            try:
                thought, command = parse_reply(reply, context.dictionary)
                self.unusable_turns = 0
                return Proposal(command, thought, self._drain_parse_failures(), reply_note(reply))
            except InvalidReply as exc:
                last = exc
                self.parse_failures.append({"kind": exc.kind, "reply": exc.reply[:300]})
                retry = AGENT_RETRY.format(problem=exc.detail, reply_rule=AGENT_REPLY[self.config.agent_reply])
                # Some servers refuse an assistant message with empty content: then only the retry prompt goes.
                said = [{"role": "assistant", "content": reply}] if reply.strip() else []
                messages = messages[:2] + said + [{"role": "user", "content": retry}]
        assert last is not None
        self.unusable_turns += 1
        raise InvalidReply(last.kind, last.reply, last.detail, self._drain_parse_failures())

    def tries(self) -> int:
        """Replies asked for this proposal: `max_invalid_replies`, and fewer once two proposals in a row had no
        usable reply (one less for each further one, at least one), until a reply is usable again: asking the same
        prompt again and again of a model that writes no command costs calls and changes nothing, and the loop
        break ends such an episode all the same (its parse-failure rule). A model that fails a turn now and then
        keeps every retry."""
        return max(1, self.max_invalid_replies - max(0, self.unusable_turns - 1))

    def memory(self) -> dict[str, Any] | None:
        """That the server refused the JSON schema, once it did (the episode then asks in the prompt only)."""
        return {"structured": False} if self._schema_wanted() and not self.structured else None

    def recall(self, memory: dict[str, Any]) -> None:
        if memory != {"structured": False}:
            raise ValueError("an LLM agent remembers only that the server refused the JSON schema")
        self.structured = False

    def _schema_wanted(self) -> bool:
        return self.config.response_format == "json_schema" and self.config.agent_reply == "thought"

    def _ask(self, messages: list[dict]) -> str:
        config = self.config
        schema = AGENT_REPLY_SCHEMA if self.structured else None
        try:
            return self.client.chat_structured(
                "agent", config.agent_model, messages, config.agent_temperature, config.max_tokens_for("agent"), schema
            )
        finally:
            self.structured = self.structured and "agent" not in self.client.unstructured

    def _drain_parse_failures(self) -> tuple[dict, ...]:
        failures, self.parse_failures = tuple(self.parse_failures), []
        return failures
