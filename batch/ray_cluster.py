"""Joining a Ray cluster for `main.py batch --backend ray --ray-address ADDRESS`: on the address given, with the
cluster's token, or one `error:` line within a bounded time.

Token authentication (Ray 2.52+; since 2.59 `ray start --head` turns it on by itself when this machine has a token,
e.g. the one any local `ray.init()` writes to ~/.ray/auth_token). Ray's guide (docs.ray.io, ray-security/token-auth)
says a client sends the token when its environment has RAY_AUTH_MODE=token, and reads it from RAY_AUTH_TOKEN, else
from the file named by RAY_AUTH_TOKEN_PATH, else from ~/.ray/auth_token. Ray sends no token to an address given
explicitly without RAY_AUTH_MODE=token, and neither does the batch: the error line says what to set.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PROBE_SECONDS = 5.0
"""How long a TCP connection to the cluster's address may take to open before the address counts as unreachable."""
GCS_ATTEMPTS = 5
"""Ray's tries at the cluster's GCS, about a second apart, before `ray.init` gives up (Ray's own default is 20, and a
refused token is refused every time). Set as GCS_WAIT unless the environment has it."""
JOIN_SECONDS = 30.0
"""The longest `ray.init` may take to join a cluster that accepted the TCP connection (and to ship the project)."""
AUTH_MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
SINGLE_MACHINE = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch that takes this machine for a single node ("0" on Linux): loopback addresses then stay loopback."""
GCS_WAIT = "RAY_gcs_server_port_wait_time_s"
KEYWORDS = ("auto", "local")
"""Addresses Ray resolves itself (the cluster last started on this machine; a new local instance)."""
RAY_CLIENT = "ray://"
RAY_CLIENT_PORT = 10001
"""Ray Client's port when a ray:// address names none."""


class RayClusterError(Exception):
    """The cluster at --ray-address cannot be used: nothing answers there, it refuses the token, or it never answers
    in time. The message is one line, for the user."""


def endpoint(address: str) -> tuple[str, int] | None:
    """(host, port) of `host:port` or `ray://host[:port]`; None for the addresses Ray resolves itself."""
    if address in KEYWORDS:
        return None
    rest = address.removeprefix(RAY_CLIENT)
    host, colon, port = rest.rpartition(":")
    if address.startswith(RAY_CLIENT) and (not colon or rest.endswith("]")):
        host, port = rest, str(RAY_CLIENT_PORT)
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayClusterError(f"--ray-address {address!r}: host:port, ray://host:port, or one of {', '.join(KEYWORDS)}")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def reach(address: str) -> None:
    """Before `ray` is first imported: what Ray reads from the environment; then a TCP connection to the address,
    so that an address with nothing behind it is said at once rather than after Ray's retries."""
    where = endpoint(address)
    if where and is_loopback(where[0]):
        # Ray replaces a loopback host (in the address, and as this process's node address) with the machine's
        # interface address unless it takes the machine for a single node: a head started on 127.0.0.1 is then
        # out of reach, and a head on the interface is reached by another route than the one asked for.
        os.environ.setdefault(SINGLE_MACHINE, "0")
    os.environ.setdefault(GCS_WAIT, str(GCS_ATTEMPTS))
    if where is None:
        return
    try:
        socket.create_connection(where, timeout=PROBE_SECONDS).close()
    except OSError as exc:
        reason = f"no answer in {PROBE_SECONDS:.0f} s" if isinstance(exc, TimeoutError) else exc.strerror or repr(exc)
        raise RayClusterError(f"no Ray cluster answers at {where[0]}:{where[1]} ({reason})") from None


@contextmanager
def stderr_into(log: Path) -> Iterator[None]:
    """File descriptor 2 into `log`: Ray's C++ client writes a warning a retry straight there, beneath sys.stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with log.open("ab") as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def token_source() -> str | None:
    """Where Ray takes the token from when RAY_AUTH_MODE=token, in its order; None when there is none."""
    if os.environ.get(TOKEN):
        return f"${TOKEN}"
    if os.environ.get(TOKEN_PATH):
        return os.environ[TOKEN_PATH]
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() else None


def chain(exc: BaseException) -> Iterator[BaseException]:
    seen: BaseException | None = exc
    while seen is not None:
        yield seen
        seen = seen.__cause__ or seen.__context__


def why_refused(address: str, exc: BaseException, log: Path) -> str:
    """One line for a failed `ray.init`: the token, or Ray's own first line."""
    from ray.exceptions import AuthenticationError

    causes = list(chain(exc))
    # A refused token reaches ray.init's caller as text inside a RuntimeError (Ray's retry loop keeps the traceback).
    if any(isinstance(e, AuthenticationError) or AuthenticationError.__name__ in str(e) for e in causes):
        source = token_source()
        if os.environ.get(AUTH_MODE, "").lower() != "token":
            return (
                f"the Ray cluster at {address} wants a token: set {AUTH_MODE}=token (Ray reads the token from "
                f"${TOKEN}, the file named by ${TOKEN_PATH}, or ~/.ray/auth_token)"
            )
        if source is None:
            return (
                f"{AUTH_MODE}=token but no token: put the cluster's (`ray get-auth-token` on its head) in "
                f"~/.ray/auth_token, or name its file in ${TOKEN_PATH}"
            )
        if source != f"${TOKEN}" and not (Path(source).is_file() and Path(source).read_text(errors="replace").strip()):
            return f"no token in {source} (${TOKEN_PATH}) for the Ray cluster at {address}"
        return (
            f"the Ray cluster at {address} refused the token from {source}: use the one its head was started "
            f"with (`ray get-auth-token` there), in ${TOKEN_PATH} or ~/.ray/auth_token"
        )
    first = " ".join(str(exc).split())[:300] or type(exc).__name__
    return f"cannot join the Ray cluster at {address}: {first} (Ray's messages: {log})"


def join(address: str, log: Path, **init: Any) -> None:
    """`ray.init(address, **init)` on a cluster, after `reach(address)`, or RayClusterError within JOIN_SECONDS."""
    import ray

    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            ray.init(address=address, **init)
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it as one line
            outcome.append(exc)

    # ray.init cannot be interrupted; a daemon thread left behind dies with the process, which exits on the error.
    thread = threading.Thread(target=connect, name="ray-join", daemon=True)
    with stderr_into(log):
        thread.start()
        thread.join(JOIN_SECONDS)
    if not outcome:
        raise RayClusterError(
            f"the Ray cluster at {address} did not take this batch within {JOIN_SECONDS:.0f} s (a "
            "host:port address wants a node of that cluster on this machine, ray://HOST:10001 does "
            f"not; Ray's messages: {log})"
        )
    if outcome[0] is not None:
        raise RayClusterError(why_refused(address, outcome[0], log))
