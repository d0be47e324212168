"""How often the offline critic (with the object pre-check and the loop break) would reject an optimal command.

    uv run python -m benchmarks.studies.critic_rejections [--games DIR] [--config PATH] [--top N]

Every Jericho walkthrough in the folder is forced through the real orchestrator with the offline critic; a turn
counts when the command the walkthrough played would have been rejected (`would_reject`). Prints the share per game,
over the corpus, and the most common reasons (target: under 2 %).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from loguru import logger

from agents.replay_agent import ReplayAgent
from benchmarks import cli
from benchmarks.evaluate import run_episode
from session.config import ConfigError, GameConfiguration
from session.jericho_session import JerichoSession
from session.story_file import STORY_SUFFIXES, StoryFileError

TARGET_SHARE = 0.02


def reason_kind(reason: str) -> str:
    """A reason without its particulars (quoted words, numbers, room names after 'to'), for counting."""
    text = re.sub(r"'[^']*'", "'…'", reason)
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return re.sub(r"known exit to .*", "known exit to …", text)[:90]


def measure(folder: Path, config_path: str) -> dict:
    logger.remove()
    if not folder.is_dir():
        raise StoryFileError(f"--games {folder}: not a folder of story files")
    rows, reasons = [], Counter()
    with tempfile.TemporaryDirectory() as episodes:
        for story in sorted(p for p in folder.iterdir() if p.suffix.lower() in STORY_SUFFIXES):
            commands = JerichoSession(story).walkthrough()
            if not commands:
                continue
            config = GameConfiguration.from_toml(
                config_path,
                {
                    "files": {"episode_dir": episodes},
                    "gameplay": {"max_turns_per_episode": len(commands)},
                    "knowledge": {"enabled": False},
                },
            )
            _summary, records = run_episode(story, config, ReplayAgent(commands, kind="walkthrough"))
            rejected = [r for r in records if r["would_reject"]]
            reasons.update(reason_kind(r["candidates"][0]["reason"]) for r in rejected)
            rows.append({"game": story.stem, "turns": len(records), "would_reject": len(rejected)})
    turns = sum(r["turns"] for r in rows)
    rejected = sum(r["would_reject"] for r in rows)
    return {
        "games": rows,
        "turns": turns,
        "would_reject": rejected,
        "share": rejected / max(turns, 1),
        "reasons": reasons.most_common(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cli.add_games(parser)
    cli.add_config(parser)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    try:
        result = measure(Path(args.games), args.config)
    except (ConfigError, StoryFileError) as exc:
        return cli.fail(exc)
    for row in result["games"]:
        print(
            f"{row['game']:12} {row['would_reject']:4} of {row['turns']:5} ({row['would_reject'] / row['turns']:.1%})"
        )
    verdict = "within" if result["share"] < TARGET_SHARE else "ABOVE"
    print(
        f"corpus: {result['would_reject']} of {result['turns']} optimal commands would be rejected "
        f"({result['share']:.2%}; {verdict} the {TARGET_SHARE:.0%} target)"
    )
    for reason, count in result["reasons"][: args.top]:
        print(f"  {count:5}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
