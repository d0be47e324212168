"""Trajectories for the corpus benchmark, built on any story file by trying commands on exact snapshots.

- `optimal`: Jericho's walkthrough, blank "press a key" steps included.
- `noisy`: the walkthrough with harmless detours (look, inventory, examine, a wrong verb, a step to a neighbouring
  room and back), up to `factor` of them per step on average, seeded. Each detour is tried on a snapshot first and
  kept only when the room, score and inventory are as before and the rest of the walkthrough, played from there,
  still scores as the clean walkthrough does at every step. The whole script is then replayed in plain Jericho:
  `healthy_until` is its last turn when it reaches the clean final score, else the turn before its first walkthrough
  step that ended differently.
- stuck kinds, each a healthy walkthrough prefix (cut at a fraction of the walkthrough) followed by a loop:
  `ab` (two rooms), `line` (a corridor of 3-5 rooms, end to end), `random_walk` (seeded, among at most 4 rooms),
  `camping` (the same in-room actions), `puzzle_retry` (a failing command and its variations), `inventory_juggling`
  (drop and take again), `wandering` (out and back over 5-10 rooms the prefix visited), `semi_novel` (a new verb,
  noun or parser error every turn in the same two rooms, none changing the world; `semi_novel_walking` walks to the
  neighbour and back after every two such tries), and `waiting` (`wait`, again and again: the identical command a
  player uses to let time pass).
- `busy_camping` and `busy_round`: one room with many things at hand (BUSY_OBJECTS), and commands that change small
  things there and undo them (take/drop, open/close, wear/remove, turn on/off: TOGGLES) with examinations and other
  fidgets (FIDGETS) between, each round touching other objects than the last: the objects' places and attributes keep
  changing, nothing gets anywhere. `busy_camping` draws the next command at random (seeded), `busy_round` says them
  in the same order every round (a round longer than a short cycle when the room holds enough).

Nothing here is game-specific: exits are found by trying every direction, objects come from the Z-machine.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from session.commands import DIRECTION_WORDS, DIRECTIONS, FUNCTION_WORDS, OPPOSITE, direction_of
from session.emulator import EmulatorFailed
from session.jericho_session import JerichoSession
from session.outcomes import PARSER_PHRASES, not_at_hand, unknown_word
from session.records import GameView
from session.zmachine import attribute_mask

HEALTHY_KINDS = ("optimal", "noisy")
STUCK_KINDS = (
    "ab",
    "line",
    "random_walk",
    "camping",
    "puzzle_retry",
    "inventory_juggling",
    "wandering",
    "semi_novel",
    "semi_novel_walking",
    "waiting",
    "busy_camping",
    "busy_round",
)
SEMI_NOVEL = frozenset({"semi_novel", "semi_novel_walking"})
"""Stuck kinds that try something new every turn or so: they must end within 60 turns (TARGETS)."""
PURE_REPETITION = frozenset({"ab", "camping", "waiting"})
"""Stuck kinds that repeat the very same commands: they must end within 25 turns, not 40 (TARGETS)."""
TARGETS = {"stuck": 40, "pure_repetition": 25, "semi_novel": 60}
"""Turns from a loop's start within which it must end."""
DEFAULT_CUTS = (0.25, 0.5, 0.75)
LOOP_LENGTH = 150
LOOKAHEAD_STEPS = 30
"""How far ahead a single detour is checked (cheap); each block of CHECK_EVERY_STEPS steps is then checked against
the whole rest of the walkthrough."""
CHECK_EVERY_STEPS = 40
_WRONG_VERBS = ("dance", "sing", "yodel", "think", "xyzzq", "wave hands")
_WRONG_OBJECT_VERBS = ("touch", "smell", "shake", "frobnicate", "kick")
_SEMI_NOVEL_VERBS = (
    "examine",
    "look at",
    "smell",
    "listen to",
    "touch",
    "search",
    "look under",
    "look behind",
    "knock on",
    "read",
    "taste",
    "rub",
    "hug",
    "count",
    "describe",
    "admire",
    "ponder",
    "consider",
    "greet",
    "study",
)
_SEMI_NOVEL_WORDS = (
    "wall",
    "floor",
    "ceiling",
    "sky",
    "ground",
    "air",
    "dust",
    "shadow",
    "light",
    "door",
    "window",
    "corner",
    "noise",
    "smell",
    "me",
    "myself",
    "hands",
    "feet",
    "clothes",
    "sound",
    "path",
    "grass",
    "stone",
    "rock",
    "tree",
    "water",
    "zorgle",
    "blimfoo",
    "quaxxle",
    "snerd",
    "plonk",
    "wibbet",
)
TOGGLES = (("take", "drop"), ("open", "close"), ("wear", "remove"), ("turn on", "turn off"))
"""Busy camping: a command that changes a small thing about an object, and the one that undoes it."""
FIDGETS = ("examine", "push", "pull", "touch", "look under")
"""Busy camping: commands about an object that change nothing, said between the toggles."""
BUSY_OBJECTS = 4
"""Busy camping: the things at hand (in the room and carried) a room needs to count as busy."""
_SEMI_NOVEL_PHRASES = ("xyzzq", "hmm", "what now", "help me", "think hard", "blorple the snerd", "be patient")


@dataclass
class Trajectory:
    game: str
    kind: str
    variant: str
    commands: list[str]
    prefix_turns: int = 0
    """Stuck kinds: healthy turns before the loop starts (the loop starts at turn prefix_turns + 1)."""
    healthy_until: int = 0
    """Healthy kinds: the last turn of healthy play (no stop before it may be a loop break)."""
    clean_score: int | None = None
    """Healthy kinds: plain Jericho's final score of the clean walkthrough."""
    script_score: int | None = None
    """Healthy kinds: plain Jericho's final score of this script."""
    loop_rooms: set[int] = field(default_factory=set)

    @property
    def name(self) -> str:
        return f"{self.game}/{self.kind}/{self.variant}"

    @property
    def loop_start(self) -> int:
        return self.prefix_turns + 1


@dataclass(frozen=True)
class Outcome:
    """What a step leaves that decides whether a trajectory is still on track."""

    room: int | None
    score: int
    inventory: tuple[int, ...]
    over: bool

    @classmethod
    def of(cls, view: GameView) -> Outcome:
        return cls(
            view.room_id, view.score, tuple(sorted(o.num for o in view.inventory)), view.game_over or view.victory
        )


class Explorer:
    """A Jericho session that can try commands on a snapshot (restored exactly, RNG included)."""

    def __init__(self, story: Path, seed: int | None = None):
        self.session = JerichoSession(story, seed=seed)
        self.view = self.session.reset()
        self.game = self.session.game_name

    def play(self, command: str) -> GameView:
        self.view = self.session.step(command)
        return self.view

    def save(self) -> tuple:
        return self.session.snapshot(), self.view

    def load(self, saved: tuple) -> None:
        self.session.restore(saved[0])
        self.view = saved[1]

    @contextmanager
    def trial(self) -> Iterator[None]:
        """Play freely inside: the state (RNG included) and the view come back after."""
        saved = self.save()
        try:
            yield
        finally:
            self.load(saved)

    def attempt(self, commands: list[str]) -> list[GameView]:
        """The views each command leaves, played from here on a snapshot; the state is restored after (on a fresh
        emulator when one crashed the C core: its view and the rest read as the game over, a dead end)."""
        views: list[GameView] = []
        with self.trial():
            for command in commands:
                try:
                    views.append(self.session.step(command))
                except EmulatorFailed:
                    ended = replace(views[-1] if views else self.view, game_over=True)
                    return views + [ended] * (len(commands) - len(views))
        return views

    def exits(self) -> dict[str, int]:
        """Direction -> room for every direction that leads, alive, to another room from here."""
        found: dict[str, int] = {}
        here = self.view.room_id
        for direction in DIRECTIONS:
            after = self.attempt([direction])[0]
            if after.room_id not in (None, here) and not after.game_over and after.score == self.view.score:
                found[direction] = after.room_id
        return found

    def way_back(self, direction: str, origin: int) -> str | None:
        """From the room `direction` leads to, a direction that returns to `origin` (the opposite first)."""
        for back in [OPPOSITE[direction]] + [d for d in DIRECTIONS if d != OPPOSITE[direction]]:
            views = self.attempt([direction, back])
            if views[1].room_id == origin and not views[1].game_over and views[1].score == self.view.score:
                return back
        return None


def stuck_target(kind: str) -> int:
    """Turns from a stuck loop's start by which it must end (TARGETS, by its kind)."""
    if kind in PURE_REPETITION:
        return TARGETS["pure_repetition"]
    return TARGETS["semi_novel"] if kind in SEMI_NOVEL else TARGETS["stuck"]


# -- healthy ---------------------------------------------------------------------------------------------------
def walkthrough(story: Path) -> list[str]:
    return JerichoSession(story).walkthrough()


def optimal(story: Path) -> Trajectory | None:
    commands = walkthrough(story)
    if not commands:
        return None
    outcomes = clean_outcomes(story, commands)
    score = outcomes[-1].score if outcomes else 0
    game = JerichoSession(story).game_name
    return Trajectory(
        game, "optimal", "walkthrough", commands, healthy_until=len(commands), clean_score=score, script_score=score
    )


def clean_outcomes(story: Path, commands: list[str]) -> list[Outcome]:
    """The outcome of every walkthrough step in plain Jericho."""
    explorer = Explorer(story)
    return [Outcome.of(explorer.play(command)) for command in commands]


def noisy(story: Path, factor: int, seed: int) -> Trajectory | None:
    """The walkthrough with detours, built block by block: a block's detours are kept only when the whole rest of
    the walkthrough, played from the end of the block, still scores exactly as the clean one; otherwise the block is
    built again with half as many detours (none at last, which always holds)."""
    commands = walkthrough(story)
    if not commands:
        return None
    clean = clean_outcomes(story, commands)
    explorer = Explorer(story)
    script: list[str] = []
    step_turns: list[int] = []
    for start in range(0, len(commands), CHECK_EVERY_STEPS):
        end = min(start + CHECK_EVERY_STEPS, len(commands))
        saved = explorer.save()
        for attempt, density in enumerate((1.0, 0.5, 0.25, 0.0)):
            explorer.load(saved)
            rng = random.Random(f"{story.name}:{factor}:{seed}:{start}:{attempt}")
            block, turns, on_track = _noisy_block(explorer, commands, clean, start, end, factor * density, rng)
            if density == 0.0 or (on_track and _still_wins(explorer, [], commands[end:], clean[end:], None)):
                break
        step_turns += [len(script) + turn for turn in turns]
        script += block
        if explorer.view.game_over or explorer.view.victory:
            break
    healthy_until, final = _verify(story, script, commands, step_turns, clean)
    return Trajectory(
        explorer.game,
        "noisy",
        f"factor {factor}, seed {seed}",
        script,
        healthy_until=healthy_until,
        clean_score=clean[-1].score,
        script_score=final,
    )


def _noisy_block(explorer, commands, clean, start, end, factor, rng) -> tuple[list[str], list[int], bool]:
    """Walkthrough steps start..end-1 with detours: (commands, the turn within the block of each step, whether every
    step scored as in the clean walkthrough)."""
    block: list[str] = []
    turns: list[int] = []
    on_track = True
    for index in range(start, end):
        count = rng.randint(0, round(2 * factor)) if factor else 0
        for _ in range(count):
            detour = _harmless_detour(explorer, commands[index:], clean[index:], rng)
            for step in detour:
                explorer.play(step)
            block += detour
        view = explorer.play(commands[index])
        block.append(commands[index])
        turns.append(len(block))
        ended = view.game_over or view.victory
        on_track = on_track and view.score == clean[index].score and ended == clean[index].over
        if ended:
            break
    return block, turns, on_track


def _still_wins(
    explorer: Explorer, detour: list[str], rest: list[str], clean: list[Outcome], horizon: int | None = LOOKAHEAD_STEPS
) -> bool:
    """Whether, after `detour`, the next `horizon` walkthrough steps (all when None) still score exactly as in the
    clean walkthrough, ending where it ends. Played on a snapshot with the bare emulator (fast), then restored:
    detours shift time and the random numbers a later fight or thief draws, so the next step alone cannot tell."""
    session = explorer.session
    snapshot = session.snapshot()
    limit = len(rest) if horizon is None else horizon

    def play(command: str) -> tuple[int, bool, bool]:
        """(score, game over, ended) after `command`: the bare emulator where Jericho's bindings read them (one call:
        a step's answer says whether the game ended, won or lost, and its score), else the session's own reading
        (session.status)."""
        if session.supported:
            _, _, ended, info = session.env.step(command)
            return info["score"], ended and session.env.game_over(), ended
        view = session.step(command)
        return view.score, view.game_over, view.game_over or view.victory

    try:
        for command in detour:
            if play(command)[1]:
                return False
        lost = False
        for command, expected in zip(rest[:limit], clean[:limit]):
            score, lost, ended = play(command)
            if score != expected.score or (expected.over and not ended):
                return False
        return not lost or (len(rest) <= limit and bool(clean) and clean[-1].over)
    except EmulatorFailed:  # the detour leads the C core to crash (hollywood's crawl space): no detour to keep
        return False
    finally:
        session.restore(snapshot)


def _harmless_detour(explorer: Explorer, rest: list[str], clean: list[Outcome], rng: random.Random) -> list[str]:
    """A detour that leaves room, score and inventory as they were and the walkthrough still winning."""
    view = explorer.view
    nouns = [obj.noun for obj in view.room_objects + view.inventory if obj.noun.isalpha()]
    before = Outcome.of(view)
    for _ in range(4):
        kind = rng.choice(("look", "inventory", "examine", "wrong_verb", "neighbour"))
        if kind == "look":
            detour = ["look"]
        elif kind == "inventory":
            detour = ["inventory"]
        elif kind == "examine" and nouns:
            detour = [f"examine {rng.choice(nouns)}"]
        elif kind == "wrong_verb":
            if nouns and rng.random() < 0.5:
                detour = [f"{rng.choice(_WRONG_OBJECT_VERBS)} {rng.choice(nouns)}"]
            else:
                detour = [rng.choice(_WRONG_VERBS)]
        elif kind == "neighbour" and view.room_id is not None:
            exits = explorer.exits()
            if not exits:
                continue
            direction = rng.choice(sorted(exits))
            back = explorer.way_back(direction, view.room_id)
            if back is None:
                continue
            detour = [direction, back]
        else:
            continue
        if Outcome.of(explorer.attempt(detour)[-1]) == before and _still_wins(explorer, detour, rest, clean):
            return detour
    return []


def _verify(story, script, commands, step_turns, clean) -> tuple[int, int]:
    """(healthy_until, final score) of a noisy script replayed in plain Jericho."""
    explorer = Explorer(story)
    outcomes = [Outcome.of(explorer.play(command)) for command in script]
    final = outcomes[-1].score if outcomes else 0
    if len(step_turns) == len(commands) and final == clean[-1].score:
        return len(script), final
    for index, turn in enumerate(step_turns):
        if outcomes[turn - 1] != clean[index]:
            previous = step_turns[index - 1] if index else 0
            return previous, final
    return len(script), final


# -- stuck -----------------------------------------------------------------------------------------------------
def stuck(story: Path, kind: str, cut: float, seed: int = 0, length: int = LOOP_LENGTH) -> Trajectory | None:
    """A walkthrough prefix (cut at `cut` of its steps, moved on to the next step that leaves the player free to
    move, unless the walkthrough never walks: a game of one room) and a loop of `kind`; None when this game gives no
    such loop there."""
    commands = walkthrough(story)
    explorer = Explorer(story)
    prefix: list[str] = []
    visited = {explorer.view.room_id}
    target = int(len(commands) * cut)
    walks = any(direction_of(command) is not None for command in commands)
    for index, command in enumerate(commands):
        if index >= target and explorer.view.room_id is not None and (not walks or explorer.exits()):
            break
        explorer.play(command)
        prefix.append(command)
        visited.add(explorer.view.room_id)
        if explorer.view.game_over or explorer.view.victory:
            return None
    builder = _BUILDERS[kind]
    rng = random.Random(f"{story.name}:{kind}:{cut}:{seed}")
    loop = builder(explorer, rng, length, visited - {None})
    if not loop:
        return None
    rooms = _rooms_along(explorer, loop)
    return Trajectory(explorer.game, kind, f"cut {cut:.2f}", prefix + loop, prefix_turns=len(prefix), loop_rooms=rooms)


def _rooms_along(explorer: Explorer, loop: list[str]) -> set[int]:
    rooms = {explorer.view.room_id}
    for view in explorer.attempt(loop):
        rooms.add(view.room_id)
    return rooms - {None}


def _repeat(body: list[str], length: int) -> list[str]:
    return [body[i % len(body)] for i in range(length)] if body else []


def _ab(explorer: Explorer, rng: random.Random, length: int, visited: set[int]) -> list[str]:
    here = explorer.view.room_id
    for direction in sorted(explorer.exits(), key=lambda d: rng.random()):
        back = explorer.way_back(direction, here)
        if back is not None:
            return _repeat([direction, back], length)
    return []


def _paths(explorer: Explorer, depth: int, allowed: set[int] | None, rng: random.Random) -> Iterator[list[str]]:
    """Simple paths of `depth` moves from here (rooms all distinct, each step reversible), found depth-first."""

    def extend(path: list[str], rooms: list[int]) -> Iterator[list[str]]:
        if len(path) == depth:
            yield path
            return
        with explorer.trial():
            for step in path:
                explorer.play(step)
            exits = explorer.exits()
            options = sorted(exits, key=lambda d: rng.random())
            backs = {d: explorer.way_back(d, explorer.view.room_id) for d in options}
        for direction in options:
            room = exits[direction]
            if room in rooms or backs[direction] is None or (allowed is not None and room not in allowed):
                continue
            yield from extend(path + [direction], rooms + [room])

    yield from extend([], [explorer.view.room_id])


def _out_and_back(explorer: Explorer, path: list[str]) -> list[str]:
    """The path, then the way back along it (each step's return direction, found on a snapshot)."""
    backs = []
    with explorer.trial():
        for step in path:
            backs.append(explorer.way_back(step, explorer.view.room_id))
            explorer.play(step)
    return path + [b for b in reversed(backs) if b] if all(backs) else []


def _line(explorer, rng, length, visited) -> list[str]:
    for moves in (rng.choice((2, 3, 4)), 2):
        for path in _paths(explorer, moves, None, rng):
            body = _out_and_back(explorer, path)
            if body:
                return _repeat(body, length)
    return []


def _wandering(explorer, rng, length, visited) -> list[str]:
    for moves in (rng.choice((6, 7, 8, 9)), 5, 4):
        for path in _paths(explorer, moves, visited, rng):
            body = _out_and_back(explorer, path)
            if body:
                return _repeat(body, length)
            break
    return []


def _random_walk(explorer, rng, length, visited) -> list[str]:
    region = {explorer.view.room_id}
    for path in _paths(explorer, 3, None, rng):
        region |= set(_rooms_along(explorer, path))
        if len(region) >= 4:
            break
    if len(region) < 3:
        return []
    moves: list[str] = []
    with explorer.trial():
        for _ in range(length):
            exits = {d: r for d, r in explorer.exits().items() if r in region}
            if not exits:
                break
            direction = rng.choice(sorted(exits))
            moves.append(direction)
            explorer.play(direction)
    return moves if len(moves) == length else []


def _nouns(explorer: Explorer) -> list[str]:
    """Nouns of the things at hand: the last words of their short names. A game whose object table names none of
    the things here (TextWorld's: Inform 7 prints their names from elsewhere) gives them in its own words instead
    (`_printed_nouns`, of what `look` and `inventory` print)."""
    if _nameless(explorer):
        return _printed_nouns(explorer, ("look", "inventory"))
    return sorted({obj.noun for obj in explorer.view.room_objects + explorer.view.inventory if obj.noun.isalpha()})


def _nameless(explorer: Explorer) -> bool:
    """Things are at hand (in the room besides the player, or carried) and the object table names none of them."""
    view, player = explorer.view, explorer.session.player
    world, room = view.world, view.room_id
    if world is None or room is None or view.room_objects or view.inventory:
        return False
    return bool(set(world.contents(room)) - {player}) or bool(player and world.contents(player))


def _printed_nouns(explorer: Explorer, looks: tuple[str, ...], most: int = 8) -> list[str]:
    """Words that `looks` print, that the game's dictionary holds and that `examine` takes as a thing in sight
    (its answer not a failure to find or parse it), one word to each answer: the first `most` printed, sorted."""
    limit = explorer.session.dictionary_word_length
    known = {entry.word for entry in explorer.session.dictionary()}
    printed = [word for view in explorer.attempt(list(looks)) for word in re.findall(r"[a-z]+", view.text.lower())]
    found: dict[str, str] = {}
    for word in dict.fromkeys(printed):
        if len(found) == most or word in DIRECTION_WORDS or word in FUNCTION_WORDS or word[:limit] not in known:
            continue
        answer = explorer.attempt([f"examine {word}"])[0].text.strip()
        text = answer.lower()
        failed = not_at_hand(text) or unknown_word(text) or any(phrase in text for phrase in PARSER_PHRASES)
        if answer and not failed and answer not in found:
            found[answer] = word
    return sorted(found.values())


def _unchanging(explorer: Explorer, commands: list[str], ignored: frozenset[int]) -> list[str]:
    """The commands that, tried one at a time from here, change nothing that one idle turn (`look`) would not:
    the same room, score, inventory, objects and attributes (but the `ignored` ones: `_listing_flags`)."""
    idle = explorer.attempt(["look"])[0]
    kept = []
    for command in commands:
        after = explorer.attempt([command])[0]
        if Outcome.of(after) == Outcome.of(idle) and _same_objects(after, idle, ignored):
            kept.append(command)
    return kept


def _same_objects(a: GameView, b: GameView, ignored: frozenset[int] = frozenset()) -> bool:
    """The same object tree and attributes, the `ignored` attribute numbers left out."""
    if a.world is None or b.world is None:
        return True
    mask = attribute_mask(a.world.attributes.shape[1], ignored)
    same_attributes = ((a.world.attributes & mask) == (b.world.attributes & mask)).all()
    return bool((a.world.parents == b.world.parents).all() and same_attributes)


def _listing_flags(explorer: Explorer) -> frozenset[int]:
    """The attributes a game without Jericho's bindings sets on what it prints (`Shadow.listing_attributes`),
    which the harness does not count as changes either; none for a game with bindings, whose builders compare every
    attribute."""
    session = explorer.session
    return frozenset() if session.supported else session.shadow.listing_attributes(session.env)


def _camping(explorer, rng, length, visited) -> list[str]:
    looks = ["look"] + [f"examine {noun}" for noun in _nouns(explorer)[:2]] + ["inventory"]
    body = _unchanging(explorer, looks, _listing_flags(explorer))
    return _repeat(body, length) if len(body) >= 2 else []


def _puzzle_retry(explorer, rng, length, visited) -> list[str]:
    nouns = _nouns(explorer)
    ignored = _listing_flags(explorer)  # the same from here for every noun tried
    for noun in sorted(nouns, key=lambda n: rng.random()):
        tries = [
            f"open {noun}",
            f"push {noun}",
            f"pull {noun}",
            f"turn {noun}",
            f"open the {noun}",
            f"move {noun}",
            f"unlock {noun}",
            f"break {noun}",
        ]
        body = _unchanging(explorer, tries, ignored)
        if len(body) >= 3:
            return _repeat(body[:5], length)
    return []


def _inventory_juggling(explorer, rng, length, visited) -> list[str]:
    held = [obj.noun for obj in explorer.view.inventory if obj.noun.isalpha()]
    held = (_printed_nouns(explorer, ("inventory",)) if _nameless(explorer) else held)[:2]
    body: list[str] = []
    for noun in held:
        views = explorer.attempt(body + [f"drop {noun}", f"take {noun}"])
        if views[-1].room_id == explorer.view.room_id and Outcome.of(views[-1]) == Outcome.of(explorer.view):
            body += [f"drop {noun}", f"take {noun}"]
    return _repeat(body, length) if body else []


def _semi_novel(explorer, rng, length, visited) -> list[str]:
    """A new command every turn, in this room and a neighbour the prefix visited, none changing the world."""
    return _trying(explorer, rng, length, visited, walk=lambda commands: len(commands) % 12 == 11)


def _semi_novel_walking(explorer, rng, length, visited) -> list[str]:
    """The same, walking to the neighbour and back after every two tries."""
    return _trying(explorer, rng, length, visited, walk=lambda commands: len(commands) % 4 == 2)


def _trying(explorer, rng, length, visited, walk) -> list[str]:
    """New commands that change nothing, with a step to a visited neighbour and back whenever `walk(commands)`."""
    here = explorer.view.room_id
    exits = {d: r for d, r in explorer.exits().items() if r in visited}
    step = next(((d, b) for d in sorted(exits) if (b := explorer.way_back(d, here))), None)
    nouns = _nouns(explorer)
    pool = [f"{verb} {noun}" for verb in _SEMI_NOVEL_VERBS for noun in nouns + list(_SEMI_NOVEL_WORDS)]
    rng.shuffle(pool)
    pool = list(_SEMI_NOVEL_PHRASES) + pool
    ignored = _listing_flags(explorer)
    commands: list[str] = []
    with explorer.trial():
        while len(commands) < length and pool:
            if step and walk(commands):
                commands += list(step)
                for move in step:
                    explorer.play(move)
                continue
            candidate = pool.pop()
            if _unchanging(explorer, [candidate], ignored):
                commands.append(candidate)
                explorer.play(candidate)
    return commands[:length] if len(commands) >= length else []


def _waiting(explorer, rng, length, visited) -> list[str]:
    return ["wait"] * length


def _busy_camping(explorer, rng, length, visited) -> list[str]:
    """Toggles and fidgets on the things at hand, the next one drawn at random."""
    found = _busy_room(explorer)
    if found is None:
        return []
    toggles, fidgets, ignored = found

    def propose(step: int) -> tuple[int | None, str]:
        if fidgets and rng.random() < 0.25:
            return None, rng.choice(fidgets)
        return rng.randrange(len(toggles)), ""

    return _camp(explorer, length, propose, toggles, ignored)


def _busy_round(explorer, rng, length, visited) -> list[str]:
    """Toggles and fidgets on the things at hand in the same order every round: every object changed, a fidget
    after every two, then everything undone in reverse order."""
    found = _busy_room(explorer)
    if found is None:
        return []
    toggles, fidgets, ignored = found
    order = list(range(len(toggles)))
    rng.shuffle(order)
    body: list[tuple[int | None, str]] = []
    for position, index in enumerate(order + order[::-1]):
        body.append((index, ""))
        if fidgets and position % 2 == 1:
            body.append((None, fidgets[position // 2 % len(fidgets)]))
    return _camp(explorer, length, lambda step: body[step % len(body)], toggles, ignored)


def _busy_room(explorer: Explorer) -> tuple[list[tuple[str, str]], list[str], frozenset[int]] | None:
    """(toggles that work here, fidgets that change nothing here, the listing flags that compare left out) when the
    room is busy: BUSY_OBJECTS things at hand, toggles on two of them at least. A toggle is a command that changes
    some object's place or attributes, which an idle turn would not, and the command that puts everything back (the
    room, score and inventory too)."""
    nouns = _nouns(explorer)
    if len(nouns) < BUSY_OBJECTS:
        return None
    ignored = _listing_flags(explorer)
    idle = explorer.attempt(["look", "look"])
    toggles = []
    for noun in nouns:
        for pair in TOGGLES:
            for do, undo in (pair, pair[::-1]):  # what is carried is dropped first, what is open closed first
                views = explorer.attempt([f"{do} {noun}", f"{undo} {noun}"])
                changed = not _same_objects(views[0], idle[0], ignored)
                kept = all(
                    v.room_id == explorer.view.room_id and v.score == explorer.view.score and not v.game_over
                    for v in views
                )
                undone = Outcome.of(views[1]) == Outcome.of(idle[1]) and _same_objects(views[1], idle[1], ignored)
                if changed and kept and undone:
                    toggles.append((f"{do} {noun}", f"{undo} {noun}"))
                    break
    if len({toggle.split()[-1] for toggle, _ in toggles}) < 2:
        return None
    fidgets = _unchanging(explorer, [f"{verb} {noun}" for noun in nouns for verb in FIDGETS], ignored)
    return toggles, fidgets, ignored


def _camp(explorer, length, propose, toggles, ignored) -> list[str]:
    """Play `propose(step)`'s choices on a snapshot: (a toggle's index, "") says its next half, (None, command) a
    fidget. A command is kept only when it leaves the room and score as they were, the game going, and every toggle's
    next half still changing something (turning off the only light leaves the player in the dark, where nothing
    works: another loop); a toggle that fails the first two is dropped from then on, one that fails the last five
    times too."""
    start = explorer.view
    commands: list[str] = []
    done = [False] * len(toggles)
    dropped: set[int | None] = set()
    failures: Counter[int | None] = Counter()
    with explorer.trial():
        for step in range(20 * length):
            if len(commands) == length or len(dropped - {None}) == len(toggles):
                break
            index, command = propose(step)
            if index in dropped:
                continue
            command = toggles[index][done[index]] if index is not None else command
            before = explorer.save()
            after = explorer.play(command)
            if after.room_id != start.room_id or after.score != start.score or after.game_over or after.victory:
                explorer.load(before)
                dropped.add(index)
                continue
            flipped = index is not None and not _same_objects(after, before[1], ignored)
            if flipped:
                done[index] = not done[index]
            if not _all_working(explorer, toggles, done, dropped, ignored):
                explorer.load(before)
                if flipped:
                    done[index] = not done[index]
                failures[index] += 1
                if failures[index] == 5:
                    dropped.add(index)
                continue
            commands.append(command)
    return commands if len(commands) == length else []


def _all_working(explorer: Explorer, toggles: list[tuple[str, str]], done: list[bool], dropped: set, ignored) -> bool:
    """Every toggle not dropped changes some object when its next half is said now."""
    idle = explorer.attempt(["look"])[0]
    return all(
        not _same_objects(explorer.attempt([toggle[done[index]]])[0], idle, ignored)
        for index, toggle in enumerate(toggles)
        if index not in dropped
    )


_BUILDERS = {
    "ab": _ab,
    "line": _line,
    "random_walk": _random_walk,
    "camping": _camping,
    "puzzle_retry": _puzzle_retry,
    "inventory_juggling": _inventory_juggling,
    "wandering": _wandering,
    "semi_novel": _semi_novel,
    "semi_novel_walking": _semi_novel_walking,
    "waiting": _waiting,
    "busy_camping": _busy_camping,
    "busy_round": _busy_round,
}
