"""How the agent's reply reader reads three sets of raw replies: read as expected, honest failures (a command
expected, an InvalidReply given) and different commands (a command other than the expected one, or any command where
a failure was expected), overall and by shape.

    uv run python -m benchmarks.reply_corpus [--baseline REV] [--games DIR] [--out docs/results/replies.md]

The sets (tests/data/, read by playthroughs/reply_sets.py): `replies.toml`, the project's corpus, written together with
the reader; `replies_dev.toml`, shapes the corpus lacked, which the reader was tuned on; `replies_heldout.toml`, other
shapes and wordings written at the same time and never tuned on (its known failures are listed with their reasons). A
reply is read with the dictionary of its game (`game`, of the entry or of its file, a story file of `--games`), as on
the LLM path; the project corpus names no game and is read without one, as by a caller that gives no dictionary.

`--baseline REV` also measures agents/reply.py as it was at git revision REV, loaded from `git show` into a
temporary module (without a dictionary when it takes none), so one run gives the figures before and after.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from agents.reply import parse_reply
from benchmarks import cli
from playthroughs.reply_sets import FAILURE, OUTCOMES, SETS, TARGET_EXPECTED, Tally, dictionaries, load_corpus, measure
from session.provenance import commit
from session.story_file import StoryFileError
from session.tables import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PROJECT_GAME = "zork1"
"""The game whose dictionary the project corpus (which names none) is also read with: its replies are zork1's."""
GAMES = ROOT.parent / "shared" / "games"


def reader_at(revision: str, folder: Path) -> Callable:
    """`parse_reply` of agents/reply.py as it was at git `revision` (imported from a copy in `folder`)."""
    source = subprocess.run(
        ["git", "show", f"{revision}:agents/reply.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = folder / f"reply_{revision}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"reply_{revision}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.parse_reply


def revision() -> str:
    return commit(("agents/reply.py", "session/commands.py", *(str(path) for path in SETS.values())))


def _cell(counter: Counter) -> str:
    total = sum(counter.values())
    return " / ".join(f"{counter[kind]}" for kind in OUTCOMES) + f" of {total}"


def _share(tally: Tally, kind: str = "expected") -> str:
    return f"{tally.counts[kind]} ({tally.share(kind):.1%})"


def report(results: dict[str, dict[str, Tally]], sources: dict[str, dict[str, str]], command: str) -> str:
    """A markdown report: `results` is set name -> reader name -> tally; one column per reader."""
    names = list(next(iter(results.values())))
    lines = [
        "# Reply reading: three sets of raw replies",
        "",
        f"`{command}` at {revision()}. Sets (tests/data/): project, `replies.toml` (written together with the "
        "reader); dev, `replies_dev.toml` (shapes the corpus lacked, which the reader was tuned on); held-out, "
        "`replies_heldout.toml` (other shapes and wordings written at the same time, never tuned on). A reply is read "
        "with the dictionary of its game, as on the LLM path; the project corpus names no game and is read without "
        f"one, as by a caller that gives none, and again with {PROJECT_GAME}'s. Each cell: read as expected / honest "
        "failures (a command expected, refused) / different command (another command, or a command where a failure "
        "was expected). The fuzz tests in tests/agents/test_parsers_fuzz.py mix the shapes at random.",
        "",
        "Read as expected:",
        "",
    ]
    lines += markdown_table(
        ("set", *names),
        [
            (f"{set_name} ({next(iter(tallies.values())).total})", *(_share(t) for t in tallies.values()))
            for set_name, tallies in results.items()
        ],
    )
    for set_name, tallies in results.items():
        lines += ["", f"## {set_name}", ""]
        lines += markdown_table(
            ("", *names),
            [
                (label, *(_share(t, kind) for t in tallies.values()))
                for kind, label in zip(OUTCOMES, ("read as expected", "honest failures", "different command"))
            ],
        )
        lines += ["", "By shape (expected / honest failures / different):", ""]
        lines += markdown_table(
            ("shape", *names),
            [
                (shape, *(_cell(tally.by_shape.get(shape, Counter())) for tally in tallies.values()))
                for shape in sources[set_name]
            ],
        )
        now = tallies[names[-1]]
        if now.missed:
            lines += ["", f"Not read as expected ({names[-1]}):", ""]
            for reply, shown in now.missed:
                reason = f" Known: {reply['known_failure']}" if reply.get("known_failure") else ""
                expected = "a failure" if reply["expect"] == FAILURE else f"`{reply['expect']}`"
                lines.append(
                    f"- {reply['shape']}: `{reply['raw'][:80]!r}` read as `{shown}`, {expected} meant.{reason}"
                )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="also measure agents/reply.py at this git revision (e.g. 5fc1997)")
    cli.add_games(parser, type=Path, default=GAMES, help="folder of the story files the sets name")
    cli.add_out(parser, help="write the markdown report here (e.g. docs/results/replies.md)")
    args = parser.parse_args(argv)
    loaded = {name: load_corpus(path) for name, path in SETS.items()}
    sources, project = loaded["project"]
    loaded = {
        "project": loaded["project"],
        f"project, {PROJECT_GAME}'s dictionary": (sources, [{**reply, "game": PROJECT_GAME} for reply in project]),
        **{name: value for name, value in loaded.items() if name != "project"},
    }
    try:
        games = dictionaries([reply for _, replies in loaded.values() for reply in replies], args.games)
    except StoryFileError as exc:
        return cli.fail(exc)
    results: dict[str, dict[str, Tally]] = {name: {} for name in loaded}
    with tempfile.TemporaryDirectory() as folder:
        if args.baseline:
            try:
                before = reader_at(args.baseline, Path(folder))
            except subprocess.CalledProcessError as exc:
                return cli.fail(f"cannot read agents/reply.py at {args.baseline}: {exc.stderr.strip()}")
            for name, (_, replies) in loaded.items():
                results[name][f"{args.baseline} (before)"] = measure(before, replies, games)
        for name, (_, replies) in loaded.items():
            results[name]["now"] = measure(parse_reply, replies, games)
    command = "uv run python -m benchmarks.reply_corpus" + "".join(
        f" --{k} {v}" for k, v in (("baseline", args.baseline), ("out", args.out)) if v
    )
    text = report(results, {name: sources for name, (sources, _) in loaded.items()}, command)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    project = results["project"]["now"]
    return 0 if project.counts["different"] == 0 and project.share() >= TARGET_EXPECTED else 1


if __name__ == "__main__":
    sys.exit(main())
