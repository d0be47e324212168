"""What an episode spends on LLM calls: by turn, by role and in total, resumed turns included."""

from __future__ import annotations

from collections import Counter

from agents.llm_client import LLMClient
from session.records import TurnRecord

Usage = tuple[dict[str, int], dict[str, int], dict[str, float]]
"""LLM calls, tokens and USD by role."""


class Spending:
    def __init__(self, client: LLMClient | None):
        self.client = client
        self.resumed: tuple[Counter, Counter, Counter] = (Counter(), Counter(), Counter())
        """Calls, tokens and USD by role of the turns a resumed episode replayed (they were paid before)."""

    def snapshot(self) -> Usage:
        return self.client.usage.snapshot() if self.client else ({}, {}, {})

    def since(self, before: Usage) -> Usage:
        """Calls, tokens and cost by role since `before` (a `snapshot()`), the roles that spent nothing left out."""
        now = self.snapshot()
        calls, tokens, cost = ({k: v - old.get(k, 0) for k, v in new.items()} for new, old in zip(now, before))
        return (
            {k: v for k, v in calls.items() if v},
            {k: v for k, v in tokens.items() if v},
            {k: round(v, 8) for k, v in cost.items() if v},
        )

    def add_resumed(self, record: TurnRecord) -> None:
        """A replayed turn's spending, as its record has it."""
        for total, spent in zip(self.resumed, (record.llm_calls, record.llm_tokens, record.llm_cost_usd)):
            total.update(spent)

    def cost(self) -> dict[str, float]:
        """USD by role and in total: the replayed turns' and this run's, by the price table."""
        spent = self.resumed[2] + (self.client.usage.cost_usd if self.client else Counter())
        return {**{role: round(v, 6) for role, v in sorted(spent.items())}, "total": round(sum(spent.values()), 6)}

    def summary(self) -> dict:
        """The summary's LLM fields."""
        usage = self.client.usage if self.client else None
        return {
            "llm_calls": dict(self.resumed[0] + (usage.calls if usage else Counter())),
            "tokens": dict(self.resumed[1] + (usage.tokens if usage else Counter())),
            "token_details": usage.by_role() if usage else {},
            "prompt_chars": dict(usage.prompt_chars) if usage else {},
            "cost_usd": self.cost(),
            "unpriced_models": sorted(usage.unpriced) if usage else [],
            "llm_failures": dict(usage.failures) if usage else {},
            "llm_adjustments": dict(usage.adjustments) if usage else {},
        }


def usage_line(summary: dict) -> str:
    """`LLM use: agent 40 calls, 52,100 tokens, $0.0081; critic ...; total $0.0150` for the console's last lines."""
    cost = summary["cost_usd"]
    parts = [
        f"{role} {calls} calls, {summary['tokens'].get(role, 0):,} tokens"
        + (f", ${cost[role]:.4f}" if role in cost else "")
        for role, calls in sorted(summary["llm_calls"].items())
    ]
    unpriced = f" (no price for {', '.join(summary['unpriced_models'])})" if summary["unpriced_models"] else ""
    return f"LLM use: {'; '.join(parts)}; total ${cost['total']:.4f}{unpriced}"
