"""`main.py view [DIR ...]`: the episode viewer on 127.0.0.1, for finished and running episodes.

Only the episode folders found under the given folders are served, by their ids; every other path is a 404. A
running episode's page asks `/api/episode/<id>?since=N` every second for the turns after N.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from viewer.episodes import episode_row, find_episodes, load_episode, read_turns, summary_of
from viewer.report import render

DEFAULT_PORT = 8765
HOST = "127.0.0.1"


class Viewer:
    """What the server answers, without the HTTP plumbing (testable alone)."""

    def __init__(self, roots: list[Path]):
        self.roots = roots

    def answer(self, target: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a GET of `target`."""
        url = urlparse(target)
        parts = [unquote(p) for p in url.path.split("/") if p]
        episodes = find_episodes(self.roots)
        if not parts:
            rows = [episode_row(i, f) for i, f in sorted(episodes.items(), reverse=True)]
            return 200, "text/html; charset=utf-8", render({"list": rows}).encode()
        if len(parts) == 2 and parts[0] == "episode" and parts[1] in episodes:
            payload = {"episode": load_episode(episodes[parts[1]]), "api": f"/api/episode/{parts[1]}"}
            return 200, "text/html; charset=utf-8", render(payload).encode()
        if len(parts) == 3 and parts[:2] == ["api", "episode"] and parts[2] in episodes:
            folder = episodes[parts[2]]
            since = parse_qs(url.query).get("since", ["0"])[0]
            turns, _notes = read_turns(folder, int(since) if since.isdigit() else 0)
            summary = summary_of(folder)
            update = {"turns": turns, "summary": summary, "full": load_episode(folder) if summary else None}
            return 200, "application/json", json.dumps(update).encode()
        return 404, "text/plain; charset=utf-8", b"not found\n"


def serve(roots: list[Path], port: int) -> ThreadingHTTPServer:
    viewer = Viewer(roots)

    class ViewerRequestHandler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, kind, body = viewer.answer(self.path)
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # no request lines on the console
            pass

    return ThreadingHTTPServer((HOST, port), ViewerRequestHandler)


def main(argv: list[str], default_dir: Callable[[], str]) -> int:
    """`default_dir()`: the folder to view when none is given (the configured episode_dir), asked only then."""
    parser = argparse.ArgumentParser(prog="main.py view", description="Watch and review episodes in the browser.")
    parser.add_argument("dirs", nargs="*", help="folders of episodes, or episode folders (default: files.episode_dir)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0: any free port")
    args = parser.parse_args(argv)
    roots = [Path(d) for d in (args.dirs or [default_dir()])]
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        print(f"error: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        server = serve(roots, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {HOST}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"ZorkGPT viewer: http://{HOST}:{server.server_address[1]}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
