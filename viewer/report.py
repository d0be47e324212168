"""The page, filled with its data: served by `viewer.server`, or written whole as an episode's report.html."""

from __future__ import annotations

import json
from pathlib import Path

from viewer.episodes import load_episode

PAGE = Path(__file__).with_name("page.html")
REPORT_FILE = "report.html"


def render(payload: dict) -> str:
    """The page with `payload` embedded as JSON (`</` escaped, so no text in it can close the script)."""
    data = json.dumps(payload, ensure_ascii=False).replace("</", "<\\/").replace("<!--", "<\\!--")
    return PAGE.read_text(encoding="utf-8").replace("/*DATA*/", data, 1)


def write_report(folder: Path) -> Path:
    """`folder/report.html`: the episode's page, self-contained (no server, no network), written whole."""
    path = folder / REPORT_FILE
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(render({"episode": load_episode(folder), "api": None}), encoding="utf-8")
    temporary.replace(path)
    return path
