"""`main.py batch` on real story files: resumable after a kill, the same table on the Ray backend, and a shared limit of
LLM requests in flight against a server that answers 429 to excess."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agents.prompts import role_of
from agents.scripted_llm import send_json
from batch.runner import MANIFEST
from batch.runner import main as batch_main
from session.records import SUMMARY_FILE, read_summary
from tests.helpers import ROOT, assert_all_end, batch_table, descendants, story_file
from tests.local_http import bypass_proxies

pytestmark = pytest.mark.slow  # batches of real episodes in subprocesses, local and Ray


def games() -> str:
    return ",".join(str(story_file(name)) for name in ("zork1.z5", "detective.z5"))


def manifest_ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (out / MANIFEST).read_text().splitlines()]


def test_a_killed_batch_resumes_without_losing_or_repeating_an_episode(tmp_path):
    out = tmp_path / "batch"
    command = [
        sys.executable,
        "main.py",
        "batch",
        "--games",
        games(),
        "--seeds",
        "1,2,3",
        "--workers",
        "1",
        "--max-turns",
        "150",
        "--agent",
        "offline",
        "--critic",
        "offline",
        "--out",
        str(out),
        "--quiet",
    ]
    process = subprocess.Popen(
        command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if (out / MANIFEST).is_file() and len((out / MANIFEST).read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before = (out / MANIFEST).read_text().splitlines()
    assert 2 <= len(before) < 6, "killed in the middle of the batch"

    assert batch_main(command[3:]) == 0
    after = (out / MANIFEST).read_text().splitlines()
    assert after[: len(before)] == before  # nothing finished was lost or redone
    ids = manifest_ids(out)
    assert len(ids) == len(set(ids)) == 6  # every job once
    for ident in ids:  # one episode folder per job: an interrupted try was cleared before its rerun
        assert len([p for p in (out / "episodes" / ident).iterdir() if p.is_dir() and p.name != "knowledge"]) == 1
    results = json.loads((out / "results.json").read_text())
    assert results["episodes"] == 6 and results["crashed"] == 0
    assert {row["game"] for row in results["games"]} == {"zork1", "detective"}


def test_a_batch_killed_alone_takes_its_workers_with_it_quietly(tmp_path):
    """SIGKILL to the batch's own process, not its group: the workers, in the middle of their episodes, end at once
    with their emulators, and nothing but the batch's own lines reaches stderr (no worker's traceback of a broken
    pipe)."""
    out = tmp_path / "batch"
    command = [sys.executable, "main.py", "batch", "--games", games(), "--seeds", "1,2,3", "--workers", "2"]
    command += ["--max-turns", "400", "--agent", "offline", "--critic", "offline", "--out", str(out), "--quiet"]
    process = subprocess.Popen(
        command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(out.glob("episodes/**/events.jsonl"))) < 2:
        time.sleep(0.02)
    below = descendants(process.pid)
    assert len(below) >= 2 and process.poll() is None, "both workers in an episode"
    process.kill()
    try:
        _, err = process.communicate(timeout=60)
        assert_all_end(below)
    finally:  # a failure here must not leave the batch's processes running
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    assert "Traceback" not in err and "Error" not in err, err


@pytest.mark.xdist_group("ray")  # one Ray cluster at a time on the machine
def test_the_ray_backend_gives_the_same_table(tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray; .ci/run installs it)")
    common = [
        "--games",
        games(),
        "--seeds",
        "1,2",
        "--workers",
        "2",
        "--max-turns",
        "40",
        "--agent",
        "offline",
        "--critic",
        "offline",
        "--quiet",
        "--config",
        str(ROOT / "pyproject.toml"),
    ]
    assert batch_main([*common, "--out", str(tmp_path / "local")]) == 0
    assert batch_main([*common, "--out", str(tmp_path / "ray"), "--backend", "ray"]) == 0
    assert batch_table(tmp_path / "ray") == batch_table(tmp_path / "local")


class CrowdedServer:
    """An OpenAI-compatible server that takes `capacity` requests at once and answers 429 to any more."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.in_flight = 0
        self.most = 0
        self.refused = 0
        self.answered = 0
        self.lock = threading.Lock()

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length") or 0)) or b"{}")
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            crowded = self.in_flight > self.capacity
            self.refused += crowded
        if not crowded:
            time.sleep(0.03)  # a model thinking: requests overlap when nothing limits them
        # Done before the reply leaves: a client may send its next request the moment it reads this one.
        with self.lock:
            self.in_flight -= 1
            self.answered += not crowded
        if crowded:
            send_json(handler, 429, {"error": {"message": "slow down", "type": "rate_limit"}})
            return
        role = role_of(body.get("messages", []))
        content = '{"thought": "go on", "command": "look"}' if role == "agent" else '{"score": 0.8, "reason": "ok"}'
        send_json(
            handler,
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "m"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            },
        )


@pytest.mark.xdist_group("ray")
@pytest.mark.parametrize("backend", ["local", "ray"])
def test_the_shared_limit_keeps_a_crowded_server_within_its_capacity(tmp_path, monkeypatch, backend):
    if backend == "ray":
        pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray; .ci/run installs it)")
    bypass_proxies(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "batch-test-key")
    crowded = CrowdedServer(capacity=2)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            crowded.handle(self)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True).start()
    grid = tmp_path / "grid.toml"
    grid.write_text(
        "[cells.limited.llm]\n"
        f'base_url = "http://127.0.0.1:{httpd.server_address[1]}/v1"\nmax_concurrent_requests = 2\nmax_retries = 5\n'
    )
    try:
        code = batch_main(
            [
                "--games",
                str(story_file("zork1.z5")),
                "--seeds",
                "1,2,3,4",
                "--workers",
                "4",
                "--max-turns",
                "6",
                "--agent",
                "llm",
                "--critic",
                "llm",
                "--grid",
                str(grid),
                "--out",
                str(tmp_path / "out"),
                "--quiet",
                "--config",
                str(ROOT / "pyproject.toml"),
                "--backend",
                backend,
            ]
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert code == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["episodes"] == 4 and results["crashed"] == 0
    assert results["cells"][0]["llm_calls"] >= 4 * 6 * 2
    assert crowded.most <= 2 and crowded.refused == 0  # four workers, never more than two requests at once


REWIND_GRID = """
[cells.end.loop_break]
on_stuck = "end"
[cells.rewind.loop_break]
on_stuck = "rewind"
max_rewinds = 2
warning_lead_turns = 4
[cells.rewind.loop_break.no_progress]
max_turns = 12
[cells.rewind.loop_break.repetition]
min_turns = 10
"""
"""The design's ending beside rewinds after 12 turns without progress (the offline agent rewinds on zork2)."""


def test_rewinds_and_abandoned_turns_are_columns_of_the_results(tmp_path):
    """Each episode's rewinds and abandoned turns (summary.json) in its manifest row, summed per cell and
    game in the results; a manifest row written before rewinds counts none."""
    out, grid = tmp_path / "batch", tmp_path / "grid.toml"
    grid.write_text(REWIND_GRID)
    command = ["--games", str(story_file("zork2.z5")), "--seeds", "1,2", "--workers", "2", "--max-turns", "80"]
    command += ["--agent", "offline", "--critic", "offline", "--grid", str(grid), "--out", str(out), "--quiet"]
    assert batch_main(command) == 0
    rows = [json.loads(line) for line in (out / MANIFEST).read_text().splitlines()]
    for row in rows:
        summary = read_summary(next((out / "episodes" / row["id"]).glob(f"*/{SUMMARY_FILE}")).parent)
        assert (row["rewinds"], row["abandoned_turns"]) == (summary["rewinds"], summary["abandoned_turns"])
    rewound = [row for row in rows if row["cell"] == "rewind"]
    assert all(row["rewinds"] > 0 for row in rewound), "the offline agent gets stuck on zork2 within 80 turns"
    assert all(row["rewinds"] == row["abandoned_turns"] == 0 for row in rows if row["cell"] == "end")
    cells = {line["cell"]: line for line in batch_table(out) if line["game"] == "all"}
    assert cells["rewind"]["rewinds"] == sum(row["rewinds"] for row in rewound)
    assert cells["rewind"]["abandoned_turns"] == sum(row["abandoned_turns"] for row in rewound)
    assert "| rewinds | abandoned_turns |" in (out / "results.md").read_text()
    assert "rewinds,abandoned_turns" in (out / "results.csv").read_text().splitlines()[0]

    old = [{k: v for k, v in row.items() if k not in ("rewinds", "abandoned_turns")} for row in rows]
    (out / MANIFEST).write_text("".join(json.dumps(row) + "\n" for row in old))  # as written before rewinds
    assert batch_main(command) == 0  # every job done: the results are read again from the manifest
    assert all(line["rewinds"] == line["abandoned_turns"] == 0 for line in batch_table(out))


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == pid:
                found.append(int(entry.name))
    return found


def emulators_of(worker: int) -> list[int]:
    """A batch worker's emulator processes (children of its zygote, the one child it starts)."""
    return [emulator for zygote in children(worker) for emulator in children(zygote)]


def test_a_dead_worker_and_a_hung_emulator_cost_their_jobs_and_the_batch_finishes_the_others(tmp_path):
    """Two jobs run at once, with their live game and shadow emulators up. One worker is killed (SIGKILL): its job
    is recorded crashed, another worker takes its place. The other worker's emulators are stopped (SIGSTOP): they
    never answer, and after the time limit its episode ends as emulator_failed, records written. Every other job
    plays to its end."""
    out, config = tmp_path / "batch", tmp_path / "config.toml"
    config.write_text("[tool.zorkgpt.gameplay]\nemulator_timeout_seconds = 2.0\n")
    command = [sys.executable, "main.py", "batch", "--games", games(), "--seeds", "1,2,3", "--workers", "2"]
    command += ["--agent", "walkthrough", "--critic", "offline", "--config", str(config), "--out", str(out), "--quiet"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    busy: list[int] = []
    while time.monotonic() < deadline and process.poll() is None and len(busy) < 2:
        workers = [pid for pid in children(process.pid) if len(emulators_of(pid)) >= 2]  # the Manager has none
        busy = workers if len(workers) >= 2 else busy
        time.sleep(0.01)
    assert len(busy) == 2, "two jobs were never seen running at once"
    stopped, killed = busy
    for emulator in emulators_of(stopped):
        os.kill(emulator, signal.SIGSTOP)
    os.kill(killed, signal.SIGKILL)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    rows = [json.loads(line) for line in (out / MANIFEST).read_text().splitlines()]
    assert len(rows) == len({row["id"] for row in rows}) == 6
    crashed = [row for row in rows if row["status"] == "crashed"]
    assert len(crashed) == 1 and "the worker process died (killed by SIGKILL)" in crashed[0]["error"]
    finished = [row for row in rows if row["status"] == "finished"]
    failed = [row for row in finished if row["termination_reason"] == "emulator_failed"]
    assert len(failed) == 1 and len(finished) == 5  # the others played to their own ends (a win, or a death)
    summary = read_summary(next((out / "episodes" / failed[0]["id"]).glob(f"*/{SUMMARY_FILE}")).parent)
    assert "gave no answer within 2 s" in summary["emulator_failure"]
    assert json.loads((out / "results.json").read_text())["crashed"] == 1
