"""The host stubs' server: runs a stub for a client (lab/host/stubserver.py writes the clients) without a Python start.

Started by lab/host/stubserver.py as `python3 -S _server.py FAILURES` with the interpreter the stubs' own
`#!/usr/bin/env -S python3 -S` finds; it reads its token from the first line of stdin (not argv, which every user
can read), prints its port on stdout and serves until its stdin closes (its owner ended, however it ended). It
imports the stubs' modules and compiles their files once, then forks WORKERS workers that accept calls on the one
listening socket. A worker serves one call at a time, in its own process, as the client: it reads the client's
state from /proc/<pid> — argv (cmdline), environment (environ), working folder (cwd), umask, and the standard
streams, reopened from /proc/<pid>/fd/{0,1,2} where that gives the same stream (a pipe, a terminal, /dev/null, a
file opened for append); a stream reopening cannot share (a file written from its current offset, a socket) is
written to memory and relayed for the client to write — puts on that state, runs the stub's file as `__main__` with
fresh globals, sys.argv, os.environ and sys.std* built as the interpreter builds them in UTF-8 mode (the C locale
the lab runs everything in), so its output, buffering, exit status and tracebacks are the standalone ones, and then
takes its own state back (as_client). Anything it cannot reproduce (a PYTHON* variable, another locale, a closed
standard stream, an unreadable /proc) answers `exec`: the client then runs the real stub.

Why workers and not a fork per call (how this server began): a fork of a loaded interpreter, its copy-on-write
faults and its exit cost ~5 CPU-ms per call, three times the call itself (1.6 CPU-ms served in a worker, measured
2026-12-02 on one host's --check, 8 calls). The price: a stub's changes to the modules it imports would outlive its
call in that worker (the stubs keep no state in them: their state is the fake host's files, under its lock), and a
stub that hangs holds one worker until CALL_TIMEOUT_S ends it (SIGALRM) and the server starts another.

Protocol (one line each way, then the relayed bytes): the client sends `TOKEN PID NARGS\\n` (NARGS: how many of its
cmdline's last words are the arguments); the worker answers `STATUS OUTLEN ERRLEN\\n` and OUTLEN + ERRLEN relayed
bytes, or `exec\\n`. A worker that cannot serve (a bad token, a bug here) writes why to FAILURES and exits 70
without an answer; the server logs every worker that ends there too and starts another, and the clients log a
server they cannot reach, so the harness sees any of it (lab/host/stubserver.py `check`).
"""

# ruff: noqa: PTH113, PTH115, PTH116, PTH118, PTH119, PTH120, PTH123, PTH208

from __future__ import annotations

import builtins
import contextlib
import io
import os
import select
import signal
import socket
import stat
import sys
import traceback
from collections.abc import Iterator
from types import CodeType

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
# The stubs' lazy imports, so no child pays for them.
import ipaddress  # noqa: E402, F401
import json  # noqa: E402, F401
import shutil  # noqa: E402

# loaded once here, inherited by every child (top-level modules of this folder, as the stubs import them)
import _common  # type: ignore[import-not-found]  # noqa: E402
import _hardware  # type: ignore[import-not-found]  # noqa: E402
import _rdma  # type: ignore[import-not-found]  # noqa: E402
import _routing  # type: ignore[import-not-found]  # noqa: E402
import _state  # type: ignore[import-not-found]  # noqa: E402

# reloaded in this order when one changes: each after the modules it imports
MODULES = (_common, _routing, _rdma, _hardware, _state)

SERVER_ERROR = 70  # EX_SOFTWARE: a worker could not serve (never a stub's answer)
CALL_TIMEOUT_S = 120  # a stub that hangs longer is killed with its worker (the lab's own exec timeout)
WORKERS = 4  # calls served at once: more than the 2 cores, so one slow call does not queue the rest
O_APPEND = os.O_APPEND


class Standalone(Exception):
    """The child cannot reproduce a standalone start for this call: the client runs the real stub."""


class Code:
    """Each stub's file compiled once, before the workers fork (a script is never cached: 6 ms per call for `ip`),
    and compiled again in a worker when it changes; the model's modules (MODULES) loaded again when one changes. One
    stat per file per call."""

    def __init__(self) -> None:
        self.compiled: dict[str, tuple[tuple[int, int], CodeType]] = {}
        self.modules = {module.__file__: self.stamp(module.__file__) for module in MODULES}
        self.refresh()

    @staticmethod
    def stamp(path: str) -> tuple[int, int]:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size

    def refresh(self) -> None:
        import importlib

        if any(self.stamp(path) != stamp for path, stamp in self.modules.items()):
            for module in MODULES:
                importlib.reload(module)
            self.modules = {path: self.stamp(path) for path in self.modules}
        for tool in os.listdir(HERE):
            path = os.path.join(HERE, tool)
            if tool.startswith(("_", ".")) or not os.path.isfile(path) or not os.access(path, os.X_OK):
                continue
            key = self.stamp(path)
            if self.compiled.get(tool, (None,))[0] != key:
                with open(path, "rb") as f:
                    self.compiled[tool] = (key, compile(f.read(), path, "exec", dont_inherit=True))

    def get(self, tool: str) -> tuple[str, CodeType]:
        if tool not in self.compiled:
            raise Standalone
        return os.path.join(HERE, tool), self.compiled[tool][1]


def log(failures: str, text: str) -> None:
    with open(failures, "a") as f:
        f.write(text.rstrip("\n") + "\n")


def read_proc(pid: int, name: str) -> bytes:
    with open(f"/proc/{pid}/{name}", "rb") as f:
        return f.read()


def fd_flags(pid: int, fd: int) -> tuple[int, int]:
    """(position, open flags) of the client's fd, from fdinfo."""
    info = dict(line.split(b":", 1) for line in read_proc(pid, f"fdinfo/{fd}").splitlines() if b":" in line)
    return int(info[b"pos"]), int(info[b"flags"], 8)


def reopen(pid: int, fd: int, relay: dict[object, int]) -> int:
    """An fd of the child standing for the client's fd: the same stream reopened, or a memory file to relay (one per
    file, so `>f 2>&1` keeps the order of both streams in one)."""
    path = f"/proc/{pid}/fd/{fd}"
    try:
        st = os.stat(path)
    except OSError:
        raise Standalone from None  # closed: the interpreter's sys.std* would be None
    mode = st.st_mode
    if fd == 0:
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
            new = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.set_blocking(new, True)
            return new
        if stat.S_ISREG(mode):  # read from where the client is (the offset itself is not shared)
            new = os.open(path, os.O_RDONLY)
            os.lseek(new, fd_flags(pid, fd)[0], os.SEEK_SET)
            return new
        return os.open(os.devnull, os.O_RDONLY)
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        try:  # O_NONBLOCK: a FIFO without a reader fails here instead of blocking; then the client writes
            new = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(new, True)
            return new
        except OSError:
            pass
    elif stat.S_ISREG(mode) and fd_flags(pid, fd)[1] & O_APPEND:
        return os.open(path, os.O_WRONLY | O_APPEND)
    key = (st.st_dev, st.st_ino, *fd_flags(pid, fd))
    if key not in relay:
        relay[key] = os.memfd_create(f"relay{fd}")
    return os.dup(relay[key])


def decode_env(raw: bytes) -> dict[str, str]:
    env: dict[str, str] = {}
    for entry in raw.split(b"\0"):
        name, eq, value = entry.partition(b"=")
        if eq and name:
            env.setdefault(os.fsdecode(name), os.fsdecode(value))  # the first wins, as getenv finds it
    return env


def check_env(env: dict[str, str]) -> None:
    """What makes a standalone start differ from the child: PYTHON* settings, and a locale other than C (UTF-8 mode,
    the stdio encodings reproduced here)."""
    if any(name.startswith("PYTHON") for name in env):
        raise Standalone
    locale = env.get("LC_ALL") or env.get("LC_CTYPE") or env.get("LANG") or "C"
    if locale not in ("C", "POSIX"):
        raise Standalone


def stdio() -> None:
    """sys.stdin/stdout/stderr over fds 0-2 as the interpreter makes them in UTF-8 mode (pylifecycle create_stdio):
    stdout line-buffered only on a terminal, stderr always line-buffered and backslash-replacing."""
    streams = []
    for fd, name, errors in ((0, "<stdin>", "surrogateescape"), (1, "<stdout>", "surrogateescape"),
                             (2, "<stderr>", "backslashreplace")):
        buffered = io.open(fd, "rb" if fd == 0 else "wb", buffering=-1, closefd=False)  # noqa: SIM115, UP020
        buffered.raw.name = name  # type: ignore[attr-defined]
        text = io.TextIOWrapper(buffered, encoding="utf-8", errors=errors, newline="\n",
                                line_buffering=fd == 2 or (fd == 1 and os.isatty(fd)))
        text.mode = "r" if fd == 0 else "w"  # type: ignore[misc]
        streams.append(text)
    sys.stdin = sys.__stdin__ = streams[0]  # type: ignore[misc]  # sys's Final: the interpreter sets both
    sys.stdout = sys.__stdout__ = streams[1]  # type: ignore[misc]
    sys.stderr = sys.__stderr__ = streams[2]  # type: ignore[misc]


def exit_status(code: object) -> int:
    """What the interpreter exits with for SystemExit(code)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_stub(path: str, code: CodeType) -> int:
    """The stub's file as __main__, the interpreter's way: its exit status."""
    main = type(sys)("__main__")
    main.__file__ = path
    main.__builtins__ = builtins  # type: ignore[attr-defined]
    main.__cached__ = None  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)  # the stub, as `python3 -S stub` would run it
        status = 0
    except SystemExit as exc:
        status = exit_status(exc.code)
    except BaseException as exc:  # unhandled: its traceback (the stub's frames) and 1
        tb = exc.__traceback__.tb_next if exc.__traceback__ else None
        traceback.print_exception(type(exc), exc, tb)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # as at interpreter exit: a stdout that cannot be flushed makes the status 120
            status = 120
    return status


def answer(conn: socket.socket, data: bytes) -> None:
    """Send the answer; a client that is gone (killed by its caller's timeout) has nobody waiting for it."""
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        conn.sendall(data)


class Client:
    """The calling process's state, read from /proc before anything of the server's changes."""

    def __init__(self, pid: int, nargs: int, code: Code) -> None:
        cmdline = read_proc(pid, "cmdline").split(b"\0")[:-1]
        self.env = decode_env(read_proc(pid, "environ"))
        check_env(self.env)
        if nargs >= len(cmdline):
            raise ValueError(f"{nargs} arguments, cmdline {cmdline!r}")
        self.argv = [os.fsdecode(a) for a in cmdline[len(cmdline) - nargs - 1:]]
        self.path, self.code = code.get(os.path.basename(self.argv[0]))
        self.cwd = os.readlink(f"/proc/{pid}/cwd")
        self.umask = next(int(line.split()[1], 8) for line in read_proc(pid, "status").splitlines()
                          if line.startswith(b"Umask:"))
        self.relay: dict[object, int] = {}
        self.fds: list[int] = []
        try:
            for fd in (0, 1, 2):
                self.fds.append(reopen(pid, fd, self.relay))
            os.stat(self.cwd)  # gone (the client's folder removed): a standalone start would fail the same way
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        for fd in (*self.fds, *self.relay.values()):
            os.close(fd)
        self.fds, self.relay = [], {}

    def relayed(self) -> tuple[bytes, bytes]:
        """What the stub wrote to the memory files standing for the client's stdout and stderr (while fds 1 and 2
        are still the client's)."""
        out = err = b""
        relays = list(self.relay.values())
        for stream in (1, 2):
            target = os.fstat(stream)
            for fd in relays:
                st = os.fstat(fd)
                if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                    os.lseek(fd, 0, os.SEEK_SET)
                    data = b"".join(iter(lambda fd=fd: os.read(fd, 65536), b""))  # type: ignore[misc]
                    out, err = (out + data, err) if stream == 1 else (out, err + data)
                    relays.remove(fd)
                    break
        return out, err


@contextlib.contextmanager
def as_client(client: Client) -> Iterator[None]:
    """This process wears the client's streams, environment, folder, umask and argv for one call, and its own
    again afterwards, whatever the stub did to them (it may rebind sys.std*, os.environ or sys.argv)."""
    own_fds = [os.dup(fd) for fd in (0, 1, 2)]
    own_env = dict(os.environ)
    own_cwd = os.getcwd()  # noqa: PTH109
    own_streams = (sys.stdin, sys.stdout, sys.stderr)
    own_argv, own_main = sys.argv, sys.modules["__main__"]
    own_umask = os.umask(client.umask)
    try:
        for fd, new in enumerate(client.fds):
            os.dup2(new, fd)
        os.environ.clear()
        os.environ.update(client.env)
        os.chdir(client.cwd)
        sys.argv = list(client.argv)
        sys.path[0] = HERE
        stdio()
        yield
    finally:
        # the stub's stream objects first (nothing written through them may reach the restored fds), then the fds
        sys.stdin, sys.stdout, sys.stderr = own_streams
        sys.__stdin__, sys.__stdout__, sys.__stderr__ = own_streams  # type: ignore[misc, assignment]  # sys's Final
        for fd, own in enumerate(own_fds):
            os.dup2(own, fd)
            os.close(own)
        os.chdir(own_cwd)
        os.environ.clear()
        os.environ.update(own_env)
        os.umask(own_umask)
        sys.argv = own_argv
        sys.modules["__main__"] = own_main


def serve_one(conn: socket.socket, token: bytes, code: Code) -> None:
    """One call, run in this process as the client's; any exception is a server failure (the worker ends)."""
    request = b""
    while not request.endswith(b"\n") and len(request) < 256:
        chunk = conn.recv(256)
        if not chunk:
            break
        request += chunk
    words = request.split()
    if len(words) != 3 or words[0] != token or not words[1].isdigit() or not words[2].isdigit():
        raise RuntimeError(f"not a client's request: {request[:80]!r}")
    try:
        client = Client(int(words[1]), int(words[2]), code)
    except (OSError, ValueError, StopIteration, IndexError, Standalone):
        answer(conn, b"exec\n")
        return
    try:
        with as_client(client):
            status = run_stub(client.path, client.code)
            out, err = client.relayed() if client.relay else (b"", b"")
    finally:
        client.close()
    answer(conn, b"%d %d %d\n" % (status, len(out), len(err)) + out + err)


def worker(listener: socket.socket, token: bytes, code: Code, failures: str, owner: int) -> None:
    """A forked worker: accepts and serves calls one at a time until the server (`owner`) is gone. A call longer
    than CALL_TIMEOUT_S ends the worker (SIGALRM's default), a server bug too; the server starts another."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with(owner)
    listener.settimeout(1.0)  # then look whether the server still runs (where die_with could not be set)
    status = 0
    try:
        while os.getppid() == owner:
            try:
                conn, _ = listener.accept()
            except (TimeoutError, BlockingIOError, InterruptedError):
                continue
            with conn:
                code.refresh()
                signal.alarm(CALL_TIMEOUT_S)
                serve_one(conn, token, code)
                signal.alarm(0)
    except BaseException:  # a server bug: logged, the client sees no answer, the worker is replaced
        log(failures, "stub server worker failed:\n" + traceback.format_exc())
        status = SERVER_ERROR
    finally:
        os._exit(status)


def die_with(owner: int) -> None:
    """Be killed when the server dies, however it dies (a killed server must not leave workers serving its port):
    Linux's parent-death signal, through libc."""
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != owner:  # it died before the signal was asked for
        os._exit(0)


def start_worker(listener: socket.socket, token: bytes, code: Code, failures: str) -> int:
    owner = os.getpid()
    pid = os.fork()
    if pid == 0:
        worker(listener, token, code, failures, owner)
    return pid


def main() -> None:
    failures = sys.argv[1]
    token = b""
    while not token.endswith(b"\n"):
        chunk = os.read(0, 1)
        if not chunk:
            raise SystemExit("stub server: no token on stdin")
        token += chunk
    token = token.strip()
    if not sys.flags.utf8_mode:
        raise SystemExit("stub server: start it in the C locale (UTF-8 mode), as the stubs' decoding assumes")
    code = Code()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))  # the loopback only
    listener.listen(512)
    print(listener.getsockname()[1], flush=True)
    devnull = os.open(os.devnull, os.O_WRONLY)  # no worker holds the owner's pipe as its stdout
    os.dup2(devnull, 1)
    os.close(devnull)
    workers = {start_worker(listener, token, code, failures) for _ in range(WORKERS)}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    poll = select.poll()
    poll.register(0, select.POLLIN | select.POLLHUP)
    try:
        while True:
            if poll.poll(200) and not os.read(0, 512):  # the owner is gone (or stopping us): so are we
                folder = os.path.dirname(failures)  # absolute: the owner passes it so
                if os.path.basename(folder).startswith("rocefab-stubserver-"):
                    shutil.rmtree(folder, ignore_errors=True)
                return
            while workers:  # replace every worker that ended (only a failure or a timeout ends one)
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                workers.discard(pid)
                log(failures, f"stub server worker {pid} ended with wait status {status:#x}")
                workers.add(start_worker(listener, token, code, failures))
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        for pid in workers:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
