"""How the agent's reply reader reads the corpus of raw replies (tests/data/replies.toml): read as expected, honest
failures (a command expected, an InvalidReply given) and different commands (a command other than the expected one,
or any command where a failure was expected), overall and by shape.

    uv run python -m benchmarks.reply_corpus [--baseline REV] [--out docs/results/replies.md]

`--baseline REV` also measures agents/reply.py as it was at git revision REV (e.g. f4eedf1, before issue 30), loaded
from `git show` into a temporary module, so one run gives the figures before and after.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agents.base import InvalidReply
from agents.reply import parse_reply
from benchmarks.provenance import commit

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "replies.toml"
FAILURE = "failure"
OUTCOMES = ("expected", "honest_failure", "different")
"""How one reply was read: as expected, refused although a command was expected, or turned into another command."""
TARGET_EXPECTED = 0.98


def load_corpus(path: Path = CORPUS) -> tuple[dict[str, str], list[dict]]:
    """(shape -> where it is documented, the replies) of the corpus file."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return {name: shape["source"] for name, shape in data["shapes"].items()}, data["reply"]


def outcome(read: str | None, expect: str) -> str:
    """`read` is the command given (None: an honest failure); `expect` the command or FAILURE."""
    if read is None:
        return "expected" if expect == FAILURE else "honest_failure"
    return "expected" if read == expect else "different"


@dataclass
class Tally:
    counts: Counter = field(default_factory=Counter)
    by_shape: dict[str, Counter] = field(default_factory=dict)
    different: list[tuple[str, str, str]] = field(default_factory=list)
    """(shape, reply, what was read) of every reply turned into a different command."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def share(self, kind: str = "expected") -> float:
        return self.counts[kind] / max(self.total, 1)


def measure(reader: Callable[[str], tuple[str, str]], replies: list[dict]) -> Tally:
    """Read every reply with `reader` (a `parse_reply`)."""
    tally = Tally()
    for reply in replies:
        try:
            read: str | None = reader(reply["raw"])[1]
        except InvalidReply:
            read = None
        kind = outcome(read, reply["expect"])
        tally.counts[kind] += 1
        tally.by_shape.setdefault(reply["shape"], Counter())[kind] += 1
        if kind == "different":
            tally.different.append((reply["shape"], reply["raw"], read or ""))
    return tally


def reader_at(revision: str, folder: Path) -> Callable[[str], tuple[str, str]]:
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
    return commit(("agents/reply.py", str(CORPUS)))


def _cell(counter: Counter) -> str:
    total = sum(counter.values())
    return " / ".join(f"{counter[kind]}" for kind in OUTCOMES) + f" of {total}"


def report(tallies: dict[str, Tally], sources: dict[str, str], command: str) -> str:
    """A markdown report: overall and by shape, one column per reader."""
    names = list(tallies)
    lines = [
        "# Reply reading: the corpus of raw replies",
        "",
        f"`{command}` at {revision()}. Corpus: tests/data/replies.toml ({next(iter(tallies.values())).total} "
        "replies). Each cell: read as expected / honest failures (a command expected, refused) / different command "
        "(another command, or a command where a failure was expected). Most of the corpus was written together with "
        "the reader (comments in it mark the batches written after it): the figures say what it does on these "
        "shapes, not on an unseen sample; the fuzz tests in tests/test_parsers_fuzz.py mix the shapes at random.",
        "",
        "| | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for kind, label in zip(OUTCOMES, ("read as expected", "honest failures", "different command")):
        lines.append(
            f"| {label} | " + " | ".join(f"{t.counts[kind]} ({t.share(kind):.1%})" for t in tallies.values()) + " |"
        )
    lines += [
        "",
        "By shape (expected / honest failures / different):",
        "",
        "| shape | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for shape in sources:
        cells = [_cell(tally.by_shape.get(shape, Counter())) for tally in tallies.values()]
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    for name, tally in tallies.items():
        if tally.different:
            lines += ["", f"Different commands ({name}):", ""]
            lines += [f"- {shape}: `{raw[:80]!r}` read as `{read!r}`" for shape, raw, read in tally.different]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", help="also measure agents/reply.py at this git revision (e.g. f4eedf1)")
    parser.add_argument("--out", help="write the markdown report here (e.g. docs/results/replies.md)")
    args = parser.parse_args(argv)
    sources, replies = load_corpus()
    tallies: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory() as folder:
        if args.baseline:
            try:
                tallies[f"{args.baseline} (before)"] = measure(reader_at(args.baseline, Path(folder)), replies)
            except subprocess.CalledProcessError as exc:
                print(f"error: cannot read agents/reply.py at {args.baseline}: {exc.stderr.strip()}", file=sys.stderr)
                return 2
        tallies["now"] = measure(parse_reply, replies)
    command = "uv run python -m benchmarks.reply_corpus" + "".join(
        f" --{k} {v}" for k, v in (("baseline", args.baseline), ("out", args.out)) if v
    )
    text = report(tallies, sources, command)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    now = tallies["now"]
    return 0 if now.counts["different"] == 0 and now.share() >= TARGET_EXPECTED else 1


if __name__ == "__main__":
    sys.exit(main())
