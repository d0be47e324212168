"""The stuck warning shown to the agent (and, as information, to the critic) once progress stalls."""

from __future__ import annotations

_CHANGE = "change something in the world you have not changed before"
_SIGNAL_PHRASES = {
    "score": "increase your score",
    "objective": "complete an objective",
    "new_room": "reach a room you have never visited",
    "new_world_state": _CHANGE,
    "new_object_state": _CHANGE,
    "new_game_variable": _CHANGE,
    "new_room_inventory": "bring something to a place you have not brought it",
    "new_position": "reach a room you have never visited",
    "new_information": "find out something you have not been told",
    "new_arrangement": _CHANGE,
}


def progress_phrase(signals: list[str] | tuple[str, ...], objectives_exist: bool) -> str:
    """'increase your score or complete an objective ...' for the enabled signals."""
    phrases = list(
        dict.fromkeys(
            _SIGNAL_PHRASES[s] for s in _SIGNAL_PHRASES if s in signals and (s != "objective" or objectives_exist)
        )
    )
    if len(phrases) <= 1:
        return phrases[0] if phrases else "make progress"
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]


UNTRIED_DIRECTIONS = "Directions never tried from here (not verified)"
NOT_TRIED_RECENTLY = "Commands you have not tried recently"


def build_stuck_warning(
    turns_stuck: int,
    turns_remaining: int,
    signals: list[str] | tuple[str, ...],
    objectives: tuple[str, ...] = (),
    novelty_hints: tuple[str, ...] = (),
    untried_directions: tuple[str, ...] = (),
    cycle: tuple[str, ...] = (),
) -> str:
    """design 001's countdown (docs/design.md), worded so no model can read it as the story: it is the harness that
    ends the episode, not a death in the game. Objectives are named, not listed: the prompt lists them once,
    elsewhere. `cycle`: the commands of one round of the command cycle that is the nearest stop (empty: none):
    only other commands break it, whatever rooms the cycle reaches. Untried directions are not claimed to be exits:
    nobody has tried them."""
    turns_remaining = max(0, turns_remaining)
    end = f"the harness will END THIS EPISODE in {turns_remaining} turns"
    if cycle:
        header = (
            f"GOING ROUND IN CIRCLES: you keep saying the same {len(cycle)} commands in the same order "
            f"({', '.join(cycle)}); {end} unless you stop repeating them."
        )
    else:
        wanted = progress_phrase(signals, bool(objectives))
        header = f"NO PROGRESS for {turns_stuck} turns: {end} unless you {wanted}."
    lines = [header]
    suggestions = []
    if objectives:
        suggestions += ["Work on the objectives listed above", "Prioritize actions that might increase your score"]
    if novelty_hints:
        suggestions.append(f"{NOT_TRIED_RECENTLY}: " + ", ".join(novelty_hints))
    if untried_directions:
        suggestions.append(f"{UNTRIED_DIRECTIONS}: " + ", ".join(untried_directions))
    if suggestions:
        lines.append("SUGGESTIONS:")
        lines.extend(f"- {s}" for s in suggestions)
    return "\n".join(lines)
