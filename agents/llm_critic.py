"""The LLM critic: asks a model to score a proposed command (and, when asked, to review the objectives in the same
call); asks once more when the score cannot be read, then falls back to the offline critic."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from agents.base import Critic
from agents.llm_client import LLMClient, json_schema, strict_object
from agents.llm_settings import LLMConfig
from agents.offline_critic import OfflineCritic
from agents.prompts import (
    CRITIC_RETRY,
    DEFAULT_REJECTION_THRESHOLD,
    REVIEW_NEW_OBJECTIVES,
    SYNTHESIS_NOTES,
    critic_system_prompt,
    render_critic_prompt,
    render_synthesis,
    synthesis_system_prompt,
)
from agents.reply import answer_text, json_object
from session.context import AgentContext, ObjectiveReview
from session.records import Judgement
from session.safe_text import printable

MAX_REASON_CHARS = 200
MAX_OBJECTIVE_CHARS = 160
MAX_EVIDENCE_CHARS = 300
MAX_CLAIMS = 5
_VALUE = r"\d{1,6}(?:\.\d{1,6})?(?:\s*%|\s*/\s*\d{1,3}(?:\.\d{1,3})?)?"
"""A score as written: `0.8`, `85%`, `7/10` (digits bounded, so no number is too long to convert)."""
# `score: 0.8` outside JSON (markdown emphasis around it is fine); the lookahead refuses `score: 10` read as 1 and
# `score: 0.5x` read as 0.5
_SCORE = re.compile(rf"\bscore[*_\"']{{0,3}}\s*[:=]\s*[*_`]{{0,2}}({_VALUE})(?!\.?\w)", re.IGNORECASE)
_SCORE_TEXT = re.compile(rf"\s*({_VALUE})\s*")

MAX_NOTE_CHARS = 200
"""A strategic note's length at the most."""


CRITIC_VERDICT_SCHEMA = json_schema(
    "critic_verdict",
    {
        "score": {"type": "number"},
        "reason": {"type": "string"},
        "completed": {
            "type": "array",
            "items": strict_object({"objective": {"type": "string"}, "evidence": {"type": "string"}}),
        },
        "new_objectives": {"type": "array", "items": {"type": "string"}},
    },
)
"""The verdict, with the objective review's two lists (empty when the prompt asks for no review: a strict schema
requires every field)."""
SYNTHESIS_SCHEMA = json_schema(
    "episode_notes",
    {"notes": {"type": "array", "items": strict_object({"note": {"type": "string"}, "turn": {"type": "integer"}})}},
)


@dataclass(frozen=True)
class CriticReading:
    """A critic reply read: the judgement, or what was wrong with it (said to the model on the one retry)."""

    judgement: Judgement | None
    problem: str = ""


def parse_judgement(reply: str | None) -> Judgement | None:
    """`{"score": 0.8, "reason": "..."}` (or a `score: 0.8` line) -> Judgement; None when unreadable."""
    return read_verdict(reply).judgement


def read_verdict(reply: str | None) -> CriticReading:
    """The critic's verdict, read from what it says outside its reasoning (a `<think>` holding `score: 0.1` before a
    final `Score: 0.9` reads 0.9).

    The score must be a real number in [0, 1]: a JSON number, or text that says its own scale (`"0.8"`, `"85%"`,
    `"7/10"`: a percentage or a fraction cannot be misread). A bare 85 or 7 could be a percentage or a mark out of
    ten, so it is a problem to ask about, not a guess. JSON `true`/`false` are refused although Python counts them
    as 1 and 0: a critic that answers a yes/no has not scored the move. A JSON object that names a score decides
    alone; otherwise the last `score:` line, or an answer that is only a score."""
    answer = answer_text(reply)
    data = json_object(answer)
    key = next((k for k in data if isinstance(k, str) and k.strip().lower() == "score"), None) if data else None
    if key is not None:
        score, problem = _unit_score(data[key])
        judgement = Judgement(score, _reason(data.get("reason")), source="llm") if score is not None else None
        return CriticReading(judgement, problem)
    lines = list(_SCORE.finditer(answer))
    written = lines[-1].group(1) if lines else None
    if written is None and _SCORE_TEXT.fullmatch(answer):
        written = answer.strip()
    if written is None:
        return CriticReading(None, 'no score found; give one as {"score": 0.7, ...}')
    score, problem = _score_text(written)
    judgement = Judgement(score, "score given without a reason", source="llm") if score is not None else None
    return CriticReading(judgement, problem)


def _unit_score(value: object) -> tuple[float | None, str]:
    """(`value` as a score in [0, 1], or None and why not). Only a number, or text that reads as one, is a score.

    The range is checked before converting, so a 4,000-digit integer is refused rather than overflowing."""
    if isinstance(value, bool):
        return None, "a yes or no is no score"
    if isinstance(value, str):
        match = _SCORE_TEXT.fullmatch(value)
        return _score_text(match.group(1)) if match else (None, "the score is not a number")
    if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        return None, "the score is not a number"
    if not 0 <= value <= 1:
        shown = f"{value:g}" if isinstance(value, float) or abs(value) < 10**9 else "a huge number"
        return None, f"the score {shown} is outside 0.0-1.0"
    return float(value), ""


def _score_text(written: str) -> tuple[float | None, str]:
    """A score written as `0.8`, `85%` or `7/10`, in [0, 1]; else None and why not."""
    compact = "".join(written.split())
    if compact.endswith("%"):
        value = float(compact[:-1]) / 100
    elif "/" in compact:
        top, bottom = (float(part) for part in compact.split("/"))
        if bottom == 0:
            return None, f"the score {compact} divides by zero"
        value = top / bottom
    else:
        value = float(compact)
    if not 0 <= value <= 1:
        return None, f"the score {compact} is outside 0.0-1.0"
    return value, ""


def _reason(value: object) -> str:
    """The first line of the critic's reason, printable and at most MAX_REASON_CHARS long.

    Only a string is a reason: rendering an arbitrary JSON value could be huge or nested past the recursion limit."""
    lines = printable(value).strip().splitlines() if isinstance(value, str) else []
    first = lines[0].strip() if lines else ""
    return first[:MAX_REASON_CHARS] or "no reason given"


def parse_review(reply: str | None) -> ObjectiveReview:
    """The objective review in a verdict's JSON (`completed`, `new_objectives`), read outside the reasoning; empty
    parts when absent or malformed. Only strings count: any other JSON value is skipped, never rendered."""
    data = json_object(answer_text(reply)) or {}
    claims = data.get("completed") if isinstance(data.get("completed"), list) else []
    completed = []
    for claim in claims[:MAX_CLAIMS]:
        if (
            isinstance(claim, dict)
            and isinstance(claim.get("objective"), str)
            and isinstance(claim.get("evidence"), str)
        ):
            completed.append(
                (_line(claim["objective"], MAX_OBJECTIVE_CHARS), _line(claim["evidence"], MAX_EVIDENCE_CHARS))
            )
    new = data.get("new_objectives") if isinstance(data.get("new_objectives"), list) else []
    proposed = [_line(item, MAX_OBJECTIVE_CHARS) for item in new[:REVIEW_NEW_OBJECTIVES] if isinstance(item, str)]
    return ObjectiveReview(tuple(completed), tuple(p for p in proposed if len(p) >= 3))


def _line(text: str, limit: int) -> str:
    return " ".join(printable(text).split())[:limit]


class LLMCritic(Critic):
    kind = "llm"
    prompted = True
    reviews_objectives = True

    def __init__(
        self,
        client: LLMClient,
        config: LLMConfig,
        game: str = "",
        threshold: float = DEFAULT_REJECTION_THRESHOLD,
    ):
        self.client = client
        self.config = config
        self.game = game
        self.system_prompt = critic_system_prompt(game, threshold)
        self.fallback = OfflineCritic()
        self.review: ObjectiveReview | None = None
        """The objective review of the last call that asked for one, until `drain_review` hands it over."""
        self.unreadable: Counter = Counter()
        """Verdicts it could not read this episode: `retried` (asked once more, saying what was wrong) and
        `fallback` (still unreadable: the offline critic scored)."""

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        messages = [
            {"role": "system", "content": self.system_prompt},
            {"role": "user", "content": render_critic_prompt(context, command)},
        ]
        task = "objectives" if context.review_objectives else "critic"
        reply = self._ask(messages, task=task)
        if context.review_objectives:
            self.review = parse_review(reply)
        verdict = read_verdict(reply)
        if verdict.judgement is None:
            self.unreadable["retried"] += 1
            said = {"role": "assistant", "content": reply}
            reply = self._ask(
                [*messages, said, {"role": "user", "content": CRITIC_RETRY.format(problem=verdict.problem)}], task=task
            )
            verdict = read_verdict(reply)
            review = parse_review(reply) if context.review_objectives else None
            if review is not None and (review.completed or review.proposed):
                self.review = review
        if verdict.judgement is None:
            self.unreadable["fallback"] += 1
            offline = self.fallback.evaluate(command, context)
            return Judgement(offline.score, f"[critic reply unreadable, offline score] {offline.reason}", "offline")
        return verdict.judgement

    def _ask(self, messages: list[dict], schema: dict | None = CRITIC_VERDICT_SCHEMA, task: str = "critic") -> str:
        """The critic's call; `task` (critic, objectives: a verdict that reviews them too, notes) names its span."""
        config = self.config
        wanted = schema if config.response_format == "json_schema" else None
        return self.client.chat_structured(
            "critic",
            config.critic_model,
            messages,
            config.critic_temperature,
            config.max_tokens_for("critic"),
            wanted,
            task=task,
        )

    def synthesize(self, facts: list[str]) -> list[tuple[str, int]]:
        """One call at an episode's end: (note, turn) pairs for the next episodes, each to be checked against the
        records by the caller. LLMCallFailed when the call fails."""
        messages = [
            {"role": "system", "content": synthesis_system_prompt(self.game)},
            {"role": "user", "content": render_synthesis(facts)},
        ]
        data = json_object(answer_text(self._ask(messages, SYNTHESIS_SCHEMA, task="notes"))) or {}
        notes = data.get("notes") if isinstance(data.get("notes"), list) else []
        kept = []
        for item in notes[:SYNTHESIS_NOTES]:
            if isinstance(item, dict) and isinstance(item.get("note"), str) and isinstance(item.get("turn"), int):
                kept.append((printable(item["note"]).strip()[:MAX_NOTE_CHARS], item["turn"]))
        return [(note, turn) for note, turn in kept if note]

    def drain_review(self) -> ObjectiveReview | None:
        review, self.review = self.review, None
        return review

    def unreadable_verdicts(self) -> Counter:
        return self.unreadable
