"""The Jericho session: the live game, one Z-machine read through its memory (room id, score, inventory, objects).

Beside it, each its own module: session.shadow (probes played on a copy of the emulator), session.player_finder
(the player's object in a game without Jericho's bindings), session.snapshots (a turn kept and brought back) and
session.story_file (the story file: where it is, whether it runs, an emulator started on it).
"""

from __future__ import annotations

import hashlib
import re
import struct
import warnings
from functools import partial
from pathlib import Path
from typing import Any

from loguru import logger

from session.commands import canonical_command, direction_of, read_command, refuse_unrunnable
from session.emulator import DEFAULT_TIME_LIMIT, LIVE, SHADOW, Emulator, Observation
from session.outcomes import printed_title
from session.player_finder import PlayerFinder
from session.records import GameObject, GameView
from session.shadow import IDLE_COMMAND, TEXT, Shadow, Trial
from session.snapshots import Fingerprint, Restored, RestoreError, Snapshot, reach, state_digest, tree_digest
from session.status import (
    SCORE_COMMAND,
    ScoreReading,
    closing_question,
    full_score,
    read_ending,
    read_score_answer,
    status_globals,
    without_status_line,
)
from session.story_file import ZORK1_MD5, StoryFileError, check_story_bytes, start_emulator, walkthrough
from session.zmachine import ObjectTable, WorldSnapshot, dictionary_addresses, object_vocabulary

RNG_STATE = 7
"""Where `FrotzEnv.get_state()` keeps the random-number generator's state."""
NEXT_OPCODE = 6
"""Where `FrotzEnv.get_state()` keeps the opcode the machine runs next: the input it waits for."""
READ_LINE = 228
"""The Z-machine's `read` (a line of input), as opposed to READ_CHAR."""
READ_CHAR = 246
"""The Z-machine's `read_char`: the game waits for one key."""
OPENING_KEYS = 3
"""Keys given at most to a game without bindings that opens waiting for one (a title screen, then an epigraph)."""


def _internal_name(name: str) -> bool:
    """A short name no player is shown: empty, `(in parentheses)`, with_underscores or camelCase."""
    internal_word = "_" in name or (" " not in name and bool(_CAMEL.search(name)))  # not `ProjCon Office`
    return not name or (name.startswith("(") and name.endswith(")")) or internal_word


def _readable(name: str) -> str:
    """`(Alike_Maze_1)` -> `Alike Maze 1`, `(gnomeRoom)` -> `gnome Room`."""
    return _CAMEL.sub(lambda m: m.group(1) + " " + m.group(2), name.strip("()").replace("_", " ")).strip()


_CAMEL = re.compile(r"([a-z])([A-Z])")


class JerichoSession:
    """Wraps `jericho.FrotzEnv`: short verbs (`reset`, `step`, `observe`, `close`, `snapshot`, `restore`).

    What it keeps, all of it set in `__init__`: the emulator; what it read of the story file (its bindings, version,
    object table, dictionary); and of the episode, what the next view is read against: the commands run since reset,
    the opening text, the last view and answer, the state the last command ran from, the room the player was last
    seen in, the room titles the game printed, and for a game without Jericho's bindings the player's object, the
    rooms container and the score last read. `restore` brings all of the episode's back but the opening text, the
    player's object and the rooms container, which stay as found.

    It owns the `shadow`, a copy of the emulator that probes play on (session.shadow), and the `finder` of the
    player's object (session.player_finder). Both emulators run in processes of their own (session.emulator), each
    call within `time_limit` seconds. A crash or a hang of the shadow skips the probe it played
    (`shadow.probe_failures` counts them; the next probe starts a fresh shadow); one of the live game raises
    EmulatorFailed, which ends the episode.
    """

    def __init__(self, story_file: str | Path, seed: int | None = None, time_limit: float = DEFAULT_TIME_LIMIT):
        path = Path(story_file)
        if not path.is_file():
            raise StoryFileError(f"story file not found: {path}. Put zork1.z5 (md5 {ZORK1_MD5}) there.")
        story = check_story_bytes(path)
        self.time_limit = time_limit
        """Seconds each call to an emulator may take (session.emulator.DEFAULT_TIME_LIMIT says why its default)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            self.env = start_emulator(path, seed, LIVE, time_limit)
        self.supported = bool(self.env.is_fully_supported)
        """Jericho has bindings for this story file (its score, moves, player and endings); without them the session
        reads what every Z-machine game shows a player (session.status)."""
        if not self.supported or caught:
            logger.warning(
                f"{path.name} has no Jericho bindings: score, moves, room and endings are read as a player sees them"
            )
        self.story_file = path
        self.story_md5 = hashlib.md5(story).hexdigest()
        self.game_name = (self.env.bindings or {}).get("name", path.stem)
        self.version = story[0]
        self.objects = ObjectTable(story)
        self._seed = seed
        self.shadow = Shadow(self.objects, partial(self._start, SHADOW))
        self.finder = PlayerFinder(self.objects, self.version, self.shadow)
        self._jericho_max = self.env.get_max_score()
        """The game's maximum score as Jericho's bindings know it, read once: the summary of an episode whose
        emulator crashed needs it too (`max_score`)."""
        self._dictionary: list[Any] | None = None
        self.player = int(self.env.player_obj_num or 0) if self.supported else 0
        """The player's object number; found by `finder` when Jericho has no bindings."""
        self.rooms_container = 0
        """The object holding every room (Infocom games), or 0 when rooms are parentless (Inform games)."""
        self.commands: list[str] = []
        """Every command the emulator ran since reset, in order (what `snapshot` keeps for a replay)."""
        self.view: GameView | None = None
        """What the last command (or the reset) gave."""
        self._text = ""
        """The game's answer to the last command (or the reset), as a player reads it."""
        self._opening = ""
        """The text the game printed when it opened (reset)."""
        self._before: Any = None
        """Emulator state the last command ran from (for `idle_world`)."""
        self._anchor: tuple[Any, int] = (None, 0)
        """The state the latest command read as a line ran from (None: the reset), and the commands run before it."""
        self._room: int | None = None
        """The room the player was last seen in (`observe` tells arrivals apart)."""
        self._titles: dict[int, str] = {}
        """Room id -> the title the game printed, for rooms whose object name is internal (`(Alike_Maze_1)`)."""
        self._score = ScoreReading(0)
        """Without bindings: the score, maximum and moves the game last printed (its answer to `score`)."""
        self.max_known: int | None = None
        """Without bindings: the highest maximum score the game has printed (None: never)."""
        self.score_read = self.supported
        """The score was ever read: without bindings, from the status line's globals or an answer to `score`."""

    # -- lifecycle ---------------------------------------------------------------------------------------
    def reset(self) -> GameView:
        """Start an episode: the game as it opens (on a fresh emulator when the live one failed in the last)."""
        self._text = self._opening = self.as_read(self.reopen(fresh=not self.env.alive))
        self._before, self.commands, self._anchor = None, [], (None, 0)
        self.shadow.new_episode()
        self._room = None  # a new episode arrives in its first room, wherever the last one ended
        if not self.supported:
            self._score = ScoreReading(0)
            self.player = self.finder.at_start(self.env)
        self.rooms_container = self.finder.rooms_container(self.world(), self.player)
        self.view = self.observe()
        return self.view

    def as_read(self, text: str) -> str:
        """The game's answer as a player reads it: an unbound game's without the prompt and status line in it."""
        return text if self.supported else without_status_line(text, self.version)

    def reopen(self, fresh: bool = False) -> str:
        """Reset the emulator (a fresh one when `fresh`) and return the opening text; the emulator alone, for `reset`
        and `restore`. A game Jericho has no bindings for that opens on a title screen waiting for one key (curses'
        `[Please press SPACE to begin.]`) is given it, as Jericho's bindings do for the games they know, at most
        OPENING_KEYS times: commands typed there would be lost keys."""
        if fresh:
            self.env.close()
            self.env = self._start(LIVE)
        text, _ = self.env.reset()
        for _ in range(0 if self.supported else OPENING_KEYS):
            if self.env.get_state()[NEXT_OPCODE] != READ_CHAR:
                break
            text += self.env.step("")[0]
        return text

    def step(self, command: str) -> GameView:
        """Run one command; the returned view carries the game's response as `text`."""
        refuse_unrunnable(command)  # the orchestrator refuses these first: this is the last line of defence
        walked_from = self.world() if self._watching_for_walker(command) else None
        before, text, after = self.env.play(command)
        self._text = self.as_read(text)
        self._before = before
        if before[NEXT_OPCODE] == READ_LINE:
            self._anchor = (before, len(self.commands))
        self.commands.append(command)
        came_from = None
        if not self.supported and not self.player:  # the player's object is not known yet
            now = self.objects.snapshot(after.ram, after.special)
            if walked_from is not None:  # nothing walked from the start: did the player walk now?
                self.player = self.finder.walker(self.env, walked_from, now, before)
                self.rooms_container = self.finder.rooms_container(now, self.player) if self.player else 0
                came_from = self._origin(walked_from) if self.player else None
            elif self._moved_a_thing(now):
                # a game whose player never walks (one room): the first command that moved a thing may have put it
                # in the player's hands, and `drop all` then shows whose
                self.player = self.finder.dropper(now, self.env.get_state())
                self.rooms_container = self.finder.rooms_container(now, self.player) if self.player else 0
        self.view = self.observe(after.rng != tuple(before[RNG_STATE]), after, came_from)
        return self.view

    def _watching_for_walker(self, command: str) -> bool:
        """A game without bindings whose player has not walked yet, and a command that walks."""
        return not self.supported and not self.player and direction_of(command) is not None

    def _moved_a_thing(self, now: WorldSnapshot) -> bool:
        """The last command changed some object's parent."""
        last = self.view.world if self.view is not None else None
        return last is not None and bool((last.parents != now.parents).any())

    def _origin(self, world: WorldSnapshot) -> tuple[int, str] | None:
        """(room, title) the player walked from on the walk that showed which object the player is: until then the
        room was unknown. Its title is the first the opening printed, when the story file keeps no name for it."""
        room = world.room_of(self.player, self.rooms_container)
        if room is None:
            return None
        opening = next((t for line in self._opening.splitlines() if (t := printed_title(line))), "")
        if opening:
            self._titles.setdefault(room, opening)
        return room, self._room_title(self.env.observe(hashed=False).ram.tobytes(), room, arrived=False)

    def close(self) -> None:
        self.env.close()
        self.shadow.close()

    def _start(self, role: str) -> Emulator:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an unsupported game was reported when the session started
            return start_emulator(self.story_file, self._seed, role, self.time_limit)

    # -- reading the machine -----------------------------------------------------------------------------
    def world(self) -> WorldSnapshot:
        """The object tree, attributes and globals as they are in memory now."""
        now = self.env.observe(hashed=False)
        return self.objects.snapshot(now.ram, now.special)

    def observe(
        self, rolled_dice: bool = False, now: Observation | None = None, came_from: tuple[int, str] | None = None
    ) -> GameView:
        """The game as it stands; `rolled_dice`, `now` and `came_from` are for `step` to say whether the command drew
        random numbers, what the live emulator gave with the command's answer, and from which room a first walk came
        (GameView.came_from)."""
        now = now or self.env.observe(hashed=self.supported)
        world = self.objects.snapshot(now.ram, now.special)
        ram = now.ram.tobytes()  # names read a byte at a time: bytes index five times faster than an array
        room = self.player_room(world)
        held = world.contents(self.player) if self.player else []
        inventory = tuple(self._named(ram, num) for num in held)
        inside = tuple(self._named(ram, num) for container in held for num in world.contents(container))
        room_objects = tuple(self._named(ram, num) for num in self._descendants(world, room, depth=2))
        arrived, self._room = room != self._room, room
        if self.supported:
            score, moves, game_over, victory = now.score, now.moves, now.game_over, now.victory
        else:
            score, moves, game_over, victory = self._read_status(world)
        return GameView(
            room_id=room,
            room_name=self._room_title(ram, room, arrived) if room is not None else "(nowhere)",
            score=score,
            moves=moves,
            inventory=tuple(obj for obj in inventory if obj.name),
            room_objects=tuple(obj for obj in room_objects if obj.name),
            world_hash=self._world_hash(now, world),
            text=self._text,
            game_over=game_over,
            victory=victory,
            world=world,
            held_inside=tuple(obj for obj in inside if obj.name),
            rolled_dice=rolled_dice,
            paused=self.env.get_state()[NEXT_OPCODE] == READ_CHAR,
            unreadable=() if self.supported else tuple(self.unreadable()),
            came_from=came_from,
            unnamed=tuple(obj.num for obj in room_objects + inventory if not obj.name),
            unnamed_carried=tuple(obj.num for obj in inventory if not obj.name),
        )

    def _world_hash(self, now: Observation, world: WorldSnapshot) -> str:
        """`GameView.world_hash`: with Jericho's bindings, what the emulator worked out (their clean object tree and
        curated state bytes: `session.emulator.world_hash`); without them Jericho's tree is empty, so the whole object
        tree as memory holds it, links and attributes."""
        return now.world_hash if self.supported else tree_digest(world)

    def footprint(self, now: Observation) -> tuple:
        """What a command that did nothing leaves as it was: room, score, what the player holds, the world hash
        and whether the game has ended."""
        world = self.objects.snapshot(now.ram, now.special)
        held = tuple(world.contents(self.player)) if self.player else ()
        hashed = self._world_hash(now, world)
        return self.player_room(world), now.score, held, hashed, now.game_over, now.victory

    def _read_status(self, world: WorldSnapshot) -> tuple[int, int, bool, bool]:
        """(score, moves, game over, victory) of a game Jericho has no bindings for, as a player sees them
        (session.status): the status line's globals in versions 1-3, else the game's answer to `score` played on
        the shadow emulator while the game reads commands; the ending, and then the final score, from the answer's
        own closing words. The maximum comes from the answers to `score`, asked in versions 1-3 only until one
        gives it, at the start and whenever the score changes."""
        shown = status_globals(self.objects.story, (int(world.globals[1]), int(world.globals[2])))
        if shown is not None:
            self._score = ScoreReading(shown[0], self._score.max_score, shown[1])
            self.score_read = True
        asked = bool(self.commands) and canonical_command(self.commands[-1]) == SCORE_COMMAND
        announced = not asked and full_score(self._text)
        if any(read_ending(self._text)) or announced:
            answer = read_score_answer(self._text)  # the closing words give the final score
        elif shown is None or (self.max_known is None and (self.view is None or self.view.score != shown[0])):
            answer = self._ask_score() if self.env.get_state()[NEXT_OPCODE] == READ_LINE else None
        else:
            answer = None
        if answer is not None:
            moves = answer.moves if answer.moves is not None else self._score.moves
            self._score = ScoreReading(answer.score if shown is None else shown[0], answer.max_score, moves)
            self.score_read = True
            if answer.max_score is not None:
                self.max_known = max(self.max_known or 0, answer.max_score)
        game_over, victory = read_ending(self._text, self._score.score, self.max_known)
        if (game_over or victory) and self._still_playing():
            game_over = victory = False
        moves = self._score.moves if self._score.moves is not None else len(self.commands)
        return self._score.score, moves, game_over, victory or announced

    def _still_playing(self) -> bool:
        """The game goes on after what read as its ending: asked `look` (on the shadow emulator), it describes a
        place, a title line and more, where a game that ended asks its closing question again, refuses ("Please give
        one of the answers above") or says nothing. Ballyhoo's `You have died` under the big top, zork1's
        resurrection: the player plays on. When the shadow cannot answer, the ending stands."""
        answer = self.shadow.on_copy(self.env.get_state(), IDLE_COMMAND, TEXT)
        if answer is None:
            return False
        lines = [line for line in self.as_read(answer[0]).splitlines() if line.strip()]
        return len(lines) >= 2 and printed_title(lines[0]) is not None and not closing_question("\n".join(lines))

    def _ask_score(self) -> ScoreReading | None:
        """The game's answer to `score` from the live state, played on the shadow emulator (None: it could not)."""
        answer = self.shadow.on_copy(self.env.get_state(), SCORE_COMMAND, TEXT)
        return read_score_answer(answer[0]) if answer is not None else None

    def _room_title(self, ram: Any, room: int, arrived: bool) -> str:
        """What the game calls the room. The object's short name, unless it is an internal one (Inform's `(maze)`,
        `(Alike_Maze_1)`, `(gnomeRoom)`, or none): then the title line the game printed on arrival, else the name
        made readable; the first room read before any arrival is where the game opened, titled in its opening text
        (a one-room game whose player is found only once a thing moves)."""
        name = self.objects.short_name(ram, room).strip()
        if not _internal_name(name):
            return name
        source = self._text if arrived else self._opening if not self._titles else ""
        if room not in self._titles and source:
            title = next((t for line in source.splitlines() if (t := printed_title(line))), "")
            if title:
                self._titles[room] = title
        return self._titles.get(room) or _readable(name) or f"room {room}"

    def player_room(self, world: WorldSnapshot) -> int | None:
        """The room the player is in, even inside a vehicle or past Jericho's object cap; None when unknown.

        Version 1-3 games keep it in global 0 (the status line shows that object's name, Standard 8.2.2); later
        games are read from the object tree: the player's outermost container below the rooms container.
        """
        if self.version <= 3 and 0 < int(world.globals[0]) <= self.objects.count:
            return int(world.globals[0])
        return world.room_of(self.player, self.rooms_container)

    def _named(self, ram, num: int) -> GameObject:
        return GameObject(num, self.objects.short_name(ram, num))

    def _descendants(self, world: WorldSnapshot, container: int | None, depth: int) -> list[int]:
        """Objects inside `container`, `depth` levels deep, leaving out the player and what it holds."""
        found: list[int] = []
        for num in world.contents(container) if container else ():
            if num == self.player:
                continue
            found.append(num)
            if depth > 1:
                found.extend(self._descendants(world, num, depth - 1))
        return found

    # -- probes on the shadow (session.shadow), from the live game ---------------------------------------
    def idle_world(self) -> WorldSnapshot | None:
        """The world as one idle turn would have left it, from the state the last command ran from: None before the
        first command and when the shadow failed (`Shadow.idle_world`)."""
        return self.shadow.idle_world(self._before)

    def trial(self, command: str, refused: str | None = None) -> Trial | None:
        """What `command` would do from here, played on the shadow (`Shadow.trial`); raises CommandRefused."""
        return self.shadow.trial(self.env, command, refused, self)

    def answer_on_copy(self, command: str) -> Trial | None:
        """`trial`, or None for a command that must never run (where `trial` raises CommandRefused) or that the
        shadow emulator could not play."""
        return None if read_command(command).refusal is not None else self.trial(command)

    def room_after(self, command: str) -> int | None:
        """The room `command` would lead to from here, played on the shadow emulator: the game is never touched."""
        trial = self.answer_on_copy(command)
        return trial.room_id if trial is not None else None

    def noisy_globals(self) -> frozenset[int]:
        """Globals that follow the command's words or the clock, not the world (`Shadow.noisy_globals`)."""
        return self.shadow.noisy_globals(self.env)

    def noise(self) -> tuple[frozenset[int], frozenset[int]]:
        """(attribute numbers, object numbers) whose changes are not the world's: what Jericho's bindings strip
        (`Shadow.jericho_noise`), or, for a game without bindings, the attributes its library sets while it lists
        things (`Shadow.listing_attributes`)."""
        if self.supported:
            return self.shadow.jericho_noise(self.env)
        return self.shadow.listing_attributes(self.env), frozenset()

    # -- what the story file holds -----------------------------------------------------------------------
    def object_vocabulary(self) -> dict[int, frozenset[str]]:
        """Object number -> dictionary words naming it (synonyms included), read from the story file: which printed
        word a thing answers to (managers.game_reader). Falls back to the words of each object's short name when
        the story file's layout is not understood."""
        words = [w.word for w in self.dictionary()]
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

    def dictionary(self) -> list[Any]:
        """Jericho's dictionary words, read once: a second `get_dictionary()` crashes the C core on some games."""
        if self._dictionary is None:
            self._dictionary = list(self.env.get_dictionary())
        return self._dictionary

    @property
    def dictionary_range(self) -> tuple[int, int]:
        """[first, end) addresses of the dictionary's entries: a global holding one holds a word the parser read."""
        first, entry_length, count = dictionary_addresses(self.objects.story)
        return first, first + entry_length * count

    @property
    def dictionary_word_length(self) -> int:
        """Characters the parser keeps of a word: 6 in version 1-3 story files, 9 from version 4."""
        return 6 if self.version <= 3 else 9

    @property
    def max_score(self) -> int | None:
        """The most points the game gives: Jericho's, or what the game printed as its maximum (None: never)."""
        return self._jericho_max if self.supported else self.max_known

    def unreadable(self) -> list[str]:
        """What this game has not shown a player so far, of what the harness reads: `score` (no status line and no
        answer to `score`), `max_score`, `room` (no player object walked). The loop break and the context go
        without it; summary.json says so once."""
        missing = {"score": not self.score_read, "max_score": self.max_score is None, "room": not self.player}
        return [name for name, unknown in missing.items() if unknown]

    def walkthrough(self) -> list[str]:
        """The game's walkthrough: Jericho's, else a file beside the story file (`session.story_file.walkthrough`)."""
        return walkthrough(self.env, self.story_file)

    # -- snapshots (session.snapshots) -------------------------------------------------------------------
    def fingerprint(self) -> Fingerprint:
        """The state a restore must give back equal (see `Fingerprint`), read from memory now."""
        now = self.env.observe(hashed=False)
        world = self.objects.snapshot(now.ram, now.special)
        return Fingerprint.of(world, self.player_room(world), now.score, self.player, (now.game_over, now.victory))

    def snapshot(self) -> Snapshot:
        """The game as it is now, right after the last command (or the reset), for `restore`."""
        if self.view is None:
            raise RestoreError("nothing to snapshot before the first reset")
        view = self.view
        ended = (view.game_over, view.victory)
        return Snapshot(
            story_md5=self.story_md5,
            commands=tuple(self.commands),
            anchor=self._anchor[0],
            anchor_turn=self._anchor[1],
            state=state_digest(self.env.get_state()),
            view=view,
            room=self._room,
            titles=tuple(self._titles.items()),
            fingerprint=Fingerprint.of(view.world, view.room_id, view.score, self.player, ended),
            reading=(self._score, self.score_read, self.max_known),
        )

    def restore(self, snap: Snapshot, replay: bool = False) -> tuple[GameView, Restored]:
        """Bring the game back to `snap`, so that the next commands answer exactly as they did after it the first
        time; returns the view the snapshot's turn gave (`snap.view`) and how. Raises RestoreError when neither way
        reaches the snapshot's state (the session is then somewhere else: reset it).

        The emulator is set to the snapshot's anchor and the commands from there are played again, else a fresh one
        replays every command since reset, as `--resume` does (`replay` asks for that at once): session.snapshots
        says why and when (`reach`). Either way the state reached is checked against the snapshot's."""
        if snap.story_md5 != self.story_md5:
            raise RestoreError(f"the snapshot is of another story file than {self.story_file.name}")
        if self.view is None:  # a session that never started knows neither its rooms container nor its view
            self.reset()
        before, how = reach(self, snap, replay)
        self.view, self._text, self._room, self._titles = snap.view, snap.view.text, snap.room, dict(snap.titles)
        self._before, self.commands = before, list(snap.commands)
        self._anchor = (snap.anchor, snap.anchor_turn)
        self._score, self.score_read, self.max_known = snap.reading
        return snap.view, how
