"""Jobs on worker processes, where a worker that dies costs the job it held, never the run.

multiprocessing.Pool never notices a worker that died (a crash in C code, the kernel's out-of-memory killer, a
kill): the job it held never comes back and `imap_unordered` waits for ever. Here each worker holds one job at a
time and the parent reads its pipe: a worker that died closes it, its job is reported dead (`on_death`) and another
worker takes its place. Workers are spawned (no fork of a parent that may run threads) and end with the parent,
however it ended: at once, in the middle of a job too (`session.emulator.watch_parent`).
"""

from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from session.emulator import watch_parent

JOIN_SECONDS = 5.0
"""How long a worker that was told to stop, or whose pipe closed, is given to exit before it is killed."""


class JobFailed(Exception):
    """A job's function raised in its worker (the traceback, as text, is the message)."""


def run_jobs(
    jobs: Sequence[Any],
    workers: int,
    target: Callable[[Any], Any],
    on_result: Callable[[Any], None],
    on_death: Callable[[Any, int | None], None],
    initializer: Callable[..., None] | None = None,
    initargs: tuple = (),
    may_hand_out: Callable[[], bool] = lambda: True,
) -> None:
    """`target(job)` for every job on up to `workers` spawned processes (`initializer(*initargs)` run in each
    first), in any order: `on_result(value)` for each that returned, `on_death(job, exit code)` for each whose worker
    died. A job whose function raised raises JobFailed here (the function should return its own failures).
    `may_hand_out()`, asked before each job is handed out: False leaves that job and the rest undone (neither
    reported), and lets the jobs running finish."""
    context = multiprocessing.get_context("spawn")
    todo = list(reversed(jobs))
    busy: dict[Connection, tuple[multiprocessing.process.BaseProcess, Any]] = {}
    idle: list[tuple[Connection, multiprocessing.process.BaseProcess]] = []

    def spawn() -> tuple[Connection, multiprocessing.process.BaseProcess]:
        ours, theirs = context.Pipe()
        process = context.Process(target=_work, args=(theirs, target, initializer, initargs, os.getpid()), daemon=True)
        process.start()
        theirs.close()
        return ours, process

    def more() -> bool:
        return bool(todo) and may_hand_out()

    def hand_out(conn: Connection, process: multiprocessing.process.BaseProcess) -> None:
        while more():
            job = todo.pop()
            try:
                conn.send(job)
            except OSError:  # the worker died between two jobs: the job goes to another
                todo.append(job)
                conn.close()
                process.join(JOIN_SECONDS)
                conn, process = spawn()
                continue
            busy[conn] = (process, job)
            return
        idle.append((conn, process))

    def start() -> None:
        hand_out(*spawn())

    try:
        for _ in range(min(workers, len(todo))):
            if more():
                start()
        while busy:
            for conn in wait(list(busy)):
                process, job = busy.pop(conn)
                try:
                    ok, value = conn.recv()
                except (EOFError, OSError):  # the worker died with the job
                    conn.close()
                    process.join(JOIN_SECONDS)
                    on_death(job, process.exitcode)
                    if more():
                        start()
                    continue
                if not ok:
                    raise JobFailed(value)
                on_result(value)
                hand_out(conn, process)
    finally:
        _stop([(conn, process) for conn, (process, _) in busy.items()] + idle)


def _stop(workers: list[tuple[Connection, multiprocessing.process.BaseProcess]]) -> None:
    """Close every worker's pipe (an idle worker exits on it) and kill those still running after JOIN_SECONDS."""
    for conn, _ in workers:
        conn.close()
    for _, process in workers:
        process.join(JOIN_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()


def _work(conn: Connection, target: Callable[[Any], Any], initializer, initargs: tuple, parent: int) -> None:
    """A worker: run the jobs the parent sends, one at a time, until its pipe closes. A worker whose parent dies
    (killed, even by SIGKILL) ends quietly and at once: nobody would read its answer, and an episode left running
    would go on spending; what it wrote is on disk, and a resumed batch runs the job again."""
    watch_parent(parent)
    if initializer is not None:
        initializer(*initargs)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer = (True, target(job))
        except Exception:
            answer = (False, traceback.format_exc())
        try:
            conn.send(answer)
        except OSError:
            return
