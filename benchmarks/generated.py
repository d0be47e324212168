"""Fresh games nobody tuned on: TextWorld makes Z-machine games from seeds, and the corpus benchmark plays them.

    uv run python -m benchmarks.generated --out docs/results/generated        # 20 quests and 20 cooking games
    uv run python -m benchmarks.generated --quests 2 --cooking 2 --seeds 101,102 --kinds optimal --out /tmp/gen

Every rule of the loop break was chosen on the 29 games of the corpus; TextWorld (Microsoft's text-game generator,
the `textworld` dependency group) makes games none of them was chosen on, each with its walkthrough and its maximum
score. Seeds are drawn anew for every run unless `--seeds` gives them, so a run checks games no one has seen; the
results file names them, so any run can be made again.

1. **Make**: `tw-make custom` (quests: a world of rooms and objects, one quest through it) and `tw-make tw-cooking`
   (gather, cook and cut a recipe's ingredients, then eat the meal), at several sizes. Jericho has no bindings for
   these games: the session reads them as a player sees them (session.status). Each game's walkthrough is written
   beside it as `<game>.walkthrough` (JerichoSession.walkthrough reads it).
2. **Walkthroughs as such**: each walkthrough through the harness as `main.py --agent walkthrough` plays it (the
   wiring, the default configuration): it must end in `victory` with the game's full score, and count the rooms
   it walked (the distinct room titles the game printed, read from plain Jericho's text).
3. **The corpus benchmark's runs** (benchmarks/corpus.py) on the same games: optimal and noisy walkthroughs
   (healthy: no stop, no warning), the stuck kinds cut from them (each must end within its target), and the
   walkthrough through the LLM path (every step run as written).

Writes `generated.json` (the games, their seeds and every run) and `generated.md`.
"""

from __future__ import annotations

import argparse
import json
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from loguru import logger

from benchmarks import corpus
from orchestration.wiring import RunOptions, build_orchestrator
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession
from session.provenance import command, commit
from session.records import read_summary
from session.story_file import WALKTHROUGH_SUFFIX
from session.tables import markdown_table

QUEST_SIZES = ((6, 12, 6), (8, 15, 10), (10, 20, 12), (12, 25, 15))
"""`tw-make custom`: (world size, objects, quest length), taken in turn."""
COOKING_SIZES = ((1, 1, 1), (2, 2, 6), (3, 3, 9), (4, 4, 12))
"""`tw-make tw-cooking`: (recipe ingredients, ingredients to take, rooms: 1, 6, 9 or 12), taken in turn, every skill
on (open, cook, cut, drop)."""
MAKE_SECONDS = 180
"""How long one game may take to make; TextWorld's generator can search for a quest for a long time on some seeds,
and such a seed is replaced by the next."""
TITLE = re.compile(r"^-= (.{1,60}) =-$", re.MULTILINE)
"""How TextWorld prints a room's title on arrival."""


@dataclass(frozen=True)
class Generated:
    """A made game: where it is, how it was made, its walkthrough and its maximum score (from TextWorld's json)."""

    path: str
    kind: str
    """`quest` or `cooking`."""
    seed: int
    options: tuple[str, ...]
    steps: int
    max_score: int


def tw_make() -> str:
    """The `tw-make` command of this environment."""
    found = Path(sys.executable).with_name("tw-make")
    if found.is_file():
        return str(found)
    on_path = shutil.which("tw-make")
    if on_path is None:
        raise ConfigError("tw-make not found: install the textworld dependency group (uv sync)")
    return on_path


def read_game(path: Path, kind: str, seed: int, options: tuple[str, ...]) -> Generated:
    """A made game, from TextWorld's json beside it; writes its walkthrough beside it (`<game>.walkthrough`)."""
    data = json.loads(path.with_suffix(".json").read_text())
    metadata = data.get("metadata") or {}
    quests = data.get("quests") or []
    walkthrough = metadata.get("walkthrough") or [c for quest in quests for c in quest.get("commands", [])]
    max_score = metadata.get("max_score") or sum(quest.get("reward", 0) for quest in quests)
    path.with_suffix(WALKTHROUGH_SUFFIX).write_text("\n".join(walkthrough) + "\n")
    return Generated(str(path), kind, seed, options, len(walkthrough), int(max_score))


def made_before(folder: Path) -> list[Generated]:
    """The games an earlier run made into `folder` (`--games`), named `<kind>-<seed>.z8`."""
    games = []
    for path in sorted(folder.glob("*.z8")):
        kind, _, seed = path.stem.partition("-")
        if kind in ("quest", "cooking") and seed.isdigit() and path.with_suffix(".json").is_file():
            games.append(read_game(path, kind, int(seed), ()))
    return games


def make(kind: str, seed: int, index: int, folder: Path) -> Generated | None:
    """Make one game; None when TextWorld could not make one from this seed in MAKE_SECONDS."""
    if kind == "quest":
        world, objects, length = QUEST_SIZES[index % len(QUEST_SIZES)]
        options = ("custom", "--world-size", str(world), "--nb-objects", str(objects), "--quest-length", str(length))
    else:
        recipe, take, rooms = COOKING_SIZES[index % len(COOKING_SIZES)]
        options = ("tw-cooking", "--recipe", str(recipe), "--take", str(take), "--go", str(rooms))
        options += ("--open", "--cook", "--cut", "--drop")
    path = folder / f"{kind}-{seed}.z8"
    try:
        subprocess.run(
            [tw_make(), *options, "--seed", str(seed), "--output", str(path), "--silent"],
            check=True,
            capture_output=True,
            timeout=MAKE_SECONDS,
        )
    except (subprocess.TimeoutExpired, subprocess.CalledProcessError):
        return None
    return read_game(path, kind, seed, options)


def make_all(quests: int, cooking: int, seeds: list[int], folder: Path) -> tuple[list[Generated], list[int]]:
    """The games, from `seeds` in turn (quests first); a seed TextWorld cannot make a game of is skipped and listed."""
    plan = ["quest"] * quests + ["cooking"] * cooking
    games: list[Generated] = []
    skipped: list[int] = []
    pool = iter(seeds)
    for index, kind in enumerate(plan):
        for seed in pool:
            game = make(kind, seed, index, folder)
            if game is not None:
                games.append(game)
                print(f"  made {Path(game.path).name}: {game.steps} steps, max {game.max_score}", file=sys.stderr)
                break
            skipped.append(seed)
    return games, skipped


def walkthrough_check(game: Generated, config_path: str, folder: Path) -> dict:
    """The walkthrough as `main.py --agent walkthrough` plays it, against what the game says it should reach."""
    config = GameConfiguration.from_toml(
        config_path,
        {
            "files": {"episode_dir": str(folder)},
            "gameplay": {"agent": "walkthrough", "critic": "offline"},
            "knowledge": {"enabled": False},
        },
    )
    orchestrator = build_orchestrator(config, RunOptions(rom=game.path, quiet=True))
    summary = read_summary(orchestrator.play_episode().parent)
    orchestrator.session.close()
    walked = titles_printed(Path(game.path))
    return {
        "game": Path(game.path).stem,
        "termination_reason": summary["termination_reason"],
        "final_score": summary["final_score"],
        "max_score": game.max_score,
        "read_max_score": summary["max_score"],
        "rooms_visited": summary["rooms_visited"],
        "rooms_walked": walked,
        "unreadable": summary.get("unreadable", []),
        "as_such": summary["termination_reason"] == "victory"
        and summary["final_score"] == game.max_score
        and summary["rooms_visited"] == walked,
    }


def titles_printed(path: Path) -> int:
    """The distinct room titles the game prints along its walkthrough, in plain Jericho (no harness)."""
    session = JerichoSession(path)
    text, _ = session.env.reset()
    titles = set(TITLE.findall(text))
    for step in session.walkthrough():
        titles |= set(TITLE.findall(session.env.step(step)[0]))
    session.close()
    return len(titles)


def markdown(games: list[Generated], skipped: list[int], checks: list[dict], rows: list[dict], summary: dict) -> str:
    lines = [
        "# The loop break on fresh generated games (benchmarks/generated.py)",
        "",
        f"Command: `{command('benchmarks.generated')}`  ",
        f"Commit: {commit()}",
        "",
        f"{len(games)} TextWorld games ({sum(g.kind == 'quest' for g in games)} quests, "
        f"{sum(g.kind == 'cooking' for g in games)} cooking games), seeds {', '.join(str(g.seed) for g in games)}"
        + (f"; seeds TextWorld made no game of in {MAKE_SECONDS} s: {', '.join(map(str, skipped))}" if skipped else "")
        + ".",
        "",
        "## Walkthroughs as such (`--agent walkthrough`, the default configuration)",
        "",
        f"- reach the game's own ending with its full score, read as victory, with the rooms they walked counted: "
        f"**{sum(c['as_such'] for c in checks)} of {len(checks)}**",
        "",
    ]
    steps = {Path(g.path).stem: g.steps for g in games}
    columns = ("game", "steps", "end", "score / max (read max)", "rooms counted / walked", "unreadable")
    lines += markdown_table(
        columns,
        [
            (
                c["game"],
                steps[c["game"]],
                f"{c['termination_reason']}{'' if c['as_such'] else ' **NO**'}",
                f"{c['final_score']} / {c['max_score']} ({c['read_max_score']})",
                f"{c['rooms_visited']} / {c['rooms_walked']}",
                ", ".join(c["unreadable"]) or "-",
            )
            for c in checks
        ],
    )
    lines += ["", "## The corpus benchmark's runs", ""]
    lines += [f"- {key.replace('_', ' ')}: {value}" for key, value in summary.items()]
    lines += ["", "### Per stuck kind (forced)", "", corpus.per_kind_table(rows)]
    lines += ["### Per game", "", corpus.per_game_table(rows)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quests", type=int, default=20, help="quest games to make")
    parser.add_argument("--cooking", type=int, default=20, help="cooking games to make")
    parser.add_argument("--seeds", help="comma-separated TextWorld seeds, used in turn (default: drawn anew)")
    parser.add_argument("--games", help="keep the made games in this folder (default: a temporary one)")
    parser.add_argument("--made", help="play the games an earlier run kept (its --games folder) instead of new ones")
    parser.add_argument(
        "--kinds",
        default=corpus.DEFAULT_KINDS,
        type=corpus.kinds_list,
        help="the corpus benchmark's kinds to run on them",
    )
    parser.add_argument("--factors", default="1,2,3", help="noisy: detours per step")
    parser.add_argument("--noisy-seeds", default="1", help="noisy: seeds")
    parser.add_argument("--cuts", default="0.25,0.5,0.75", help="stuck: where the walkthrough prefix stops")
    parser.add_argument("--config", default="pyproject.toml")
    parser.add_argument("--records", help="keep every episode's records in this folder (benchmarks.margins reads them)")
    parser.add_argument("--out", default="benchmarks/results/generated")
    parser.add_argument("--jobs", type=int, default=2, help="games played in parallel (processes)")
    args = parser.parse_args(argv)
    try:
        GameConfiguration.from_toml(args.config)
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else []
        tw_make()
    except (ConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    wanted = args.quests + args.cooking
    seeds += [secrets.randbelow(90_000) + 10_000 for _ in range(4 * wanted)]  # fresh ones after any given
    logger.remove()
    started = time.perf_counter()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(args.games or temporary)
        folder.mkdir(parents=True, exist_ok=True)
        if args.made:
            games, skipped = made_before(Path(args.made)), []
        else:
            games, skipped = make_all(args.quests, args.cooking, seeds, folder)
        checks = [walkthrough_check(game, args.config, Path(temporary) / "episodes") for game in games]
        runs = argparse.Namespace(
            kinds=args.kinds,
            factors=[int(f) for f in args.factors.split(",")],
            seeds=[int(s) for s in args.noisy_seeds.split(",")],
            cuts=[float(c) for c in args.cuts.split(",")],
            config=args.config,
            records=str(args.records) if args.records else None,
            cache=str(Path(temporary) / "cache"),
            jobs=args.jobs,
            out=out,
        )
        rows = corpus.run([Path(g.path) for g in games], runs, {})
    summary = corpus.summarize(rows)
    summary["walkthroughs_as_such"] = f"{sum(c['as_such'] for c in checks)} of {len(checks)}"
    summary["wall_seconds"] = round(time.perf_counter() - started, 1)
    payload = {
        "summary": summary,
        "games": [asdict(g) for g in games],
        "skipped_seeds": skipped,
        "walkthroughs": checks,
        "runs": rows,
    }
    (out / "generated.json").write_text(json.dumps(payload, indent=1) + "\n")
    (out / "generated.md").write_text(markdown(games, skipped, checks, rows, summary))
    print(json.dumps(summary, indent=1))
    print(f"wrote {out / 'generated.json'} and {out / 'generated.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
