"""A steerable looper: a deterministic stand-in for a stubborn LLM, used to test whether penalties steer.

It replays a forced prefix (like `replay`), then every turn first proposes the loop's next command. When the critic
(after loop-break adjustments) rejects that, it falls back to its next candidates, as an LLM given the feedback
would: other exits the map knows, then untried exits, then the extra fallback commands.
"""

from __future__ import annotations

from agents.base import Agent, Proposal
from session.commands import canonical_command, direction_of
from session.context import AgentContext


class LooperAgent(Agent):
    kind = "looper"
    prompted = False

    def __init__(self, prefix: list[str], loop: list[str], fallbacks: tuple[str, ...] = ("look",)):
        if not loop:
            raise ValueError("a looper needs at least one loop command")
        self.prefix = list(prefix)
        self.loop = list(loop)
        self.fallbacks = fallbacks
        self.turns = 0
        self._turn_seen = -1

    @property
    def forced(self) -> bool:
        """Forced while replaying the prefix; steerable (not forced) in the loop."""
        return self.turns < len(self.prefix)

    def resume(self, turns: int) -> None:
        """`turns` turns have been played already."""
        self.turns += turns
        self._turn_seen = turns

    def propose(self, context: AgentContext) -> Proposal:
        return Proposal(self._command(context))

    def _command(self, context: AgentContext) -> str:
        if context.turn != self._turn_seen:  # first proposal of a new turn
            self._turn_seen = context.turn
            self.turns += 1
        index = self.turns - 1
        if index < len(self.prefix):
            return self.prefix[index]
        wanted = self.loop[(index - len(self.prefix)) % len(self.loop)]
        for command in self._candidates(wanted, context):
            if canonical_command(command) not in context.rejected:
                return command
        return wanted  # nothing left: the best-scoring candidate will run

    def _candidates(self, wanted: str, context: AgentContext):
        yield wanted
        rejected_directions = {direction_of(c) for c in context.rejected} | {direction_of(wanted)}
        yield from (d for d in sorted(context.known_exits) if d not in rejected_directions)
        yield from (d for d in context.untried_exits if d not in rejected_directions)
        yield from self.fallbacks
