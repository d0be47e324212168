"""What the managers and agents may ask of the game: the `GameSession` protocol. `JerichoSession` is the one the
harness plays; the managers and agents are written against this, so what they may reach of it is this page."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from session.records import GameView
from session.shadow import Trial
from session.snapshots import Restored, Snapshot
from session.zmachine import WorldSnapshot


@runtime_checkable
class GameSession(Protocol):
    """The live game and the probes on its shadow copy, as the managers and agents use them."""

    game_name: str
    """The game's name (Jericho's, else the story file's stem)."""
    player: int
    """The player's object number (0: not known yet, in a game without Jericho's bindings)."""

    # -- probes on a copy: the live game never moves -------------------------------------------------------
    def idle_world(self) -> WorldSnapshot | None:
        """The world after one idle command from the state before the last one (None: the copy failed)."""

    def trial(self, command: str, refused: str | None = None) -> Trial | None:
        """`command` played on a copy of the live state: the game's answer, and whether anything changed."""

    def answer_on_copy(self, command: str) -> Trial | None:
        """What the game answers `command` on a copy (None for what must never run, or a failed copy)."""

    def room_after(self, command: str) -> int | None:
        """The room `command` would lead to, played on a copy."""

    def noisy_globals(self) -> frozenset[int]:
        """Globals that change between harmless probes (the parser's own)."""

    def noise(self) -> tuple[frozenset[int], frozenset[int]]:
        """(globals, attributes) that change without the player doing anything."""

    # -- the story file ---------------------------------------------------------------------------------
    def object_vocabulary(self) -> dict[int, frozenset[str]]:
        """Object number -> the words the parser knows it by."""

    def dictionary(self) -> list[Any]:
        """The story file's dictionary entries."""

    @property
    def dictionary_range(self) -> tuple[int, int]:
        """The story file's dictionary addresses, first and past the last."""

    @property
    def dictionary_word_length(self) -> int:
        """Characters the parser keeps of a word."""

    def walkthrough(self) -> list[str]:
        """The game's walkthrough (Jericho's, or a file beside the story file); [] when it has none."""

    # -- going back -------------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The live game now, to come back to."""

    def restore(self, snap: Snapshot, replay: bool = False) -> tuple[GameView, Restored]:
        """The live game put back to `snap`."""
