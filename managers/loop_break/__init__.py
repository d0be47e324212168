"""The loop-break system (see loop_break.py). Detectors are small classes fed one TurnRecord per turn."""

from managers.loop_break.destination import DestinationPredictor
from managers.loop_break.detector import Detector, Moment, Proposal, Stretch, Turn, register, unregister
from managers.loop_break.loop_break import LoopBreak, LoopStatus, Verdict, marked_events

__all__ = [
    "Detector",
    "DestinationPredictor",
    "LoopBreak",
    "LoopStatus",
    "Moment",
    "Proposal",
    "Stretch",
    "Turn",
    "Verdict",
    "marked_events",
    "register",
    "unregister",
]
