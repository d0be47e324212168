"""The loop-break system (see loop_break.py). Detectors are small classes fed one TurnRecord per turn."""

from managers.loop_break.destination import DestinationPredictor
from managers.loop_break.loop_break import LoopBreak, LoopStatus, Verdict

__all__ = ["DestinationPredictor", "LoopBreak", "LoopStatus", "Verdict"]
