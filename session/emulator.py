"""Every Z-machine emulator in a process of its own: a crash or a hang of Jericho's C core costs that emulator, never
the harness.

Jericho's C core (Frotz) can crash or loop for ever: hollywood, 65 steps into its walkthrough (`GET PILLAR` in the
crawl space), segfaults on `look`. In the harness's own process such a crash kills everything: no ending, no summary,
and a pool of workers waits for ever on its dead worker. Here each `jericho.FrotzEnv` runs in a child process
behind `Emulator`, a proxy with the FrotzEnv calls the harness makes. Every call has a time limit: a child that died
raises EmulatorCrashed, one that gave no answer in time is killed and raises EmulatorHung (both EmulatorFailed, naming
the emulator and the command). A failed emulator stays stopped; its owner starts another.

The children are forked from one small process per harness process, the zygote, which has Jericho loaded: a start
costs a fork and FrotzEnv's own set-up, not a Python interpreter importing numpy and Jericho. No start method of
multiprocessing fits: `fork` from the harness is unsafe once it runs threads (Ray's, the viewer's), and `spawn` and
`forkserver` import the caller's main module again in every child (main.py imports the whole harness).

No child outlives the harness: the zygote exits when the harness's end of its socket closes, however the harness
ended (a SIGKILL too), and the emulators die with the zygote (PR_SET_PDEATHSIG on Linux, else a thread watching the
parent). The zygote reaps them, so none is left a zombie.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
import warnings
import weakref
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np

from session.records import Ending, EpisodeOver

DEFAULT_TIME_LIMIT = 30.0
"""Seconds an emulator may take to answer one call before its process is killed as hung. A step takes milliseconds
(zork1's walkthrough: 0.02 ms a step) and the slowest call, an emulator's start, well under a second: 30 s is far
beyond any of them on a loaded machine, so a slow machine never ends an episode, and a real hang costs it once."""
START_TIME_LIMIT = 60.0
"""Seconds the zygote or a new emulator may take to start, whatever the call limit (a test's tiny limit must not
fail every start): Python, numpy and Jericho load in under a second."""
TIME_SEED = -1
"""Jericho's seed when none is given and its bindings hold none: the random numbers change with the clock."""
DEFAULT_SEED = 1
"""The seed of a game whose walkthrough names none (lgop, every TextWorld game): its episodes, restores and resumes
repeat exactly, as those of Jericho's seeded games do."""
LIVE = "live"
"""The emulator that plays the game."""
SHADOW = "shadow"
"""The emulator that plays probes from copies of the live state (session.shadow)."""
PR_SET_PDEATHSIG = 1
"""prctl option (Linux): the signal a process gets when its parent dies."""
WATCH_SECONDS = 0.5
"""Where PR_SET_PDEATHSIG is missing: how often an emulator checks that its parent still lives."""
_FORK, _KILL = b"f", b"k"
"""The zygote's requests: fork an emulator (its socket passed along), kill one (by pid)."""
_REQUEST = struct.Struct("!ci")
"""A request to the zygote: what, and the pid (0 for a fork)."""
_PID = struct.Struct("!i")
LIB_READS = frozenset({"getRngA", "getRngInterval", "getRngCounter", "get_num_world_objs"})
LIB_CALLS = LIB_READS | {"set_narrative_text"}
"""The functions of Jericho's C library (`FrotzEnv.frotz_lib`) the harness calls directly."""
READS = frozenset(
    {"get_state", "_get_ram", "_get_special_ram", "get_world_objects", "get_score", "get_moves", "game_over"}
    | {"victory", "get_walkthrough", "get_max_score", "observe"}
)
"""Calls that leave the machine as it was: `Emulator.get_state` answers from what it knows after them."""


class EmulatorFailed(EpisodeOver):
    """An emulator's process crashed or hung: the emulator is stopped (its owner starts another). The live game's
    failure ends the episode; a probe's is caught where the probe is made."""

    ending = Ending.EMULATOR_FAILED

    def __init__(self, emulator: str, call: str, command: str | None, what: str):
        self.emulator = emulator
        """LIVE or SHADOW."""
        self.call = call
        """The FrotzEnv call that failed (`step`, `get_state`...)."""
        self.command = command
        """The game command it ran, if any."""
        self.what = what
        where = f"on {command!r}" if command is not None else f"in {call}"
        super().__init__(f"the {emulator} Z-machine emulator {what} {where}")

    def __reduce__(self):
        return type(self), (self.emulator, self.call, self.command, self.what)


class EmulatorCrashed(EmulatorFailed):
    """The emulator's process died: a crash of Jericho's C core (a segfault), or a kill from outside."""


class EmulatorHung(EmulatorFailed):
    """The emulator gave no answer within its time limit: its process was killed."""


@dataclass(frozen=True, slots=True)
class Observation:
    """What the harness reads from an emulator after a command, fetched in one round trip."""

    ram: np.ndarray
    """Dynamic memory (`FrotzEnv._get_ram()`), read-only."""
    special: np.ndarray
    """Jericho's curated state bytes for the game (`_get_special_ram()`), read-only."""
    score: int
    moves: int
    game_over: bool
    victory: bool
    rng: tuple[int, int, int]
    """The random-number generator's state, as `get_state()` holds it."""
    world_hash: str = ""
    """`world_hash(env)`, worked out in the emulator's process; empty when not asked for."""

    @classmethod
    def of(cls, raw: tuple, ram: np.ndarray | None = None) -> Observation:
        """From what the emulator's process sent (`ram`: the memory when it came in a state instead)."""
        sent, special, *rest = raw
        memory = np.frombuffer(sent, dtype=np.uint8) if ram is None else ram
        return cls(memory, np.frombuffer(special, dtype=np.uint8), *rest)


# -- the harness's side -------------------------------------------------------------------------------------------
class Emulator:
    """A `jericho.FrotzEnv` in a child process (see the module's docstring): the FrotzEnv calls the harness makes,
    and three bundles that save round trips (`observe`, `play`, `play_from`). Memory and object records travel as
    bytes (pickling Jericho's ctypes arrays costs milliseconds), the world hash as its digest; states
    (`get_state()`) travel whole, so a state taken on one emulator sets another. The state is known without asking
    after a `play` and after calls that change nothing (READS)."""

    def __init__(
        self, story_file: str | Path, seed: int | None = None, role: str = LIVE, time_limit: float = DEFAULT_TIME_LIMIT
    ):
        self.role = role
        self.time_limit = time_limit
        self._failure: str | None = None
        """Why the emulator is stopped (a failure, or closed); None while it runs."""
        self._state: tuple | None = None
        """`get_state()` as the machine stands, when known (every call that may change it forgets it)."""
        self._sent: tuple | None = None
        """The state last sent to the emulator's process, which keeps it: the same state is not sent again (the
        pre-check's trial and the next turn's idle probe both play from the state a command ran from)."""
        ours, theirs = socket.socketpair()
        try:
            try:
                zygote = _Zygote.current()
                self.pid = zygote.fork(theirs)
            except OSError:  # the zygote died: once more, from a fresh one
                zygote = _Zygote.current()
                self.pid = zygote.fork(theirs)
        finally:
            theirs.close()
        self._conn = Connection(ours.detach())
        self._answer = select.poll()  # made once: Connection.poll builds a selector on every call (7 µs)
        self._answer.register(self._conn.fileno(), select.POLLIN)
        self._stop = weakref.finalize(self, _stop_child, self._conn, zygote, self.pid)
        try:
            supported, bindings, player = self._call(
                "start", (str(story_file), seed), limit=max(time_limit, START_TIME_LIMIT)
            )
        except BaseException:
            self.close()
            raise
        self.is_fully_supported: bool = supported
        self.bindings: dict = bindings
        self.player_obj_num: int = player
        self.frotz_lib = _FrotzLib(self)

    @property
    def alive(self) -> bool:
        """Neither failed nor closed."""
        return self._failure is None

    def close(self) -> None:
        if self._failure is None:
            self._failure = "is closed"
        self._stop()

    # -- FrotzEnv's calls ---------------------------------------------------------------------------------------
    def reset(self) -> tuple[str, dict]:
        return self._call("reset")

    def step(self, command: str) -> tuple[str, int, bool, dict]:
        return self._call("step", (command,), command)

    def get_state(self) -> tuple:
        """The machine's state; its arrays are read-only (the same state may be handed out again)."""
        if self._state is None:
            self._state = _unpacked(self._call("get_state"))
        return self._state

    def set_state(self, state: tuple) -> None:
        self._call("set_state", (self._upload(state),))

    def _get_ram(self) -> np.ndarray:
        return np.frombuffer(self._call("_get_ram"), dtype=np.uint8)

    def _get_special_ram(self) -> np.ndarray:
        return np.frombuffer(self._call("_get_special_ram"), dtype=np.uint8)

    def get_world_objects(self, clean: bool = False) -> ctypes.Array:
        from jericho import ZObject

        data = self._call("get_world_objects", (clean,))
        return (ZObject * (len(data) // ctypes.sizeof(ZObject))).from_buffer_copy(data)

    def get_score(self) -> int:
        return self._call("get_score")

    def get_moves(self) -> int:
        return self._call("get_moves")

    def game_over(self) -> bool:
        return self._call("game_over")

    def victory(self) -> bool:
        return self._call("victory")

    def get_dictionary(self) -> list:
        return self._call("get_dictionary")

    def get_walkthrough(self) -> list[str]:
        return self._call("get_walkthrough")

    def get_max_score(self) -> int:
        return self._call("get_max_score")

    # -- bundles ------------------------------------------------------------------------------------------------
    def observe(self, hashed: bool = True) -> Observation:
        """Memory, score, moves, the ending flags, the random-number state and (with `hashed`) the world hash, as
        they are now."""
        return Observation.of(self._call("observe", (hashed,)))

    def play(self, command: str) -> tuple[tuple, str, Observation]:
        """Run `command`: the state it ran from, the game's answer and what it left (`observe()`)."""
        before = self._state
        asked, text, after, raw = self._call("play", (command, before is None), command)
        self._state = _unpacked(after)
        return before or _unpacked(asked), text, Observation.of(raw, ram=self._state[0])

    def play_from(
        self, state: tuple, command: str, observe: bool = True, hashed: bool = False
    ) -> tuple[str, Observation | None]:
        """Set `state`, run `command`: the game's answer and (with `observe`) what it left."""
        text, raw = self._call("play_from", (self._upload(state), command, observe, hashed), command)
        return text, Observation.of(raw) if raw is not None else None

    def _upload(self, state: tuple) -> tuple | None:
        """`state` to send (packed), or None for the one the emulator's process kept from the last time."""
        if state is self._sent:
            return None
        self._sent = state
        return _packed(state)

    # -- the round trip -----------------------------------------------------------------------------------------
    def _call(self, name: str, args: tuple = (), command: str | None = None, limit: float | None = None) -> Any:
        if self._failure is not None:
            raise EmulatorCrashed(self.role, name, command, self._failure)
        if name not in READS and not (name == "lib" and args[0] in LIB_READS):
            self._state = None
        limit = self.time_limit if limit is None else limit
        try:
            self._conn.send_bytes(pickle.dumps((name, args), protocol=pickle.HIGHEST_PROTOCOL))
            if not self._answer.poll(limit * 1000):
                raise self._failed(EmulatorHung, name, command, f"gave no answer within {limit:g} s")
            ok, value, notes = pickle.loads(self._conn.recv_bytes())
        except EmulatorFailed:
            raise
        except (EOFError, OSError):
            raise self._failed(EmulatorCrashed, name, command, f"crashed{self._ending()}") from None
        except BaseException:  # an interrupt while it ran: its answer would be read as the next call's
            self._failed(EmulatorCrashed, name, command, "was interrupted mid-call")
            raise
        if ok is None:  # the zygote says the process ended: `value` is its exit code
            raise self._failed(EmulatorCrashed, name, command, f"crashed ({_how_it_ended(value)})")
        for category, message in notes:
            warnings.warn(message, category, stacklevel=3)
        if not ok:
            raise value
        return value

    def _ending(self) -> str:
        """` (killed by SIGKILL)`, or how else the process ended, when the zygote said so before the socket closed
        (a process that died between two calls is told of as the next call is sent); "" when it did not."""
        try:
            if self._answer.poll(0):
                ok, value, _ = pickle.loads(self._conn.recv_bytes())
                if ok is None and isinstance(value, int):
                    return f" ({_how_it_ended(value)})"
        except (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError):
            pass
        return ""

    def _failed(self, kind: type[EmulatorFailed], name: str, command: str | None, what: str) -> EmulatorFailed:
        self._failure = f"is stopped since it {what}"
        self._stop()
        return kind(self.role, name, command, what)


class _FrotzLib:
    """`FrotzEnv.frotz_lib`'s functions the harness calls (LIB_CALLS), run in the emulator's process."""

    def __init__(self, emulator: Emulator):
        self._emulator = weakref.proxy(emulator)

    def __getattr__(self, name: str):
        if name not in LIB_CALLS:
            raise AttributeError(f"frotz_lib.{name} is not called through the emulator's process")
        return lambda *args: self._emulator._call("lib", (name, *args))


def _packed(state: tuple) -> tuple:
    """A state as it travels: memory and stack as bytes (numpy's arrays pickle slower, on both sides)."""
    ram, stack, *rest = state
    return (ram.tobytes(), stack.tobytes(), *rest)


def _unpacked(packed: tuple | None) -> tuple | None:
    """A state as FrotzEnv gives it, from `_packed`: its arrays read-only (a state may be handed out again)."""
    if packed is None:
        return None
    ram, stack, *rest = packed
    return (np.frombuffer(ram, dtype=np.uint8), np.frombuffer(stack, dtype=np.uint8), *rest)


def _stop_child(conn: Connection, zygote: _Zygote, pid: int) -> None:
    """Close the emulator's socket and have its zygote kill its process (an idle one would exit by itself; a hung
    one would not)."""
    conn.close()
    zygote.kill(pid)


class _Zygote:
    """The process the emulators are forked from: one per harness process, started on first use. A zygote that
    stops serving forks (it died, or a fork request was interrupted mid-way) is replaced for new emulators; the
    emulators it started keep it (they die with it)."""

    _lock = threading.Lock()
    _current: _Zygote | None = None

    def __init__(self):
        ours, theirs = socket.socketpair()
        root = str(Path(__file__).resolve().parents[1])
        code = f"import sys; sys.path.insert(0, {root!r}); from session.emulator import zygote_main; zygote_main()"
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                stdin=theirs.fileno(),
                close_fds=True,
            )
        finally:
            theirs.close()
        ours.settimeout(START_TIME_LIMIT)
        self.control = ours
        self.owner = os.getpid()
        self.lock = threading.RLock()
        """Reentrant: an emulator's finalizer (a kill) may run in a garbage collection inside `fork`."""

    @classmethod
    def current(cls) -> _Zygote:
        """The zygote new emulators come from (started when there is none in this process, or it died)."""
        with cls._lock:
            zygote = cls._current
            if zygote is None or zygote.owner != os.getpid() or zygote.process.poll() is not None:
                zygote = cls._current = cls()
            return zygote

    def fork(self, channel: socket.socket) -> int:
        """A new emulator process on `channel` (its end of a socket pair); its pid."""
        with self.lock:
            try:
                socket.send_fds(self.control, [_REQUEST.pack(_FORK, 0)], [channel.fileno()])
                return _PID.unpack(_receive(self.control, _PID.size))[0]
            except BaseException:  # an answer may be left unread: the next fork would read it as its own
                with _Zygote._lock:
                    if _Zygote._current is self:
                        _Zygote._current = None
                raise

    def kill(self, pid: int) -> None:
        """Kill the emulator `pid` if it still runs (the zygote knows; a pid it has reaped may be anyone's now)."""
        if self.owner != os.getpid():
            return
        with self.lock:
            try:
                self.control.sendall(_REQUEST.pack(_KILL, pid))
            except OSError:
                pass


def _receive(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("the zygote is gone")
        data += chunk
    return data


# -- the zygote and the emulators' side ---------------------------------------------------------------------------
def zygote_main() -> None:
    """The zygote (started by `_Zygote` with its socket as stdin): fork an emulator for each request, kill one on
    request, tell the harness how each ended (its exit code, on the emulator's own socket), and exit once the
    harness is gone."""
    import jericho  # noqa: F401  loaded once here, shared by every emulator forked from here

    build_templates_on_demand()
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: it is the harness's
    if hasattr(signal, "SIGXFSZ"):  # a file-size limit: Jericho's copy of its C library fails with an OSError
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    channels: dict[int, int] = {}
    """Emulator pid -> the zygote's copy of its socket, to say how it ended."""

    def reap(*_) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            if pid in channels:
                _tell_ending(channels.pop(pid), os.waitstatus_to_exitcode(status))

    signal.signal(signal.SIGCHLD, reap)
    while True:
        try:
            request, fds = _request(control)
        except (OSError, EOFError):
            break  # the harness is gone: so are the emulators, with their parent
        what, pid = _REQUEST.unpack(request)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # reap() must find every child registered
        try:
            if what == _KILL:
                if pid in channels:  # not reaped yet: the pid is still that emulator's
                    os.kill(pid, signal.SIGKILL)
                continue
            pid = os.fork()
            if pid == 0:
                _emulator_main(fds[0], control, channels)
            channels[pid] = fds[0]
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        try:
            control.sendall(_PID.pack(pid))
        except OSError:
            break


class TemplatesOnDemand:
    """Jericho's `TemplateActionGenerator`, built the first time something asks it for anything. FrotzEnv builds one
    on every start and it is most of what a start costs (zork1's FrotzEnv starts in about 50 ms with it, 3 without:
    each of the game's verbs weighed against Jericho's counts of transcripts, in Python); only `get_valid_actions`
    uses it, and no call the emulators serve (`_CALLS`) reaches that."""

    def __init__(self, rom_bindings: dict):
        self._bindings = rom_bindings
        self._built: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_bindings", "_built"):  # copy's and pickle's probes; a half-made copy
            raise AttributeError(name)
        if self._built is None:
            from jericho.template_action_generator import TemplateActionGenerator

            self._built = TemplateActionGenerator(self._bindings)
        return getattr(self._built, name)


def build_templates_on_demand() -> None:
    """Every FrotzEnv made in this process from now on builds its action templates when they are first used
    (`TemplatesOnDemand`). The zygote's emulators inherit it; the harness's own process is left as Jericho has it."""
    import jericho.jericho

    jericho.jericho.TemplateActionGenerator = TemplatesOnDemand  # FrotzEnv.load's name for it


def _request(control: socket.socket) -> tuple[bytes, list[int]]:
    """One request, with the socket it passes (a fork's)."""
    data, fds, _, _ = socket.recv_fds(control, _REQUEST.size, 1)
    if not data:
        raise EOFError
    while len(data) < _REQUEST.size:
        more = control.recv(_REQUEST.size - len(data))
        if not more:
            raise EOFError
        data += more
    return data, fds


def _how_it_ended(code: int) -> str:
    """An exit code as `killed by SIGKILL` or `exit status 1`."""
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def _tell_ending(fd: int, code: int) -> None:
    """Send the harness an emulator's exit code on its socket (never blocking: the harness may have closed it)."""
    os.set_blocking(fd, False)
    with Connection(fd) as conn:
        try:
            conn.send_bytes(pickle.dumps((None, code, ())))
        except OSError:
            pass


def _emulator_main(fd: int, control: socket.socket, channels: dict[int, int]) -> None:
    """An emulator process, just forked from the zygote: serve the harness on `fd`; never returns."""
    code = 0
    try:
        control.close()
        for other in channels.values():  # the other emulators' sockets: they must close when their process ends
            os.close(other)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _die_with_parent(os.getppid())
        _serve(Connection(fd))
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def _die_with_parent(parent: int) -> None:
    """End this process when the zygote ends."""
    try:
        if ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) == 0:
            if os.getppid() != parent:  # it ended before the signal was asked for
                os._exit(0)
            return
    except (AttributeError, OSError):
        pass
    watch_parent(parent)


def watch_parent(parent: int) -> None:
    """End this process, quietly, once `parent` is no longer its parent (checked every WATCH_SECONDS by a daemon
    thread). For a process whose parent may start it from any thread: PR_SET_PDEATHSIG fires when the thread that
    started it ends, not the process."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(WATCH_SECONDS)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def _serve(conn: Connection) -> None:
    """Answer the harness's calls until it closes the socket: (True, value, warnings), or (False, the exception,
    warnings) for one that raised."""
    env: Any = None
    while True:
        try:
            name, args = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):  # the harness closed its end, or died with bytes unread (a reset)
            return
        notes: list[tuple[type[Warning], str]] = []
        if name in WARNING_CALLS:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                env, answer = _answer(env, name, args)
            notes = [(w.category, str(w.message)) for w in caught]
        else:
            env, answer = _answer(env, name, args)
        try:
            data = pickle.dumps((*answer, notes), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an answer that does not pickle
            data = pickle.dumps((False, RuntimeError(f"{name}: {exc}"), notes), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            conn.send_bytes(data)
        except OSError:  # the harness is gone: nobody is left to answer
            return


def _answer(env: Any, name: str, args: tuple) -> tuple[Any, tuple[bool, Any]]:
    """The emulator (made by `start`) and the call's answer: (True, value) or (False, the exception)."""
    try:
        if name == "start":
            from jericho import FrotzEnv

            env = FrotzEnv(*args)
            if env._seed == TIME_SEED:  # no seed given and none in the bindings: a fixed one, so that runs repeat
                env.seed(DEFAULT_SEED)
            return env, (True, (bool(env.is_fully_supported), env.bindings, int(env.player_obj_num or 0)))
        return env, (True, _CALLS[name](env, *args))
    except Exception as exc:
        return env, (False, exc)


def world_hash(env: Any, special: np.ndarray) -> str:
    """`GameView.world_hash`: MD5 of what Jericho's `get_world_state_hash()` tells apart, its clean object tree (the
    per-game bindings drop the "touched" bits and NPCs that wander on their own) and the special RAM `special`.

    Hashes the tree links, attributes and property numbers of Jericho's object records as bytes; the 64-byte names
    (static text) are left out, so the digest reads a third of the bytes (0.07 ms in all, where formatting every
    object as text took 2 ms). Worked out in the emulator's process: the digest travels, not the records."""
    from jericho import ZObject

    objects = env.get_world_objects(clean=True)
    records = np.frombuffer(objects, dtype=np.uint8).reshape(len(objects), -1)
    digest = hashlib.md5(records[:, ZObject.parent.offset :].tobytes())
    digest.update(special.tobytes())
    return digest.hexdigest()


def _observation(env: Any, hashed: bool, ram: bool = True) -> tuple:
    """`Observation`'s fields as they travel (`ram`: False when the memory travels in a state beside it)."""
    lib = env.frotz_lib
    special = env._get_special_ram()
    return (
        env._get_ram().tobytes() if ram else b"",
        special.tobytes(),
        lib.get_score(),
        lib.get_moves(),
        env.game_over(),
        env.victory(),
        (lib.getRngA(), lib.getRngInterval(), lib.getRngCounter()),
        world_hash(env, special) if hashed else "",
    )


_kept: dict[str, tuple] = {}
"""In an emulator's process: the state last sent (`Emulator._upload`)."""


def _set_state(env: Any, packed: tuple | None) -> None:
    """`FrotzEnv.set_state` from a packed state (None: the one sent last), on writable arrays (Jericho hands them
    to C)."""
    if packed is None:
        packed = _kept["state"]
    _kept["state"] = packed
    ram, stack, *rest = packed
    writable = [np.frombuffer(bytearray(part), dtype=np.uint8) for part in (ram, stack)]
    env.set_state((*writable, *rest))


def _lib(env: Any, name: str, *args: Any) -> Any:
    if name not in LIB_CALLS:
        raise AttributeError(f"frotz_lib.{name} is not served")
    return getattr(env.frotz_lib, name)(*args)


def _play_from(env: Any, state: tuple | None, command: str, observe: bool, hashed: bool) -> tuple:
    _set_state(env, state)
    text = env.step(command)[0]
    return text, _observation(env, hashed) if observe else None


def _play(env: Any, command: str, before: bool) -> tuple:
    """(the state before, when asked for; the answer; the state after; the observation after)."""
    state = _packed(env.get_state()) if before else None
    text = env.step(command)[0]
    observation = _observation(env, True, ram=False)  # read before the state, as the harness reads them
    return state, text, _packed(env.get_state()), observation


WARNING_CALLS = frozenset({"start", "step", "play", "get_walkthrough"})
"""Calls on which Jericho warns (an unsupported game, a command cut to its input buffer, no walkthrough): their
warnings are sent back and warned again in the harness. A probe's (`play_from`) would only repeat the live game's."""
_CALLS = {
    "reset": lambda env: env.reset(),
    "step": lambda env, command: env.step(command),
    "get_state": lambda env: _packed(env.get_state()),
    "set_state": _set_state,
    "_get_ram": lambda env: env._get_ram().tobytes(),
    "_get_special_ram": lambda env: env._get_special_ram().tobytes(),
    "get_world_objects": lambda env, clean: bytes(env.get_world_objects(clean=clean)),
    "get_score": lambda env: env.get_score(),
    "get_moves": lambda env: env.get_moves(),
    "game_over": lambda env: env.game_over(),
    "victory": lambda env: env.victory(),
    "get_dictionary": lambda env: list(env.get_dictionary()),
    "get_walkthrough": lambda env: list(env.get_walkthrough()),
    "get_max_score": lambda env: env.get_max_score(),
    "lib": _lib,
    "observe": _observation,
    "play": _play,
    "play_from": _play_from,
}
"""What an emulator process answers, by call name (`start` aside: it makes the FrotzEnv)."""
