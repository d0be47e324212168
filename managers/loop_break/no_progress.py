"""The no-progress rule, the backstop: so many turns without progress end the episode, however varied the play. A
walk through many places is given more time (the trek rule): a walk back through known rooms is slow, not a loop, and
a loop over many places has reached all of them in its first round."""

from __future__ import annotations

from pydantic import Field

from managers.loop_break.detector import Detector, Stretch, Turn, register
from session.config import DetectorSection, LoopBreakConfig


class NoProgressConfig(DetectorSection):
    """`[tool.zorkgpt.loop_break.no_progress]`: the backstop stop rule, turns without progress."""

    max_turns: int = Field(64, ge=1, le=100_000)
    """Terminate (`stuck_no_progress`) this many turns after the last progress, however varied the play. The other
    stop rules end loops sooner; this one is the backstop."""
    trek_rooms: int = Field(3, ge=1, le=100_000)
    """When the turns since the last progress went through more than this many rooms, the no-progress rule may wait
    up to `trek_extra_turns` more: a walk back through known rooms is slow, not a loop (loops over many rooms are the
    repetition rule's). Needs repetition.enabled."""
    trek_extra_turns: int = Field(48, ge=0, le=100_000)
    """Turns that may be added to max_turns over more than `trek_rooms` rooms (0: none)."""
    trek_grace: int = Field(24, ge=0, le=100_000)
    """Over more than `trek_rooms` rooms, the no-progress rule waits no longer than this many turns after the player
    last reached a room not seen since the last progress: a walk keeps reaching rooms, a loop reached all of its own
    in its first round. 0: no such bound (all the extra turns whenever the rooms are many)."""

    def check_with(self, table: LoopBreakConfig) -> None:
        """The stuck warning comes before this rule could stop."""
        if table.warning_lead_turns >= self.max_turns:
            lead = table.warning_lead_turns
            raise ValueError(f"warning_lead_turns ({lead}) must be < no_progress.max_turns ({self.max_turns})")


@register
class NoProgress(Detector):
    """The backstop: max_turns on the stop rules' clock, more over a walk through many rooms (the trek rule)."""

    name = "no_progress"
    config_model = NoProgressConfig
    stop_rule = "no_progress"
    config: NoProgressConfig

    def observe(self, turn: Turn) -> None:
        """Nothing of its own: it reads the stretch's clock and rooms."""

    def limit(self, stretch: Stretch) -> int:
        """max_turns; when the turns since the last progress went through more than trek_rooms places (rooms, and
        spots inside one room id), up to trek_extra_turns more, but no more than trek_grace turns after the player
        last reached a place not yet seen since the last progress. A walk back through known places keeps reaching
        places (karn's shafts, night's maze, zork1's coal mine, with detours; hollywood's hedge maze, walked out the
        way it was walked in); a loop over many places has reached all of them in its first round."""
        config, window = self.config, stretch.window
        if len(window.stretch_places) <= config.trek_rooms:
            return config.max_turns
        limit = config.max_turns + config.trek_extra_turns
        if config.trek_grace:
            arrived = window.last_arrival - stretch.progress.last_progress_turn  # in turns since the progress
            limit = min(limit, arrived + config.trek_grace)
        return max(config.max_turns, limit)

    def stop(self, turns_stuck: int, stretch: Stretch) -> str | None:
        if stretch.clock(turns_stuck) >= self.limit(stretch):
            return f"no progress for {turns_stuck} turns"
        return None

    def turns_to_stop(self, turns_stuck: int, stretch: Stretch) -> int | None:
        return self.limit(stretch) - stretch.clock(turns_stuck)

    def pressure(self, turns_stuck: int, stretch: Stretch) -> dict[str, float]:
        """The clock over max_turns and, on a trek, over the trek's own two limits (the farther of those: either
        fires), the nearer of the two."""
        config, window, clock = self.config, stretch.window, stretch.clock(turns_stuck)
        plain = clock / config.max_turns
        if len(window.stretch_places) <= config.trek_rooms:
            return {"no_progress": plain}
        since_arrival = clock - (window.last_arrival - stretch.progress.last_progress_turn)
        trek = clock / (config.max_turns + config.trek_extra_turns)
        if config.trek_grace:
            trek = max(trek, since_arrival / config.trek_grace)
        return {"no_progress": min(plain, trek)}
