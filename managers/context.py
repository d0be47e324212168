"""Builds what the agent and critic see each turn, and renders it as prompts for the LLM roles."""

from __future__ import annotations

from collections import deque

from agents.base import AgentContext
from managers.action_memory import ActionMemory
from managers.map_graph import MapGraph
from session.commands import PRIMARY_DIRECTIONS
from session.records import GameView, TurnRecord

AGENT_SYSTEM_PROMPT = (
    "You are playing the text adventure Zork I. Each turn you see the game state and recent history. "
    "Explore, collect treasures, solve puzzles, avoid dying. Reply with exactly ONE game command on one line "
    "(for example: north, open mailbox, take lamp) and nothing else: no explanation, no quotes, no heading."
)
CRITIC_SYSTEM_PROMPT = (
    "You judge commands proposed by an agent playing Zork I. Score how useful the proposed command is now, "
    "from 0.0 (useless, impossible or harmful) to 1.0 (clearly the right move): 0.5 is the acceptance line. "
    'Reply with JSON only: {"score": <0.0-1.0>, "reason": "<one line>"}.'
)


class ContextBuilder:
    def __init__(self, history_turns: int):
        self.recent: deque[tuple[str, str]] = deque(maxlen=history_turns)
        self.room_texts: dict[int | None, str] = {}
        """Room id -> the response on the last arrival there (or `look`): one entry per room."""

    def observe(self, record: TurnRecord) -> None:
        self.recent.append((record.command, record.response.strip()))
        if record.moved or record.command.strip().lower() in ("look", "l"):
            self.room_texts[record.room_id_after] = record.response.strip()

    def for_agent(
        self,
        turn: int,
        view: GameView,
        game_map: MapGraph,
        memory: ActionMemory,
        objectives: tuple[str, ...] = (),
        loop_status: str = "",
        banned: tuple[str, ...] = (),
    ) -> AgentContext:
        room = game_map.rooms.get(view.room_id) if view.room_id is not None else None
        return AgentContext(
            turn=turn,
            view=view,
            recent=tuple(self.recent),
            known_exits={d: game_map.name_of(r) for d, r in (room.exits.items() if room else ())},
            untried_exits=tuple(game_map.untried_directions(view.room_id)),
            failed_exits=tuple(sorted(room.failed_exits)) if room else (),
            room_text=self.room_texts.get(view.room_id, view.text),
            tried_here=memory.tried(view.room_id),
            refused_here=memory.refused(view.room_id),
            path_to_frontier=tuple(game_map.path_to_frontier(view.room_id)),
            path_to_primary_frontier=tuple(game_map.path_to_frontier(view.room_id, PRIMARY_DIRECTIONS)),
            objectives=objectives,
            loop_status=loop_status,
            banned=banned,
        )


def _state_block(context: AgentContext) -> list[str]:
    view = context.view
    lines = [
        f"Turn {context.turn}. Location: {view.room_name}. Score: {view.score}. Moves: {view.moves}.",
        f"Inventory: {', '.join(o.name for o in view.inventory) or 'nothing'}.",
        f"Objects here: {', '.join(o.name for o in view.room_objects) or 'none seen'}.",
    ]
    if context.known_exits:
        lines.append("Known exits: " + ", ".join(f"{d} -> {name}" for d, name in sorted(context.known_exits.items())))
    if context.failed_exits:
        lines.append("Exits that failed here: " + ", ".join(context.failed_exits))
    if context.recent:
        lines.append("Recent turns (oldest first):")
        for command, response in context.recent:
            lines.append(f"> {command}\n{response[:400]}")
    lines.append(f"Current game text:\n{view.text.strip()[:1200]}")
    if context.objectives:
        lines.append("Objectives: " + "; ".join(context.objectives[:5]))
    if context.loop_status:
        lines.append(context.loop_status)
    if context.banned:
        lines.append("Forbidden this turn: " + ", ".join(context.banned))
    return lines


def render_agent_prompt(context: AgentContext) -> str:
    lines = _state_block(context)
    if context.feedback:
        lines.append("Rejected proposals this turn (propose something different):")
        lines.extend(f"- {item}" for item in context.feedback)
    lines.append("Your command:")
    return "\n".join(lines)


def render_critic_prompt(context: AgentContext, command: str) -> str:
    shown = command if command.strip() else "(an empty line, as for a 'press a key' pause)"
    return "\n".join(_state_block(context) + [f"Proposed command: {shown}", "Your JSON verdict:"])
