"""How long the viewer takes to show a long episode, in headless Chromium; and the README's screenshots.

    uv run python -m benchmarks.viewer_load [--rom PATH] [--turns 2000] [--shots DIR]

Plays the dam_ab looper for `--turns` turns with termination disabled (a long episode the loop break would have
ended), then opens its report.html and times the page from navigation to the last turn row drawn (median of 5;
target: under 2 s). `--shots DIR` also plays the stuck dam_ab looper and saves the page and its map as PNG.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from loguru import logger

from agents.looper_agent import LooperAgent
from agents.offline_critic import OfflineCritic
from benchmarks import cli
from orchestration.wiring import RunOptions, build_orchestrator
from playthroughs.scenarios import build_scenario, never_stopped
from session.config import GameConfiguration
from session.records import read_summary
from viewer.report import REPORT_FILE

TARGET_SECONDS = 2.0
CHROMIUM = "/usr/bin/chromium"


def play(rom: str, folder: Path, turns: int | None) -> Path:
    """A dam_ab looper episode; `turns`: that many, never stopped; None: until the loop break ends it."""
    built = build_scenario("dam_ab", rom)
    overrides: dict = {
        "files": {"episode_dir": str(folder)},
        "knowledge": {"enabled": False},
        "gameplay": {"max_turns_per_episode": len(built.commands)},
    }
    if turns:
        overrides.update(never_stopped(turns))
    config = GameConfiguration.from_toml("pyproject.toml", overrides)
    options = RunOptions(rom=rom, quiet=True)
    orchestrator = build_orchestrator(
        config, options, agent=LooperAgent(built.prefix, built.loop), critic=OfflineCritic()
    )
    return orchestrator.play_episode().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rom", default=os.environ.get("ZORK_ROM", "../shared/games/zork1.z5"))
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--shots", help="save the README's screenshots in this folder")
    args = parser.parse_args(argv)
    logger.remove()
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        return cli.fail("needs Debian's Chromium (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as temporary, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        long_episode = play(args.rom, Path(temporary) / "long", args.turns)
        report = long_episode / REPORT_FILE
        last = read_summary(long_episode)["turns"]
        times = []
        for _ in range(5):
            page = browser.new_page(viewport={"width": 1300, "height": 1400})
            started = time.perf_counter()
            page.goto(report.as_uri())
            page.wait_for_selector(f"#turn-{last}", state="attached")
            times.append(time.perf_counter() - started)
            page.close()
        median = statistics.median(times)
        verdict = "within" if median < TARGET_SECONDS else "ABOVE"
        print(
            f"{last}-turn episode: report.html {report.stat().st_size / 1e6:.1f} MB, page ready in "
            f"{median:.2f} s (median of 5; min {min(times):.2f}, max {max(times):.2f}; "
            f"{verdict} the {TARGET_SECONDS} s target)"
        )
        if args.shots:
            shots = Path(args.shots)
            shots.mkdir(parents=True, exist_ok=True)
            stuck = play(args.rom, Path(temporary) / "stuck", None)
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.goto((stuck / REPORT_FILE).as_uri())
            page.click("#chartsvg circle.point[data-turn='45']")
            page.screenshot(path=str(shots / "viewer-stuck.png"), full_page=False)
            page.locator("#mapsvg").screenshot(path=str(shots / "viewer-map.png"))
            print(f"wrote {shots / 'viewer-stuck.png'} and {shots / 'viewer-map.png'}")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
