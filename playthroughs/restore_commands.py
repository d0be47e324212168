"""What a restore is checked with: a game's walkthrough, or UNGUIDED when Jericho has none for it, played on from a
snapshot and followed by DICE, commands many games answer at random (a restore that missed the random-number
generator answers them otherwise)."""

from __future__ import annotations

from session.commands import DICE_ROLL

UNGUIDED = ("look", "inventory", "north", "examine me", "south", "east", "wait", "west", "up", "down")
"""Commands for a game Jericho has no walkthrough for (lgop): moving and looking (lgop's player, who never finds the
bathroom this way, loses on the fifth turn: the game ends among them)."""
DICE = (DICE_ROLL, "wait", DICE_ROLL)
"""Played at the end of every continuation: commands many games answer at random."""
