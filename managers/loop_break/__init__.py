"""The loop-break system (see loop_break.py). Detectors are small classes fed one TurnRecord per turn.

Each built-in detector is one module of this package holding its settings, what it counts and its `Detector`, which
registers as the module is imported: DETECTOR_MODULES imports them in the order the loop break asks them (the first
stop rule that fires names the stop: the no-progress backstop first), the agent<->critic loops among them where their
events and notes have always come. session.config imports this package by name before it validates a configuration.
"""

from importlib import import_module

from managers.loop_break.destination import DestinationPredictor
from managers.loop_break.detector import Detector, Events, Moment, ScoredProposal, Stretch, Turn, register, unregister
from managers.loop_break.loop_break import LoopBreak, LoopStatus, Verdict, marked_events
from managers.loop_break.penalties import Judged, block

DETECTOR_MODULES = (
    "action_loops",
    "room_loops",
    "no_progress",
    "repetition",
    "fruitless",
    "churn",
    "cycle",
    "obstacle",
    "refused_again",
)
"""The built-in detectors' modules, in the registry's order."""
for _module in DETECTOR_MODULES:
    import_module(f"{__name__}.{_module}")

__all__ = [
    "DETECTOR_MODULES",
    "Detector",
    "DestinationPredictor",
    "Events",
    "Judged",
    "LoopBreak",
    "LoopStatus",
    "Moment",
    "ScoredProposal",
    "Stretch",
    "Turn",
    "Verdict",
    "block",
    "marked_events",
    "register",
    "unregister",
]
