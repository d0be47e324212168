"""Restoring a turn exactly: `JerichoSession.restore` against Jericho's bare `set_state` and a replay from reset.

    uv run python -m benchmarks.studies.restore [--games ../shared/games] [--points 10] [--out docs/results/restore.md]

For each story file, the session plays the game's Jericho walkthrough (UNGUIDED where it has none) and stops at
`--points` turns spread over it. At each, it takes a snapshot, plays CONTINUATION turns (the walkthrough's next
steps, then dice), and then twice brings the game back and plays the same turns again:

- `restore`: `JerichoSession.restore(snapshot)`, which says whether its snapshot held (`state`) or it had to replay
  the commands on a fresh emulator (`replay`);
- `replay`: `JerichoSession.restore(snapshot, replay=True)`: a fresh emulator replays every command since reset.

Beside them, after every turn and the next command, Jericho's bare `FrotzEnv.set_state` of the state between them,
then that command again: does it give the same response, and leave the same state, as the first time?

A way is exact at a point when the turns played after it give the same responses, and leave the same emulator state
(`state_digest`: memory, the live stack, registers, the random-number generator), as the first time. Times are the
mean of the points (snapshot, restore and replay each timed alone); the snapshot's size is `Snapshot.size`.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

from benchmarks import cli
from playthroughs.restore_commands import DICE, UNGUIDED
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.snapshots import state_digest
from session.story_file import STORY_SUFFIXES, start_emulator
from session.tables import markdown_table

CONTINUATION = 10
"""Walkthrough steps played after each snapshot, before each way back."""


@dataclass
class GameRow:
    game: str
    turns: int
    """Commands the session played (the walkthrough, or UNGUIDED)."""
    bare_text: int = 0
    """Turns after which `set_state` alone gave the next command's response exactly."""
    bare_state: int = 0
    """Turns after which `set_state` alone gave the state the next command left the first time."""
    first_difference: str = ""
    """Where `set_state` alone first answered differently: the turn and the two responses' starts."""
    points: list[int] = field(default_factory=list)
    exact: dict[str, int] = field(default_factory=lambda: {"restore": 0, "replay": 0})
    """Points at which `restore` and a forced replay gave back the game exactly."""
    methods: dict[str, int] = field(default_factory=dict)
    """How `restore` brought the snapshots back (Restored), and how often."""
    snapshot_ms: list[float] = field(default_factory=list)
    restore_ms: list[float] = field(default_factory=list)
    replay_ms: list[float] = field(default_factory=list)
    emulator_ms: list[float] = field(default_factory=list)
    """A new emulator started and reset: the part of a replay that does not grow with the turns."""
    sizes: list[int] = field(default_factory=list)


def _continue(session: JerichoSession, commands: list[str]) -> tuple[list[str], str]:
    texts = [session.step(c).text for c in commands]
    return texts, state_digest(session.env.get_state())


def _timed(call):
    started = time.perf_counter()
    result = call()
    return result, 1000 * (time.perf_counter() - started)


def measure(story: Path, points: int) -> GameRow:
    session = JerichoSession(story)
    commands = session.walkthrough() or list(UNGUIDED)
    row = GameRow(story.name, len(commands))
    spacing = max(1, len(commands) // (points + 1))
    row.points = sorted({min(len(commands) - 1, spacing * i) for i in range(1, points + 1)})
    session.reset()
    for turn, next_command in enumerate(commands):
        if turn in row.points:
            _point(session, commands, turn, row)
        state = session.env.get_state()  # set_state alone, then the next command: does it answer as it did?
        first = session.step(next_command).text, state_digest(session.env.get_state())
        after = session.snapshot()
        session.env.set_state(state)
        again = session.env.step(next_command)[0], state_digest(session.env.get_state())
        row.bare_text += again[0] == first[0]
        row.bare_state += again[1] == first[1]
        if again != first and not row.first_difference:
            row.first_difference = f"turn {turn + 1} ({next_command!r}): {first[0][:20]!r} then {again[0][:20]!r}"
        session.restore(after)  # the game as it was, whatever set_state left
    for _ in range(3):
        emulator, ms = _timed(lambda: start_emulator(story, None))
        emulator.reset()
        row.emulator_ms.append(ms)
        emulator.close()
    session.close()
    return row


def _point(session: JerichoSession, commands: list[str], turn: int, row: GameRow) -> None:
    """Snapshot, play on, and bring the game back both ways, each followed by the same turns."""
    snap, ms = _timed(session.snapshot)
    row.snapshot_ms.append(ms)
    row.sizes.append(snap.size)
    continuation = commands[turn : turn + CONTINUATION] + list(DICE)
    first = _continue(session, continuation)
    for way, replay, times in (("restore", False, row.restore_ms), ("replay", True, row.replay_ms)):
        (_, how), ms = _timed(lambda: session.restore(snap, replay=replay))  # noqa: B023 (called at once)
        times.append(ms)
        if way == "restore":
            row.methods[how] = row.methods.get(how, 0) + 1
        if _continue(session, continuation) == first:
            row.exact[way] += 1
    session.restore(snap)


def markdown(rows: list[GameRow], how: str, at: str) -> str:
    lines = [
        "# Restoring a turn exactly (benchmarks/studies/restore.py)",
        "",
        f"Command: `{how}`  ",
        f"Commit: {at}. `set_state`: after every turn of the walkthrough and the next command, Jericho's bare "
        "FrotzEnv.set_state of the state between them, then that command again: how often it gave the same response, "
        "and left the same state, as the first time. At each point (turns spread over the walkthrough): a snapshot, "
        f"{CONTINUATION} walkthrough steps and {len(DICE)} dice commands, then the game brought back two ways and "
        "the same turns played again: "
        "`restore` is JerichoSession.restore (its method: `state`, the snapshot held; `replay`, it was replayed), "
        "`replay` forces a fresh emulator to replay every command since reset. Exact: the same responses and "
        "emulator state (memory, live stack, registers, random numbers) as the first time. Times: mean ms; a "
        "replay's includes starting a new emulator (`new emulator`); size: mean KB of a snapshot.",
        "",
    ]
    columns = (
        "game",
        "walkthrough",
        "set_state: same response, state",
        "points (mean turn)",
        "restore exact (method)",
        "replay exact",
        "snapshot ms",
        "restore ms",
        "replay ms",
        "new emulator ms",
        "size KB",
    )
    games = []
    for r in rows:
        n = len(r.points)
        methods = ", ".join(f"{m} {c}" for m, c in sorted(r.methods.items()))
        games.append(
            (
                r.game,
                r.turns,
                f"{r.bare_text}, {r.bare_state}",
                f"{n} ({mean(r.points):.0f})",
                f"{r.exact['restore']}/{n} ({methods})",
                f"{r.exact['replay']}/{n}",
                f"{mean(r.snapshot_ms):.2f}",
                f"{mean(r.restore_ms):.2f}",
                f"{mean(r.replay_ms):.1f}",
                f"{mean(r.emulator_ms):.1f}",
                f"{mean(r.sizes) / 1024:.1f}",
            )
        )
    lines += markdown_table(columns, games)
    turns, points = sum(r.turns for r in rows), sum(len(r.points) for r in rows)
    lines += [
        "",
        f"All {len(rows)} games, {turns} turns: after `set_state` alone the next command answered as the first time "
        f"{sum(r.bare_text for r in rows)} times, left the same state {sum(r.bare_state for r in rows)} times; "
        f"`restore` exact at {sum(r.exact['restore'] for r in rows)} of {points} points, a forced replay at "
        f"{sum(r.exact['replay'] for r in rows)}. Mean ms: snapshot {mean(t for r in rows for t in r.snapshot_ms):.2f}"
        f", restore {mean(t for r in rows for t in r.restore_ms):.2f}, replay "
        f"{mean(t for r in rows for t in r.replay_ms):.1f}.",
    ]
    inexact = [r for r in rows if r.first_difference]
    if inexact:
        lines += ["", "Where `set_state` alone answered differently (the first turn; the response, then after it):", ""]
        lines += [
            f"- {r.game}: {r.turns - r.bare_text} responses, {r.turns - r.bare_state} states; {r.first_difference}"
            for r in inexact
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_games(parser)
    cli.add_only(parser, default="", help="comma-separated story files in --games (default: all)")
    parser.add_argument("--points", type=int, default=10, help="snapshots per game, spread over its walkthrough")
    cli.add_out(parser, help="also write the table to this markdown file, with the command and commit")
    args = parser.parse_args(argv)
    only = {name for name in args.only.split(",") if name}
    stories = sorted(
        p for p in Path(args.games).iterdir() if p.suffix in STORY_SUFFIXES and (not only or p.name in only)
    )
    rows = []
    for story in stories:
        rows.append(measure(story, args.points))
        print(f"{story.name}: {rows[-1].exact}", flush=True)
    table = markdown(rows, command("benchmarks.studies.restore", argv), commit())
    print(table)
    if args.out:
        Path(args.out).write_text(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
