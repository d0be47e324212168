"""Receivers of traces that fail, on 127.0.0.1: one that hangs and one where nothing listens. The telemetry tests and
its benchmark check that neither slows nor changes an episode."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def hanging_endpoint() -> Iterator[str]:
    """A base endpoint on 127.0.0.1 whose socket accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(0.1)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for connection in held:
            connection.close()
        listener.close()


def closed_endpoint() -> str:
    """A base endpoint on 127.0.0.1 where nothing listens: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"
