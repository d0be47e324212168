"""The page, filled with its data: served by `viewer.server`, or written whole as an episode's report.html."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from viewer.episodes import load_episode

PAGE = Path(__file__).with_name("page.html")
REPORT_FILE = "report.html"


def render(payload: dict) -> str:
    """The page with `payload` embedded as JSON that no text in it can break out of (see `_page`)."""
    return "".join(_page(payload))


def write_report(folder: Path) -> Path:
    """`folder/report.html`: the episode's page, self-contained (no server, no network), written whole.

    Written a piece at a time: the page of a 10,000-turn episode is 17 MB, and building it as one string (then
    escaping and embedding it, a copy each) tripled the peak memory of the episode's end."""
    path = folder / REPORT_FILE
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("w", encoding="utf-8") as out:
        for piece in _page({"episode": load_episode(folder, streamed=True), "api": None}):
            out.write(piece)
    temporary.replace(path)
    return path


def _page(payload: dict) -> Iterator[str]:
    """The page's text in pieces, every `<` of the data written as the JSON escape `\\u003c`: no text can then
    close the script (`</script>`) or open a comment (`<!--`), and JSON.parse reads it back as it was. (`<\\!--`,
    written before, is no JSON escape: a response containing `<!--` made the page fail to load.)"""
    head, tail = PAGE.read_text(encoding="utf-8").split("/*DATA*/", 1)
    yield head
    for piece in json_pieces(payload, depth=3):  # payload, episode, turns: then one piece a turn
        yield piece.replace("<", "\\u003c")
    yield tail


def json_pieces(value: Any, depth: int) -> Iterator[str]:
    """`json.dumps(value, ensure_ascii=False)` in pieces (an iterator is written as a list): dicts and lists are
    opened `depth` levels deep, and what lies below is encoded whole (at C speed, where the encoder's own `iterencode`
    yields every token apart)."""
    if depth and isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield ("" if index == 0 else ", ") + json.dumps(str(key), ensure_ascii=False) + ": "
            yield from json_pieces(item, depth - 1)
        yield "}"
    elif depth and isinstance(value, (list, Iterator)):  # an iterator: the streamed turns
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ", "
            yield from json_pieces(item, depth - 1)
        yield "]"
    else:
        yield json.dumps(value, ensure_ascii=False)
