"""The `when_risky` critic: the LLM critic asked only when its verdict can change the outcome.

Most commands of healthy play are plain: a first `examine`, a new exit, taking what is in sight. An LLM critic
scores them as plausible and accepts them, at the price of a second call every turn. The pre-check (the game's own
answer on a copy) and the loop break's penalties and bans already catch what cannot work and what goes round. So
the model is asked only when a second opinion matters (`risk`):
- the objectives are due for review (the critic reviews them in its verdict);
- the loop break has something to say this turn (harness notes, bans): the agent may be going round;
- a proposal was already turned down this turn;
- the command repeats, in this room, one that was run here before (moves aside: walking is the map's to judge),
  or that the game refused or ignored here;
- the offline critic doubts it (a score below the rejection threshold).
Otherwise the offline critic's score stands, marked as such in the record (`source = "offline"`).
"""

from __future__ import annotations

from collections import Counter

from agents.base import Critic
from agents.llm_critic import LLMCritic
from agents.offline_critic import OfflineCritic
from session.commands import canonical_command, direction_of
from session.context import AgentContext, ObjectiveReview
from session.records import Judgement


def risk(command: str, context: AgentContext, offline: Judgement, threshold: float) -> str | None:
    """Why the LLM critic should judge `command` (None: the offline score can stand)."""
    key = canonical_command(command)
    if context.review_objectives:
        return "the objectives are due for review"
    if context.loop_status.strip() or context.banned:
        return "the loop break has notes this turn"
    if context.rejected:
        return "a proposal was turned down this turn"
    if key in context.failed_here or key in context.refused_here:
        return "the game refused or ignored it here before"
    if direction_of(command) is None and key in context.tried_here:
        return "it was done here before"
    if offline.score < threshold:
        return "the offline critic doubts it"
    return None


class WhenRiskyCritic(Critic):
    kind = "when_risky"
    prompted = True
    reviews_objectives = True

    def __init__(self, llm: LLMCritic, threshold: float):
        self.llm = llm
        self.offline = OfflineCritic()
        self.threshold = threshold
        self.asked: Counter = Counter()
        """Verdicts by who gave them: `llm` (and why, as `llm: <reason>`) or `offline`."""

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        offline = self.offline.evaluate(command, context)
        why = risk(command, context, offline, self.threshold)
        if why is None:
            self.asked["offline"] += 1
            return Judgement(offline.score, f"[no risk seen: offline score] {offline.reason}", "offline")
        self.asked["llm"] += 1
        self.asked[f"llm: {why}"] += 1
        return self.llm.evaluate(command, context)

    def drain_review(self) -> ObjectiveReview | None:
        return self.llm.drain_review()

    def synthesize(self, facts: list[str]) -> list[tuple[str, int]] | None:
        return self.llm.synthesize(facts)

    def unreadable_verdicts(self) -> Counter:
        return self.llm.unreadable_verdicts()
