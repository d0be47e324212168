"""Where a results file came from: the command that wrote it and the commit it ran at (docs/results/ quotes these;
the benchmarks and a batch's preset tables write them)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


CODE = ("*.py", ":(exclude)tests", "pyproject.toml", "uv.lock")
"""What a figure depends on, as git pathspecs: the code and the configuration (a results file, the README or a test
being edited is not)."""


def commit(paths: tuple[str, ...] = CODE) -> str:
    """The short commit of the checkout, with "(with uncommitted changes)" when tracked files among `paths` (the
    code and configuration unless told) differ from it; "unknown" outside a git checkout."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", *paths], cwd=ROOT, capture_output=True, text=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")


def command(module: str, argv: list[str] | None = None) -> str:
    """`uv run python -m MODULE ARGS`, as the user typed it (the process's arguments when `argv` is None)."""
    args = sys.argv[1:] if argv is None else argv
    return " ".join(["uv run python -m", module, *(shlex.quote(a) for a in args)])
