"""The offline critic: honest heuristics over the map and this episode's history. Not an LLM."""

from __future__ import annotations

from agents.base import Critic
from session.commands import (
    ATTACK_VERBS,
    canonical_command,
    direction_of,
    is_observation,
    normalize_command,
    read_command,
)
from session.context import AgentContext
from session.records import Judgement


class OfflineCritic(Critic):
    kind = "offline"

    def evaluate(self, command: str, context: AgentContext) -> Judgement:
        text = normalize_command(command)
        key = canonical_command(text)
        if context.knowledge.route_next and key == canonical_command(context.knowledge.route_next):
            return Judgement(0.9, "the next step of the way an earlier episode reached its best score")
        if key in context.knowledge.known_here and key not in context.refused_here:
            return Judgement(0.9, "it scored here in an earlier episode")
        if key in context.knowledge.avoid_here:
            return Judgement(
                0.1, "in an earlier episode this killed the player, failed, or changed nothing in a loop here"
            )
        direction = direction_of(text)
        if direction is not None:
            if direction in context.failed_exits and key in context.failed_here:
                return Judgement(0.15, f"{direction} did not lead anywhere from here before")
            if direction in context.known_exits:
                return Judgement(0.7, f"known exit to {context.known_exits[direction]}")
            return Judgement(0.75, f"untried exit {direction}")
        if not text:
            return Judgement(0.55, "an empty line: answers a 'press a key' pause")
        # the harness refuses these before any critic; a critic asked anyway agrees
        refusal = read_command(text).refusal
        if refusal is not None:
            return Judgement(0.0, refusal)
        if text.split()[0] in ATTACK_VERBS:
            return Judgement(0.7, "fights are random: another blow can land where the last missed")
        if key in context.failed_here:
            return Judgement(0.2, "the game refused this here the last time, and nothing here has changed since")
        if is_observation(text) and len(text.split()) == 1:
            return Judgement(0.55, "information only")
        visible = {obj.noun for obj in context.view.room_objects + context.view.inventory}
        if visible.intersection(read_command(text).words):
            return Judgement(0.75, "acts on an object that is here")
        return Judgement(0.65, "plausible interaction")
