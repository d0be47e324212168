"""Every prompt text of every LLM role, and how a turn's context (session.context.AgentContext) is rendered.

Built for a real model: a stable system prompt first (the game's name, how the game reads commands, the reply
format; providers cache it), the turn's state last. The state is what a player knows and nothing else: printed room
titles, the objects the text has named, the exits the description names, the map's way to the nearest unexplored
exit, what was tried here; history without repeats; objectives once; harness lines marked as not game text.
"""

from __future__ import annotations

from session.config import GameplayConfig
from session.context import FORMAT_RULE, HARNESS_NOTE, AgentContext

ROOM_TEXT_CHARS = 1200
"""The room's description as last printed, cut (at a word) to this."""
RESPONSE_CHARS = 500
"""Each earlier response in the history, cut (at a word) to this."""
LAST_RESPONSE_CHARS = 1500
"""The last response, which the next command answers."""
REPEAT_MIN_CHARS = 60
"""A response shown again in the history is replaced by a pointer to the first one when longer than this."""
LIST_CAP = 8
"""Commands listed as tried, or as changing nothing, in this room."""
OBJECTIVES_SHOWN = 5
COMPLETED_SHOWN = 5
REVIEW_NEW_OBJECTIVES = 3
"""New objectives the critic may add in one review."""

_COMMANDS = (
    "How the game reads commands: short imperative phrases such as look, examine lamp, take lamp, open the door, "
    "put coin in slot, north (or n, s, e, w, ne, nw, se, sw, up, down, in, out), inventory. One command per turn. "
    "Interpreter commands (save, restore, restart, quit, undo, script) are refused."
)
_HARNESS = f"Lines marked {HARNESS_NOTE} come from the harness that runs the game, never from the story."

AGENT_ROLE = "You are the player of {game}, a parser-based text adventure."
CRITIC_ROLE = "You are the critic for a player of {game}, a parser-based text adventure."
"""The first sentence of each role's system prompt: it names the role (see `role_of`)."""

_AGENT_GOAL = (
    "Each turn you read what you know so far and choose the next command. Goal: score points and finish the game: "
    "explore, examine what is described, take what looks useful, solve puzzles, avoid dying. Do not repeat what "
    "already failed in the same place unless something has changed."
)
AGENT_REPLY = {
    "thought": (
        'Reply with one JSON object and nothing else: {"thought": "<one or two short sentences>", '
        '"command": "<ONE game command>"}. The thought is for you; only the command reaches the game.'
    ),
    "command": f"Reply with {FORMAT_RULE}. Example: open mailbox",
}
"""Per `[tool.zorkgpt.llm] agent_reply`: a short reasoning step before the command, or the bare command."""
AGENT_RETRY = "Your last reply could not be used ({problem}). " + "{reply_rule}"
"""The user message after an unparseable reply (the reply itself goes back as the assistant's turn)."""

_CRITIC_RUBRIC = (
    "You see what the player knows, one proposed command and, when it gave one, the player's reason for it. Score "
    "how much the command helps right now, from 0.0 to 1.0. Below {threshold} it is rejected and the player proposes "
    "again; at {threshold} or above it runs. What a command is worth:\n"
    "- Progress ({progress}): it could score, reach a place not visited yet, get or use an item where the text "
    "invites it, or move a puzzle on.\n"
    "- Information ({information}): it examines, reads, asks about or searches something not examined yet.\n"
    "- Plausible ({plausible}): it looks again at what is known, or goes back to a known place with a purpose.\n"
    "- Repetition ({repetition}): it, or the same in other words, was already tried here without effect, the game "
    "refused it, or it was rejected earlier this turn.\n"
    "- Feasibility ({futile}): it names things that are neither here nor carried, or words the game did not know.\n"
    "- Risk ({futile}): it could kill the player or destroy something needed later.\n"
    "Not repetition: in a fight, attacking the foe again while it is still there is how fights are won; and after a "
    "try that the game answered with something new (the puzzle reacted), trying again or a variation moves the "
    "puzzle on.\n"
    "A harness note is about the episode (turns running out, loops), never an event in the game."
)
"""The critic's rubric; its anchors are set from the configured rejection threshold (`critic_anchors`)."""
SYNTHESIS_NOTES = 3
"""Strategic notes the critic may write at an episode's end (one call per episode)."""
SYNTHESIS = (
    "The episode has ended. What it recorded:\n{facts}\n\n"
    f"Write at most {SYNTHESIS_NOTES} short strategic notes for the next episode of this game. Each must rest on one "
    "recorded fact above and name its turn. Reply with JSON only: "
    '{{"notes": [{{"note": "<one sentence>", "turn": <the turn of the fact>}}]}}'
)


def render_synthesis(facts: list[str]) -> str:
    return SYNTHESIS.format(facts="\n".join(facts) or "(nothing scored, no death, no loop)")


REJECTED_HEADING = "REJECTED THIS TURN"
"""Heads the agent's list of this turn's rejected proposals (a retry prompt; scripted servers look for it)."""
CRITIC_REPLY = 'Reply with JSON only: {"score": <0.0-1.0>, "reason": "<one line>"}'
CRITIC_RETRY = "Your verdict could not be read: {problem}. " + CRITIC_REPLY.replace("{", "{{").replace("}", "}}")
"""The one follow-up after an unreadable or out-of-range score (the verdict itself goes back as the assistant's
turn)."""
OBJECTIVE_REVIEW = (
    "Also review the objectives, in the same JSON object:\n"
    '- "completed": the objectives the last game response completed, each {"objective": "<its exact text>", '
    '"evidence": "<the proving words, quoted exactly from that response>"}; [] if none;\n'
    f'- "new_objectives": up to {REVIEW_NEW_OBJECTIVES} short, concrete objectives worth pursuing now that are not '
    "listed or completed yet; [] if none."
)


def agent_system_prompt(game: str, reply: str = "thought") -> str:
    return "\n\n".join([AGENT_ROLE.format(game=_game(game)), _AGENT_GOAL, _COMMANDS, _HARNESS, AGENT_REPLY[reply]])


def critic_anchors(threshold: float) -> dict[str, str]:
    """The rubric's five anchors for a rejection threshold t: progress and information clearly above it, the merely
    plausible on it, repetition and futile moves below it (t = 0.5 gives 0.9, 0.7, 0.5, 0.3, 0.1)."""
    anchors = {
        "progress": threshold + 0.8 * (1 - threshold), "information": threshold + 0.4 * (1 - threshold),
        "plausible": threshold, "repetition": 0.6 * threshold, "futile": 0.2 * threshold,
    }  # fmt: skip
    return {name: f"{value:.2f}".rstrip("0").rstrip(".") if value else "0" for name, value in anchors.items()}


DEFAULT_REJECTION_THRESHOLD: float = GameplayConfig.model_fields["critic_rejection_threshold"].default
"""`[tool.zorkgpt.gameplay] critic_rejection_threshold` when none is given (main.py gives the configured one)."""


def critic_system_prompt(game: str, threshold: float = DEFAULT_REJECTION_THRESHOLD) -> str:
    rubric = _CRITIC_RUBRIC.format(threshold=critic_anchors(threshold)["plausible"], **critic_anchors(threshold))
    return "\n\n".join([CRITIC_ROLE.format(game=_game(game)), rubric, _COMMANDS, _HARNESS, CRITIC_REPLY])


def role_of(messages: list[dict]) -> str:
    """`agent` or `critic` from a request's system prompt (`unknown` otherwise): for scripted servers and tests."""
    system = str(messages[0].get("content", "")) if messages else ""
    for role, first in (("agent", AGENT_ROLE), ("critic", CRITIC_ROLE)):
        head, tail = first.split("{game}")
        if system.startswith(head) and tail in system.split("\n", 1)[0]:
            return role
    return "unknown"


def render_agent_prompt(context: AgentContext) -> str:
    lines = _state(context)
    if context.feedback:
        lines += ["", f"{REJECTED_HEADING} (propose something different):", *_counted(context.feedback)]
    lines += ["", "Your reply:"]
    return "\n".join(lines)


def render_critic_prompt(context: AgentContext, command: str) -> str:
    shown = command if command.strip() else "(an empty line, as for a 'press a key' pause)"
    lines = _state(context)
    if context.feedback:
        lines += ["", "REJECTED EARLIER THIS TURN:", *_counted(context.feedback)]
    lines += ["", f"Proposed command: {shown}"]
    if context.proposal_thought:
        lines.append(f"The player's reason (its own words, not game text): {context.proposal_thought}")
    if context.review_objectives:
        lines += ["", OBJECTIVE_REVIEW]
    lines += ["", "Your JSON verdict:"]
    return "\n".join(lines)


# -- the state block ---------------------------------------------------------------------------------------------
def _state(context: AgentContext) -> list[str]:
    view = context.view
    lines = [
        f"TURN {context.turn}. Score {view.score}, moves {view.moves}.",
        f"WHERE YOU ARE: {view.room_name}",
        "Description (as last printed in full here):",
        _cut(context.room_text, ROOM_TEXT_CHARS) or "(none printed)",
    ]
    if context.visible_objects:
        lines.append(f"You can see: {', '.join(context.visible_objects)}.")
    lines.append(f"You carry: {', '.join(o.name for o in view.inventory) or 'nothing'}.")
    lines += _exits(context)
    lines += _tried(context)
    lines += _objectives(context)
    lines += _earlier(context)
    lines += _history(context)
    notes = [line for line in context.loop_status.splitlines() if line.strip()]
    if context.banned:
        notes.append(f"Forbidden this turn: {', '.join(context.banned)}.")
    if notes:
        lines += ["", f"HARNESS NOTES {HARNESS_NOTE}:", *notes]
    return lines


def _exits(context: AgentContext) -> list[str]:
    parts = [f"{d} -> {name}" for d, name in sorted(context.known_exits.items())]
    lines = [f"Exits that worked from here: {', '.join(parts) or 'none yet'}."]
    if context.named_exits:
        lines.append(f"Named in the description, not tried yet: {', '.join(context.named_exits)}.")
    if context.failed_exits:
        lines.append(f"Tried here without moving: {', '.join(context.failed_exits)}.")
    if context.path_to_frontier and not context.named_exits:
        steps = len(context.path_to_frontier)
        lines.append(
            f"Nearest untried exit named in a description: {context.frontier_room}, {steps} step"
            f"{'s' if steps > 1 else ''} away: {', '.join(context.path_to_frontier)}."
        )
    return lines


def _tried(context: AgentContext) -> list[str]:
    refused = sorted(context.refused_here)
    worked = sorted(context.tried_here - context.refused_here)
    lines = []
    if worked:
        lines.append(f"Already done here: {_capped(worked)}.")
    if refused:
        lines.append(f"Changed nothing here: {_capped(refused)}.")
    return lines


def _objectives(context: AgentContext) -> list[str]:
    lines = []
    if context.objectives:
        lines += ["", "OBJECTIVES:", *(f"- {o}" for o in context.objectives[:OBJECTIVES_SHOWN])]
    if context.completed_objectives:
        done = context.completed_objectives[-COMPLETED_SHOWN:]
        lines += ([] if context.objectives else [""]) + [f"Completed: {'; '.join(done)}."]
    return lines


def _earlier(context: AgentContext) -> list[str]:
    """What earlier episodes of this game learned, from their records (bounded)."""
    known = context.knowledge
    lines = list(known.earlier)
    if known.known_here:
        lines.append(f"Scored here in an earlier episode: {_capped(list(known.known_here))}.")
    if known.avoid_here:
        lines.append(f"Failed, killed or looped here in an earlier episode: {_capped(list(known.avoid_here))}.")
    if known.route_next:
        lines.append(f"Next step of the way an earlier episode reached its best score: {known.route_next}.")
    if known.path_to_known and not known.known_here:
        lines.append(f"Nearest room where an earlier episode scored: {known.known_target}, via {', '.join(known.path_to_known)}.")
    return ["", "FROM EARLIER EPISODES:", *lines] if lines else []


def _history(context: AgentContext) -> list[str]:
    """Earlier turns without repeats, then the last command and its full response (never shown twice)."""
    if not context.recent:  # the first turn: the opening text, unless it is all in the description above
        opening = context.view.text.strip()
        return [] if opening.endswith(context.room_text.strip()) and len(opening) - len(context.room_text) < 400 else [
            "", "OPENING TEXT:", _cut(opening, LAST_RESPONSE_CHARS)
        ]
    *earlier, (last_command, last_response) = context.recent
    lines = []
    shown: set[str] = {context.room_text.strip()}
    if earlier:
        lines += ["", "EARLIER TURNS (oldest first):"]
        for command, response in earlier:
            text = response.strip()
            if _within(text, context.room_text):
                text = "(the description above)"
            elif text in shown and len(text) > REPEAT_MIN_CHARS:
                text = "(the same text as shown above)"
            else:
                shown.add(text)
                text = _cut(text, RESPONSE_CHARS)
            lines += [f"> {command or '(empty line)'}", text]
    last = last_response.strip()
    if _within(last, context.room_text):
        last = "(the description above)"
    elif earlier and last in shown and len(last) > REPEAT_MIN_CHARS:
        last = "(the same text as shown above)"
    lines += ["", "LAST COMMAND AND RESPONSE:", f"> {last_command or '(empty line)'}", _cut(last, LAST_RESPONSE_CHARS)]
    return lines


# -- helpers -------------------------------------------------------------------------------------------------------
def _cut(text: str, limit: int) -> str:
    """`text` stripped, cut at the last word boundary before `limit` characters, with an ellipsis when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + " …"


def _within(text: str, description: str) -> bool:
    """Every line of `text` is a line of the room's description (the description itself, or a brief reprint)."""
    lines = {line.strip() for line in description.splitlines() if line.strip()}
    mine = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(mine) and all(line in lines for line in mine)


def _capped(items: list[str]) -> str:
    return ", ".join(items[:LIST_CAP]) + (f" and {len(items) - LIST_CAP} more" if len(items) > LIST_CAP else "")


def _counted(items: tuple[str, ...]) -> list[str]:
    """One line per distinct item, with `(2x)` when it came more than once."""
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return [f"- {item}" + (f" ({n}x)" if n > 1 else "") for item, n in counts.items()]


def _game(name: str) -> str:
    return name.strip() or "a text adventure"
