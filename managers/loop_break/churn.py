"""Churning: the player keeps changing small things in one room and gets nowhere (busy camping).

Taking and dropping, opening and closing, wearing and removing, switching on and off, each over the room's many
objects: every change is one the episode has seen (else it would be progress: a new object state), yet the
combination of what is held, open and switched on keeps being new. The repetition rule compares whole situations,
so it sees a new one after every such change; the cycle rule needs the commands in a fixed order; the fruitless rule
needs new commands. What such play does is visible without any of them: in place, it keeps changing the world in
ways that reach nothing new. Healthy play changes things too, but a change that reaches nothing new is rare in it: a
walkthrough's changes are progress (a first take, a first opening), and a clumsy player's detours (looks, examinations,
wrong verbs, steps out and back) change nothing.

A turn churns when it is no move and no observation (session.commands.is_observation), keeps the player in the
same known room, leaves a situation (managers.novelty) other than the one it started from, and makes no progress but
by the weak signals (`fruitless_weak_signals`: a new combination of things in hand is what this play produces).
"""

from __future__ import annotations

from collections import deque

class ChurnCount:
    def __init__(self, window: int, changes: int, min_turns: int):
        self.recent: deque[bool] = deque(maxlen=max(window, 1))
        """Whether each of the last `window` turns churned (since the last progress by a strong signal)."""
        self.turns = 0
        """Turns since the last progress by a signal other than the weak ones."""
        self.changes_to_stop, self.min_turns = changes, min_turns

    def restart(self) -> None:
        self.recent.clear()
        self.turns = 0

    def observe(self, churned: bool) -> None:
        self.turns += 1
        self.recent.append(churned)

    @property
    def changes(self) -> int:
        """Turns of the window that churned."""
        return sum(self.recent)

    def holds(self) -> bool:
        """At least `changes` churning turns in the window, `min_turns` turns or more since the last strong progress
        (never when `changes` is 0: the rule is off)."""
        return 0 < self.changes_to_stop <= self.changes and self.turns >= self.min_turns
