"""How a turn's command is chosen: the agent proposes, the critic scores, the loop break adjusts, and below the
threshold the agent proposes again with the reason; the harness never plays a command the agent did not commit to."""

from __future__ import annotations

from dataclasses import dataclass, replace

from agents.base import Agent, Critic, InvalidReply, LLMCallFailed, Proposal
from agents.offline_critic import OfflineCritic
from agents.precheck import ObjectPrecheck
from managers.loop_break import LoopBreak
from managers.loop_break.penalties import why_rejected
from session.commands import read_command
from session.context import AgentContext, ObjectiveReview
from session.events import EventType, new_event
from session.records import BLOCKING_SOURCES, NOT_RUN, UNPARSEABLE_FALLBACK, Candidate, Judgement

NOT_RUN_REASONS = {
    UNPARSEABLE_FALLBACK: "no game command could be read in the reply; nothing was typed in its place",
    "every_candidate_blocked": "every command proposed was refused; nothing was typed in their place",
}
"""Why a turn ran nothing, by fallback kind: the harness never plays a command the model did not commit to."""


@dataclass(frozen=True)
class Choice:
    """A turn's candidates in proposal order and what comes of them."""

    candidates: tuple[Candidate, ...]
    chosen: Candidate | None
    """The accepted candidate, else the best-scoring one (None: the agent proposed nothing usable)."""
    fallback: str | None
    """Why nothing the agent proposed runs (TurnRecord.fallback), or None."""
    parse_failures: tuple[dict, ...]
    """The turn's replies that failed validation."""
    review: ObjectiveReview | None
    """The critic's objective review this turn (llm objectives), read after the command ran."""

    events: tuple[dict, ...] = ()
    """What choosing raised: refusals, blocks, penalties, rejections noted."""

    @property
    def command(self) -> str:
        """What runs: the chosen candidate's command, or "" when a fallback runs nothing."""
        return self.chosen.command if self.chosen is not None and not self.fallback else ""

    @property
    def refusal(self) -> str | None:
        """Why nothing runs this turn (None: the command runs)."""
        return NOT_RUN_REASONS[self.fallback.split(":")[0]] if self.fallback else read_command(self.command).refusal


class Chooser:
    """The agent -> critic -> loop-break adjustment -> accept or regenerate part of a turn."""

    def __init__(self, agent: Agent, critic: Critic, loop_break: LoopBreak, threshold: float, max_rejections: int):
        self.agent = agent
        self.critic = critic
        self.loop_break = loop_break
        self.threshold = threshold
        self.max_rejections = max_rejections
        self.precheck: ObjectPrecheck | None = None
        """Built from the episode's first state (the emulator still holds the last episode's end until reset)."""

    def choose(self, context: AgentContext, turn: int, forced: bool) -> Choice:
        attempts = 1 if forced else self.max_rejections + 1
        events: list[dict] = []
        candidates: list[Candidate] = []
        judged: dict[str, Judgement] = {}  # this turn's rejected proposals by canonical command
        fallback = None
        parse_failures: list[dict] = []
        review = None
        for _ in range(attempts):
            try:
                proposal = self._propose(context)
            except InvalidReply as exc:
                parse_failures.extend(exc.parse_failures)
                fallback = f"{UNPARSEABLE_FALLBACK}:{exc.kind}"
                break
            parse_failures.extend(proposal.parse_failures)
            command, thought = proposal.command, proposal.thought
            read = read_command(command)
            refusal = read.refusal
            again = read.canonical in judged
            if refusal is not None:  # never judged, never run, never a loop: the agent is told why
                judgement = Judgement(0.0, refusal, source=NOT_RUN)
                events.append(
                    new_event(
                        EventType.COMMAND_REFUSED,
                        f"Refused {command[:40]!r}: {refusal}",
                        level="WARNING",
                        turn=turn,
                        command=command[:200],
                        reason=refusal,
                    )
                )
            else:
                judgement, raised = self._judge(command, replace(context, proposal_thought=thought), turn, judged)
                events += raised
                drained = self.critic.drain_review() if context.review_objectives else None
                if drained is not None:
                    review = drained
                    context = replace(context, review_objectives=False)  # one review a turn
            accepted = judgement.score >= self.threshold and judgement.source not in BLOCKING_SOURCES
            candidates.append(Candidate(command, judgement, accepted, thought, proposal.note))
            if accepted or forced:
                break
            if refusal is None:
                events += self.loop_break.note_rejection(turn, context.view.room_id, command)
                judged[read.canonical] = judgement
            if again:  # the agent insists on a command already rejected this turn: more asks would only repeat it
                break
            context = context.with_feedback(command, why_rejected(judgement, self.threshold))
        if not forced and candidates and all(c.judgement.source in BLOCKING_SOURCES for c in candidates):
            fallback = "every_candidate_blocked"
        chosen = _pick(candidates, forced)
        return Choice(tuple(candidates), chosen, fallback, tuple(parse_failures), review, tuple(events))

    def _judge(
        self, command: str, context, turn: int, judged: dict[str, Judgement]
    ) -> tuple[Judgement, tuple[dict, ...]]:
        """Precheck, loop-break block, critic, loop-break adjustments: the critic is called only when its verdict
        can change the outcome (never for a command off the table, nor again for one it judged this turn).

        The pre-check tells the agent the game's own answer once a turn: an agent that proposes the command again,
        having read it, is judged as any other command (the game would answer the same, and nothing else runs in
        its place). Returns the judgement and the events the loop break raised on the way."""
        view = context.view
        earlier = judged.get(read_command(command).canonical)
        insists = earlier is not None and earlier.source == "precheck"
        judgement = None if insists else self.precheck.check(command)
        events: tuple[dict, ...] = ()
        if judgement is None and (blocked := self.loop_break.blocked(command, view, turn)) is not None:
            judgement, events = blocked.judgement, blocked.events
        if judgement is None and earlier is not None and not insists:
            return earlier, events
        adjusted = self.loop_break.adjust(command, judgement or self._evaluate(command, context), view, turn)
        return adjusted.judgement, events + adjusted.events

    def _propose(self, context) -> Proposal:
        while True:
            try:
                return self.agent.propose(context)
            except LLMCallFailed:
                continue  # the client counts failures in a row and raises LLMUnavailable at the limit

    def _evaluate(self, command: str, context) -> Judgement:
        try:
            return self.critic.evaluate(command, context)
        except LLMCallFailed as exc:
            offline = OfflineCritic().evaluate(command, context)
            return Judgement(offline.score, f"[critic call failed: {exc.category}; offline score] {offline.reason}")


def _pick(candidates: list[Candidate], forced: bool) -> Candidate | None:
    """The accepted candidate, else the best-scoring one (the earliest among equals), never a precheck fail."""
    if not candidates:
        return None
    if forced or candidates[-1].accepted:
        return candidates[-1]
    eligible = [c for c in candidates if c.judgement.source not in BLOCKING_SOURCES] or candidates
    return max(eligible, key=lambda c: c.judgement.score)
