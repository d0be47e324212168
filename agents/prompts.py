"""Every prompt text of every LLM role, and how a turn's context (session.context.AgentContext) is rendered.

Built for a real model: a stable system prompt first (the game's name, how the game reads commands, the reply
format; providers cache it), the turn's state last. The state is what a player knows, in the game's own words
(`AgentContext.readings`): the room's title as printed (or dark), its description as `look` prints it now (else
as last printed here, with its age), the game's answer to `inventory`, the things in sight under the names the
game printed, the exits that work now and those the text mentions (marked unverified), what was done here with the
game's answers, a bounded memory (the agent's last thoughts, things seen elsewhere, rooms with untried mentions),
the objectives once, the history with the last response verbatim, and the harness's notes, marked as not game
text. The labels are constants: benchmarks.context_truth checks every claim under them against the game.
"""

from __future__ import annotations

import re

from session.commands import canonical_command
from session.config import GameplayConfig
from session.context import FORMAT_RULE, HARNESS_NOTE, AgentContext, Readings

OPENING = "THE GAME'S OPENING (printed before your first command; the same every turn):"
ROOM_TEXT_CHARS = 1200
"""The room's description as last printed, cut (at a word) to this."""
RESPONSE_CHARS = 500
"""Each earlier response in the history, cut (at a word) to this."""
LAST_RESPONSE_CHARS = 3000
"""The last response, which the next command answers: verbatim (a cut only guards against a runaway text)."""
INVENTORY_CHARS = 800
"""The game's answer to `inventory`, cut (at a word) to this."""
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
        '"command": "<ONE game command>", "note": ""}. The thought is for you; only the command reaches the game. '
        '"note" keeps a fact for the rest of the game (a code, a clue, a plan), shown to you every turn: "" when '
        "there is nothing new to keep."
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


SYNTHESIS_ROLE = (
    "You review a finished episode of {game} for the player of its next episode: a few strategic "
    "notes, each resting on one recorded fact and naming its turn, as the JSON the request asks for."
)
"""The episode-end call's system prompt (the critic's call, once an episode): it asks for notes, not a score."""


def synthesis_system_prompt(game: str) -> str:
    return SYNTHESIS_ROLE.format(game=_game(game))


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
        "progress": threshold + 0.8 * (1 - threshold),
        "information": threshold + 0.4 * (1 - threshold),
        "plausible": threshold,
        "repetition": 0.6 * threshold,
        "futile": 0.2 * threshold,
    }
    return {name: f"{value:.2f}".rstrip("0").rstrip(".") if value else "0" for name, value in anchors.items()}


DEFAULT_REJECTION_THRESHOLD: float = GameplayConfig.model_fields["critic_rejection_threshold"].default
"""`[tool.zorkgpt.gameplay] critic_rejection_threshold` when none is given (main.py gives the configured one)."""


def critic_system_prompt(game: str, threshold: float = DEFAULT_REJECTION_THRESHOLD) -> str:
    rubric = _CRITIC_RUBRIC.format(threshold=critic_anchors(threshold)["plausible"], **critic_anchors(threshold))
    return "\n\n".join([CRITIC_ROLE.format(game=_game(game)), rubric, _COMMANDS, _HARNESS, CRITIC_REPLY])


def role_of(messages: list[dict]) -> str:
    """`agent` or `critic` from a request's system prompt (`unknown` otherwise): for scripted servers and tests."""
    system = str(messages[0].get("content", "")) if messages else ""
    for role, first in (("agent", AGENT_ROLE), ("critic", CRITIC_ROLE), ("critic", SYNTHESIS_ROLE)):
        head, tail = first.split("{game}")
        if system.startswith(head) and tail in system.split("\n", 1)[0]:
            return role
    return "unknown"


def render_agent_prompt(context: AgentContext) -> str:
    lines = _opening(context) + _state(context)
    if context.feedback:
        lines += ["", f"{REJECTED_HEADING} (propose something different):", *_counted(context.feedback)]
    lines += ["", "Your reply:"]
    return "\n".join(lines)


def render_critic_prompt(context: AgentContext, command: str) -> str:
    shown = command if command.strip() else "(an empty line, as for a 'press a key' pause)"
    lines = _state(context, memory=False)  # the agent's memory (the opening among it) is for planning, not judging
    if context.feedback:
        lines += ["", "REJECTED EARLIER THIS TURN:", *_counted(context.feedback)]
    lines += ["", f"Proposed command: {shown}"]
    if context.proposal_thought:
        lines.append(f"The player's reason (its own words, not game text): {context.proposal_thought}")
    if context.review_objectives:
        lines += ["", OBJECTIVE_REVIEW]
    lines += ["", "Your JSON verdict:"]
    return "\n".join(lines)


def _opening(context: AgentContext) -> list[str]:
    """What changes seldom, first: the game's opening text (the same every turn), then the points scored and the
    texts read whole (they grow now and then). The prompt's start stays the same from one turn to the next, for
    providers' prompt caches (the system prompt, then this)."""
    read = context.readings
    if read is None:
        return []
    lines = [OPENING, read.opening, ""] if read.opening else []
    if read.scored:
        lines.append("POINTS SCORED SO FAR (turn, room, command):")
        for turn, room, command, points in read.scored:
            lines.append(f"- turn {turn}, {room or 'an untitled room'}: {command} (+{points})")
        lines.append("")
    for turn, command, text in read.texts_read:
        lines += [f"WHAT YOU READ (turn {turn}, {command}):", text, ""]
    if read.notes:
        lines += [NOTES, *(f"- turn {turn}: {note}" for turn, note in read.notes), ""]
    return lines


# -- the state block ---------------------------------------------------------------------------------------------
WHERE = "WHERE YOU ARE:"
DARK = "(too dark to see)"
NO_TITLE = "(the game printed no room title)"
DESCRIPTION = "DESCRIPTION"
"""`DESCRIPTION (printed N turns ago):`, then the text the game printed."""
CARRY = 'YOU CARRY (the game\'s answer to "inventory"):'
SEEN = "SEEN HERE:"
EXITS_WORKED = "EXITS THAT WORKED FROM HERE:"
EXITS_MENTIONED = "EXITS THE TEXT MENTIONS, NOT VERIFIED:"
EXIT_SEPARATOR = "; "
"""Between exits: a title may hold a comma (`Dam Base, in the magic boat`)."""
LAST = "LAST COMMAND AND RESPONSE:"
"""The labels a prompt's claims stand under (benchmarks.context_truth checks each against the game)."""
MAP = "MAP OF THE ROOMS YOU WALKED BETWEEN"
NOTES = "YOUR NOTES (what you asked to keep, in your words, not the game's):"
NOW = "as `look` prints it now"
"""When the description shown is the room as a `look` on a copy prints it this turn."""
NOTHING_RAN = "(nothing ran: none of your replies could be used, and nothing was typed in their place)"


def _state(context: AgentContext, memory: bool = True) -> list[str]:
    view = context.view
    read = context.readings or Readings()
    of_max = f" of {context.max_score}" if context.max_score else ""
    score = "" if "score" in view.unreadable else f" Score {view.score}{of_max}."
    budget = f" of {context.max_turns}" if context.max_turns else ""
    lines = [f"TURN {context.turn}{budget}.{score} Moves {view.moves}."]
    lines.append(f"{WHERE} {DARK if read.dark else read.title or NO_TITLE}")
    lines += _description(context, read)
    if read.inventory:  # one block: the game's blank lines inside it would end it for a reader
        lines += [CARRY, _cut(re.sub(r"\n\s*\n", "\n", read.inventory), INVENTORY_CHARS)]
    if read.seen:
        lines.append(f"{SEEN} {', '.join(read.seen)}.")
    lines += _exits(context, read)
    lines += _tried(read)
    lines += _objectives(context)
    lines += _memory(read) if memory else []
    lines += _earlier(context)
    lines += _history(context)
    notes = [line for line in context.loop_status.splitlines() if line.strip()]
    if notes:
        lines += ["", f"HARNESS NOTES {HARNESS_NOTE}:", *notes]
    return lines


def _description(context: AgentContext, read: Readings) -> list[str]:
    """The room's description as `look` prints it now, or as last printed here with its age; a pointer when the last
    response printed it."""
    if not read.description:
        return []
    age = context.turn - 1 - read.description_turn
    latest = context.recent[-1][1] if context.recent else context.view.text
    if (age <= 0 or read.description_now) and _squeeze(read.description) in _squeeze(latest):
        where = "in the last response below" if context.recent else "in the opening text below"
        if not context.recent and read.opening:
            where = "in the game's opening above"
        return [f"{DESCRIPTION} ({NOW if read.description_now else 'printed this turn'}): {where}."]
    if read.description_now:
        when = NOW
    else:
        when = "printed this turn" if age <= 0 else f"printed {age} turn{'s' if age > 1 else ''} ago"
    return [f"{DESCRIPTION} ({when}):", _cut(read.description, ROOM_TEXT_CHARS)]


def _exits(context: AgentContext, read: Readings) -> list[str]:
    parts = [f"{d} -> {title}" if title else d for d, title in read.exits]
    lines = [f"{EXITS_WORKED} {EXIT_SEPARATOR.join(parts) or 'none yet'}."]
    if read.mentioned_exits:
        lines.append(f"{EXITS_MENTIONED} {', '.join(read.mentioned_exits)}.")
    # Only the moves whose last try here changed nothing: a rope walked one step at a time keeps the room but not
    # the answer (ballyhoo's tightrope), and is no wall.
    unchanged = context.refused_here | context.failed_here
    walls = [d for d in context.failed_exits if canonical_command(d) in unchanged]
    if walls:
        lines.append(f"Tried here without moving: {', '.join(walls)}.")
    return lines


def _tried(read: Readings) -> list[str]:
    if not read.tried:
        return []
    return ["Done here, latest first, with the first line of the game's answer:"] + [
        f"- {command} (turn {turn}): {answer or '(no answer)'}" for command, turn, answer in read.tried
    ]


def _memory(read: Readings) -> list[str]:
    """What the agent would otherwise forget once it scrolls out of the history (bounded)."""
    lines = []
    if read.thoughts:
        lines += ["", "YOUR LAST THOUGHTS:", *(f"- turn {turn}: {thought}" for turn, thought in read.thoughts)]
    if read.seen_elsewhere:
        where = [f"{name} ({room}, turn {turn})" for name, room, turn in read.seen_elsewhere]
        lines += ["", f"SEEN ELSEWHERE (room and turn you last saw it): {', '.join(where)}."]
    if len(read.map) > 1:
        lines += ["", f"{MAP} (this room first, then the nearest; exits as walked, not checked now):", *read.map]
    if read.rooms_with_mentions:
        lines += ["", "ROOMS WHOSE TEXT MENTIONS EXITS NEVER TRIED THERE (not verified):"]
        for room, directions, path in read.rooms_with_mentions:
            lines.append(f"- {room}: {', '.join(directions)} (the way there: {', '.join(path) or 'here'})")
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
        lines.append(
            f"From here, the next step of the way an earlier episode reached its best score: {known.route_next}."
        )
    if known.path_to_known and not known.known_here:
        lines.append(
            f"Nearest room where an earlier episode scored: {known.known_target}, via {', '.join(known.path_to_known)}."
        )
    return ["", "FROM EARLIER EPISODES:", *lines] if lines else []


def _history(context: AgentContext) -> list[str]:
    """Earlier turns (a response shown before is pointed at, not repeated), then the last command and the game's
    full response, verbatim. A turn that ran nothing (no reply could be used) says so."""
    if not context.recent:  # the first turn: the opening text, unless it stands above
        if context.readings is not None and context.readings.opening:
            return ["", "OPENING TEXT: above, the game's opening."]
        return ["", "OPENING TEXT:", _cut(context.view.text, LAST_RESPONSE_CHARS)]
    marks = context.nothing_ran or (False,) * len(context.recent)
    turns = [
        (context.turn - len(context.recent) + i, command, response.strip(), nothing)
        for i, ((command, response), nothing) in enumerate(zip(context.recent, marks))
    ]
    *earlier, (_, last_command, last_response, last_nothing) = turns
    lines = []
    shown: dict[str, int] = {}
    if earlier:
        lines += ["", "EARLIER TURNS (oldest first):"]
        for turn, command, response, nothing in earlier:
            if response in shown and len(response) > REPEAT_MIN_CHARS:
                text = f"(the same text as turn {shown[response]})"
            else:
                shown.setdefault(response, turn)
                text = _cut(response, RESPONSE_CHARS)
            lines += [_command_line(command, nothing), text]
    lines += ["", LAST, _command_line(last_command, last_nothing), _cut(last_response, LAST_RESPONSE_CHARS)]
    return lines


def _command_line(command: str, nothing: bool) -> str:
    return f"> {NOTHING_RAN}" if nothing else f"> {command or '(empty line)'}"


# -- helpers -------------------------------------------------------------------------------------------------------
def _cut(text: str, limit: int) -> str:
    """`text` stripped, cut at the last word boundary before `limit` characters, with an ellipsis when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + " …"


def _squeeze(text: str) -> str:
    return " ".join(text.split()).lower()


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
