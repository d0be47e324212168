"""`main.py batch --backend ray --ray-address` against a real head node (`ray start --head`, token authentication on,
bound to 127.0.0.1 only): the same table as the local backend, every socket of the head and of the batch on 127.0.0.1;
an address where nothing listens, or a refused token, is one `error:` line and exit 2."""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.scripted_llm import ScriptedServer
from batch.ray_cluster import GCS_WAIT, SINGLE_MACHINE, RayClusterError, endpoint
from batch.runner import main as batch_main
from tests.helpers import (
    ROOT,
    assert_played_by_the_toy_plugin,
    assert_stopped_by_the_budget,
    batch_table,
    budget_flags,
    plugin_config,
    priced_config,
    priced_model,
    story_file,
    write_toy_plugin,
)
from tests.local_http import PROXY_VARIABLES

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # a real Ray head node, one at a time

RAY_CLI = Path(sys.executable).parent / "ray"
HANG_GUARD_SECONDS = 120
"""Far above the runner's own bound: a run that reaches it hangs."""
LISTEN = "0A"
"""The TCP state of a listening socket in /proc/net/tcp."""
SCRIPTED_KEY = "ZORKGPT_SCRIPTED_KEY"
"""The API key's variable for the scripted model, in the head's environment (its workers have that one, not the
batch's). Not OPENAI_API_KEY: with that, a kind left at `auto` on the cluster would choose a real API."""
RAY_BUDGET = 1.0
"""About 8 turns of the scripted model: spent before Ray has started a task beyond the first ones."""

needs_ray = pytest.mark.skipif(
    importlib.util.find_spec("ray") is None,
    reason="the ray extra is not installed (uv sync --extra ray; .ci/run installs it)",
)
needs_proc = pytest.mark.skipif(not Path("/proc/net/tcp").is_file(), reason="reads sockets from Linux's /proc")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def clean_environment(**extra: str) -> dict[str, str]:
    """This process's environment without what would steer Ray or its traffic elsewhere, plus `extra`."""
    steering = {
        "RAY_ADDRESS",
        "RAY_AUTH_MODE",
        "RAY_AUTH_TOKEN",
        "RAY_AUTH_TOKEN_PATH",
        SINGLE_MACHINE,
        GCS_WAIT,
        *PROXY_VARIABLES,
    }
    env = {k: v for k, v in os.environ.items() if k not in steering}
    return {**env, "NO_PROXY": "127.0.0.1,localhost", "RAY_USAGE_STATS_ENABLED": "0", **extra}


# -- the sockets of a process tree, from /proc ----------------------------------------------------------------------
def session_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rfind(")") + 2 :].split()[3])


def members(sessions: set[int]) -> list[int]:
    """Every process of these sessions (a process started with start_new_session leads its own)."""
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and session_of(int(p.name)) in sessions]


def from_proc(hex_address: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    host, port = hex_address.split(":")
    raw = bytes.fromhex(host)
    if sys.byteorder == "little":  # /proc prints each 32-bit word of the address in host order
        raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(raw)
    return (ip.ipv4_mapped or ip) if ip.version == 6 else ip, int(port, 16)


def inet_sockets(pids: list[int]) -> set[tuple[str, str, tuple, tuple]]:
    """(process name, TCP state or "udp", local, remote) of every bound TCP/UDP socket the processes hold."""
    owners: dict[str, str] = {}
    for pid in pids:
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    owners[target[8:-1]] = name
        except OSError:  # the process ended meanwhile
            continue
    found: set[tuple[str, str, tuple, tuple]] = set()
    for table in ("tcp", "tcp6", "udp", "udp6") if owners else ():
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            local, remote, state, inode = from_proc(fields[1]), from_proc(fields[2]), fields[3], fields[9]
            if inode in owners and local[1] != 0:
                found.add((owners[inode], state if table.startswith("tcp") else "udp", local, remote))
    return found


def off_loopback(sockets: set[tuple[str, str, tuple, tuple]]) -> list[tuple]:
    """Sockets on another address than loopback: bound or listening anywhere else, or connected anywhere else."""
    bad = []
    for name, state, local, remote in sockets:
        unconnected = state in (LISTEN, "udp") and remote[1] == 0
        if not local[0].is_loopback or not (unconnected or remote[0].is_loopback):
            bad.append((name, state, str(local[0]), local[1], str(remote[0]), remote[1]))
    return bad


class SocketWatch:
    """Samples the sockets of some process sessions, by session, in a background thread until stopped."""

    def __init__(self, *sessions: int):
        self.seen: dict[int, set[tuple[str, str, tuple, tuple]]] = {session: set() for session in sessions}
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        while not self.done.is_set():
            for session in list(self.seen):
                self.seen[session] |= inet_sockets(members({session}))
            self.done.wait(0.1)

    def __enter__(self) -> SocketWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


# -- a head node ----------------------------------------------------------------------------------------------------
@dataclass
class Head:
    """A head node on its way up: `ready()` waits for it (the local batch runs meanwhile)."""

    process: subprocess.Popen
    port: int
    token: Path
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def session(self) -> int:
        return self.process.pid

    def ready(self) -> Head:
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while "Ray runtime started" not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the head node did not start:\n{self.log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        return self

    def stop(self) -> None:
        """This head only (`ray stop` would stop every Ray node of the machine): `ray start --block` takes its
        node's processes down on SIGTERM; whatever is left of its session then gets SIGKILL."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        for pid in members({self.session}):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()


@pytest.fixture(scope="module")
def head():
    """`ray start --head` on 127.0.0.1 only, every port free-chosen, token authentication on, in a folder of its own
    (short: Ray's socket paths live under it); stopped after the module's tests, passed or failed."""
    folder = Path(tempfile.mkdtemp(prefix="zray-"))
    token = folder / "token"
    token.write_text(secrets.token_hex(32))
    port = free_port()
    ports = {
        flag: str(free_port())
        for flag in (
            "--node-manager-port",
            "--object-manager-port",
            "--dashboard-port",
            "--dashboard-agent-listen-port",
            "--dashboard-agent-grpc-port",
            "--runtime-env-agent-port",
            "--metrics-export-port",
        )
    }
    command = [
        str(RAY_CLI),
        "start",
        "--head",
        "--block",
        "--node-ip-address",
        "127.0.0.1",
        "--port",
        str(port),
        *[part for item in ports.items() for part in item],
        "--temp-dir",
        str(folder / "ray"),
        "--num-cpus",
        "2",
        "--include-dashboard",
        "false",
        "--disable-usage-stats",
    ]
    # SINGLE_MACHINE, or Ray puts the node on the interface address whatever --node-ip-address says
    env = clean_environment(
        RAY_AUTH_MODE="token",
        RAY_AUTH_TOKEN_PATH=str(token),
        **{SINGLE_MACHINE: "0", SCRIPTED_KEY: "scripted"},
        RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S="0",
    )
    log = folder / "head.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    started = Head(process, port, token, log)
    try:
        yield started
    finally:
        started.stop()
        shutil.rmtree(folder, ignore_errors=True)


def batch_args(out: Path) -> list[str]:
    """A small batch: two games, two seeds, 30 turns."""
    return [
        "--games",
        ",".join(str(story_file(name)) for name in ("zork1.z5", "detective.z5")),
        "--seeds",
        "1,2",
        "--workers",
        "2",
        "--max-turns",
        "30",
        "--agent",
        "offline",
        "--critic",
        "offline",
        "--quiet",
        "--config",
        str(ROOT / "pyproject.toml"),
        "--out",
        str(out),
    ]


def on_cluster(address: str, out: Path) -> list[str]:
    return [sys.executable, "main.py", "batch", *batch_args(out), "--backend", "ray", "--ray-address", address]


@needs_ray
@needs_proc
def test_a_batch_on_a_real_head_node_gives_the_local_table_and_stays_on_loopback(head, tmp_path):
    assert batch_main(batch_args(tmp_path / "local")) == 0
    head.ready()
    env = clean_environment(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(head.token))
    batch = subprocess.Popen(
        on_cluster(head.address, tmp_path / "ray"),
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    with SocketWatch(head.session, batch.pid) as watch:
        stdout, stderr = batch.communicate(timeout=HANG_GUARD_SECONDS)
    assert batch.returncode == 0, stderr
    assert batch_table(tmp_path / "ray") == batch_table(tmp_path / "local")

    assert off_loopback(watch.seen[head.session] | watch.seen[batch.pid]) == []
    gcs = (ipaddress.ip_address("127.0.0.1"), head.port)
    assert {"gcs_server", "raylet"} <= {name for name, *_ in watch.seen[head.session]}  # not an empty sample
    assert any(state == LISTEN and local == gcs for _, state, local, _ in watch.seen[head.session])
    assert any(remote == gcs for _, state, _, remote in watch.seen[batch.pid] if state != LISTEN)  # the batch's driver


@needs_ray
def test_a_plugin_outside_the_tree_is_shipped_to_the_cluster_and_imported_by_its_tasks(head, tmp_path):
    """Only the batch's own process finds the plugin (its PYTHONPATH): the batch ships it with the tasks, and each
    task imports it from the configuration it is handed, before it builds its episode."""
    plugin = write_toy_plugin(tmp_path / "outside-the-tree")
    config = plugin_config(tmp_path / "plugged.toml", tmp_path / "unused")
    out = tmp_path / "ray"
    flags = ["--games", str(story_file("zork1.z5")), "--seeds", "1,2", "--workers", "2", "--quiet"]
    command = [sys.executable, "main.py", "batch", *flags, "--config", str(config), "--out", str(out)]
    command += ["--backend", "ray", "--ray-address", head.ready().address]
    env = clean_environment(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(head.token), PYTHONPATH=str(plugin))
    batch = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert batch.returncode == 0, batch.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]
    assert {row["status"] for row in rows} == {"finished"} and len(rows) == 2, rows
    folders = [path.parent for path in (out / "episodes").rglob("summary.json")]
    assert len(folders) == 2
    for folder in folders:
        assert_played_by_the_toy_plugin(folder)


@needs_ray
def test_a_budget_stops_the_batch_on_the_cluster_within_a_turn_per_running_job(head, tmp_path):
    """The ledger is a Ray actor: the tasks tell it what their episodes spend, a task that starts once the budget is
    spent returns at once, not run. All six tasks are submitted at once, and Ray starts more of them than the head has
    CPUs (a task waiting in `ray.get` on an actor lends its CPU): the budget, a few turns, is spent before the
    later ones are up."""
    out = tmp_path / "ray"
    with ScriptedServer(priced_model()) as server:
        config = priced_config(tmp_path / "priced.toml", server.base_url, api_key_env=SCRIPTED_KEY)
        command = [sys.executable, "main.py", "batch", *budget_flags(out, config, RAY_BUDGET, seeds="1,2,3,4,5,6")]
        command += ["--backend", "ray", "--ray-address", head.ready().address]
        env = clean_environment(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(head.token), **{SCRIPTED_KEY: "key"})
        batch = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG_GUARD_SECONDS)
    assert batch.returncode == 0, batch.stderr[-3000:]
    assert_stopped_by_the_budget(out, RAY_BUDGET, jobs=6)


def error_lines(runs: dict[str, tuple[list[str], dict[str, str]]]) -> dict[str, str]:
    """The one stderr line of each (command, environment), all run at once, each of which exits 2."""
    started = {
        case: subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for case, (command, env) in runs.items()
    }
    lines = {}
    for case, run in started.items():
        _, stderr = run.communicate(timeout=HANG_GUARD_SECONDS)
        assert run.returncode == 2 and len(stderr.splitlines()) == 1 and stderr.startswith("error: "), stderr[-3000:]
        lines[case] = stderr.strip()
    return lines


@needs_ray
def test_a_refused_token_is_one_error_line(head, tmp_path):
    wrong = tmp_path / "token"
    wrong.write_text(secrets.token_hex(32))
    address = head.ready().address
    lines = error_lines(
        {
            "no mode": (on_cluster(address, tmp_path / "a"), clean_environment()),
            "another token": (
                on_cluster(address, tmp_path / "b"),
                clean_environment(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN_PATH=str(wrong)),
            ),
        }
    )
    assert lines["no mode"].startswith(f"error: the Ray cluster at {address} wants a token: set RAY_AUTH_MODE=token")
    assert lines["another token"].startswith(f"error: the Ray cluster at {address} refused the token from {wrong}")


@needs_ray
def test_an_address_where_no_cluster_listens_is_one_error_line(tmp_path):
    address = f"127.0.0.1:{free_port()}"
    lines = error_lines({"nothing there": (on_cluster(address, tmp_path / "out"), clean_environment())})
    assert lines["nothing there"].startswith(f"error: no Ray cluster answers at {address}")


@pytest.mark.parametrize(
    "address, where",
    [
        ("127.0.0.1:6379", ("127.0.0.1", 6379)),
        ("[::1]:6379", ("::1", 6379)),
        ("ray://head:10002", ("head", 10002)),
        ("ray://head", ("head", 10001)),
        ("ray://[::1]", ("::1", 10001)),
        ("auto", None),
        ("local", None),
    ],
)
def test_the_address_probed_is_the_one_given(address, where):
    assert endpoint(address) == where


@pytest.mark.parametrize("address", ["head", "head:port", "head:0", ":6379", "ray://head:99999"])
def test_a_malformed_address_is_refused_before_ray_is_asked(address):
    with pytest.raises(RayClusterError, match="--ray-address"):
        endpoint(address)
