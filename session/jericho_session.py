"""The Jericho session: one Z-machine, read through its memory (room id, score, inventory, objects)."""

from __future__ import annotations

import hashlib
import os
import re
import struct
import warnings
from pathlib import Path
from typing import Any

from loguru import logger

from session.records import GameObject, GameView
from session.zmachine import object_vocabulary

ZORK1_MD5 = "b732a93a6244ddd92a9b9a3e3a46c687"
SUPPORTED_VERSIONS = (1, 2, 3, 4, 5, 7, 8)


class StoryFileError(Exception):
    """The story file is missing or is not a Z-machine game Jericho can run."""


def resolve_story_file(cli_rom: str | None, config_path: str) -> Path:
    """`--rom`, else `ZORK_ROM`, else the configured `game_file_path`; a clear error when it is not there."""
    for origin, candidate in (("--rom", cli_rom), ("ZORK_ROM", os.environ.get("ZORK_ROM")), ("config", config_path)):
        if candidate:
            path = Path(candidate).expanduser()
            if not path.is_file():
                raise StoryFileError(
                    f"story file not found: {path} (from {origin}).\n"
                    f"Put zork1.z5 (md5 {ZORK1_MD5}) at {config_path}, or pass --rom PATH, or set ZORK_ROM=PATH."
                )
            return path
    raise StoryFileError(f"no story file given: put zork1.z5 (md5 {ZORK1_MD5}) at games/zork1.z5 or set ZORK_ROM.")


class JerichoSession:
    """Wraps `jericho.FrotzEnv`: short verbs, no hidden state beyond the emulator and the last response."""

    def __init__(self, story_file: str | Path, seed: int | None = None):
        path = Path(story_file)
        if not path.is_file():
            raise StoryFileError(f"story file not found: {path}. Put zork1.z5 (md5 {ZORK1_MD5}) there.")
        header = path.read_bytes()[:1]
        if not header or header[0] not in SUPPORTED_VERSIONS:
            raise StoryFileError(f"{path} is not a Z-machine story file Jericho can run (.z3/.z4/.z5/.z8).")
        from jericho import FrotzEnv  # imported here so that config errors never pay for loading the C core

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.env = FrotzEnv(str(path), seed=seed)
        self.supported = bool(self.env.is_fully_supported)
        if not self.supported or caught:
            logger.warning(
                f"{path.name} is not fully supported by Jericho: score, moves and change detection are reduced"
            )
        self.story_file = path
        self.game_name = (self.env.bindings or {}).get("name", path.stem)
        self.version = header[0]
        self._text = ""

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self) -> GameView:
        self._text, _ = self.env.reset()
        return self.observe()

    def step(self, command: str) -> GameView:
        """Run one command; the returned view carries the game's response as `text`."""
        self._text, _, _, _ = self.env.step(command)
        return self.observe()

    def close(self) -> None:
        self.env.close()

    # -- reading the machine -----------------------------------------------------------------------------
    def observe(self) -> GameView:
        location = self.env.get_player_location()
        player = self.env.player_obj_num
        room_objects: tuple[GameObject, ...] = ()
        if location is not None:
            room_objects = tuple(self._descendants(location.child, depth=2, skip=player))
        return GameView(
            room_id=location.num if location is not None else None,
            room_name=location.name.strip() if location is not None else "(nowhere)",
            score=self.env.get_score(),
            moves=self.env.get_moves(),
            inventory=tuple(GameObject(o.num, o.name) for o in self.env.get_inventory()),
            room_objects=room_objects,
            world_hash=self.world_hash(),
            text=self._text,
            game_over=self.env.game_over(),
            victory=self.env.victory(),
        )

    def world_hash(self) -> str:
        """MD5 of the same data as Jericho's `get_world_state_hash()` (clean object tree + special RAM).

        Hashes the object table's bytes instead of formatting every object as text: 20x faster (0.09 ms).
        """
        objects = self.env.get_world_objects(clean=True)
        digest = hashlib.md5(bytes(objects))
        digest.update(bytes(self.env._get_special_ram().tobytes()))
        return digest.hexdigest()

    def _descendants(self, first_child: int, depth: int, skip: int = -1) -> list[GameObject]:
        """Objects below `first_child`'s parent, `depth` levels deep, leaving out `skip` and what it holds."""
        found: list[GameObject] = []
        num = first_child
        while num > 0:
            obj = self.env.get_object(num)
            if obj is None:
                break
            if obj.num != skip:
                if obj.name.strip():
                    found.append(GameObject(obj.num, obj.name))
                if depth > 1 and obj.child > 0:
                    found.extend(self._descendants(obj.child, depth - 1, skip))
            num = obj.sibling
        return found

    def room_ids(self) -> set[int]:
        """Object numbers of the rooms: the objects sharing the parent of the player's room."""
        location = self.env.get_player_location()
        if location is None:
            return set()
        return {o.num for o in self.env.get_world_objects() if o.num > 0 and o.parent == location.parent}

    def object_vocabulary(self) -> dict[int, frozenset[str]]:
        """Object number -> dictionary words naming it (synonyms included), read from the story file.

        Falls back to the words of each object's short name when the story file's layout is not understood.
        """
        words = [w.word for w in self.env.get_dictionary()]
        objects = [o for o in self.env.get_world_objects() if o.num > 0]
        try:
            vocabulary = object_vocabulary(self.story_file.read_bytes(), words, len(objects))
        except (IndexError, struct.error):
            vocabulary = {}
        if not vocabulary:
            logger.warning("object vocabulary not readable from the story file: using short names")
            limit = self.dictionary_word_length
            vocabulary = {o.num: frozenset(w[:limit] for w in re.findall(r"[a-z]+", o.name.lower())) for o in objects}
        return vocabulary

    @property
    def dictionary_word_length(self) -> int:
        """Characters the parser keeps of a word: 6 in version 1-3 story files, 9 from version 4."""
        return 6 if self.version <= 3 else 9

    @property
    def max_score(self) -> int:
        return self.env.get_max_score()

    def walkthrough(self) -> list[str]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return list(self.env.get_walkthrough())

    # -- snapshots ---------------------------------------------------------------------------------------
    def snapshot(self) -> tuple[Any, str]:
        """Exact emulator state (RNG included) plus the last response."""
        return self.env.get_state(), self._text

    def restore(self, snap: tuple[Any, str]) -> None:
        state, self._text = snap
        self.env.set_state(state)
