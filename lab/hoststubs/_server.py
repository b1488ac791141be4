"""The host stubs' server: runs a stub for a client (lab/stubserver.py writes the clients) without a Python start.

Started by lab/stubserver.py as `python3 -S _server.py FAILURES` with the interpreter the stubs' own
`#!/usr/bin/env -S python3 -S` finds; it reads its token from the first line of stdin (not argv, which every user
can read), prints its port on stdout and serves until its stdin closes (its owner ended, however it ended). It
imports the stubs' modules once, and for each connection forks a child that runs one stub exactly as a standalone
start would, on the client's own process state, which it reads from /proc/<pid>:
argv (cmdline), environment (environ), working folder (cwd), umask, and the standard streams, reopened from
/proc/<pid>/fd/{0,1,2} where that gives the same stream (a pipe, a terminal, /dev/null, a file opened for append);
a stream reopening cannot share (a file written from its current offset, a socket) is written to memory and relayed
for the client to write. In the child the stub's file runs as `__main__` with fresh globals, sys.argv, os.environ
and sys.std* built as the interpreter builds them in UTF-8 mode (the C locale the lab runs everything in), so its
output, buffering, exit status and tracebacks are the standalone ones. Anything the child cannot reproduce (a
PYTHON* variable, another locale, a closed standard stream, an unreadable /proc) answers `exec`: the client then
runs the real stub.

Protocol (one line each way, then the relayed bytes): the client sends `TOKEN PID NARGS\\n` (NARGS: how many of its
cmdline's last words are the arguments); the child answers `STATUS OUTLEN ERRLEN\\n` and OUTLEN + ERRLEN relayed
bytes, or `exec\\n`. A child that cannot serve (a bad token, a bug here) writes why to FAILURES and exits 70 without
an answer; the parent logs every child that does not exit 0 there too, and the clients log a server they cannot
reach, so the harness sees any of it (lab/stubserver.py `check`).
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

SERVER_ERROR = 70  # EX_SOFTWARE: the child could not serve (never a stub's answer)
CHILD_TIMEOUT_S = 120  # a stub that hangs longer is killed (the lab's own exec timeout)
O_APPEND = os.O_APPEND


class Standalone(Exception):
    """The child cannot reproduce a standalone start for this call: the client runs the real stub."""


class Code:
    """Each stub's file compiled here in the parent, before the fork (a child's compile is lost with it: 6 ms per
    call for `ip`), and compiled again when it changes; the model's modules (MODULES) loaded again when one changes.
    One stat per file per call."""

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


def serve_one(conn: socket.socket, token: bytes, code: Code) -> None:
    """The child: one call, then os._exit."""
    request = b""
    while not request.endswith(b"\n") and len(request) < 256:
        chunk = conn.recv(256)
        if not chunk:
            break
        request += chunk
    words = request.split()
    if len(words) != 3 or words[0] != token or not words[1].isdigit() or not words[2].isdigit():
        raise RuntimeError(f"not a client's request: {request[:80]!r}")
    pid, nargs = int(words[1]), int(words[2])
    try:
        cmdline = read_proc(pid, "cmdline").split(b"\0")[:-1]
        env = decode_env(read_proc(pid, "environ"))
        check_env(env)
        if nargs >= len(cmdline):
            raise ValueError(f"{nargs} arguments, cmdline {cmdline!r}")
        argv = [os.fsdecode(a) for a in cmdline[len(cmdline) - nargs - 1:]]
        path, compiled = code.get(os.path.basename(argv[0]))
        cwd = os.readlink(f"/proc/{pid}/cwd")
        umask = next(int(line.split()[1], 8) for line in read_proc(pid, "status").splitlines()
                     if line.startswith(b"Umask:"))
        relay: dict[object, int] = {}
        fds = [reopen(pid, fd, relay) for fd in (0, 1, 2)]
        os.chdir(cwd)
    except (OSError, ValueError, StopIteration, IndexError, Standalone):
        answer(conn, b"exec\n")
        return
    os.umask(umask)
    for fd, new in enumerate(fds):
        os.dup2(new, fd)
        os.close(new)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = argv
    sys.path[0] = HERE
    stdio()
    status = run_stub(path, compiled)
    # the relayed streams: stdout's file, then stderr's (when it is another file)
    out = err = b""
    relays = list(relay.values())
    if relays:
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
    answer(conn, b"%d %d %d\n" % (status, len(out), len(err)) + out + err)


def child(listener: socket.socket, conn: socket.socket, token: bytes, code: Code, failures: str) -> None:
    listener.close()
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.alarm(CHILD_TIMEOUT_S)
    status = 0
    try:
        serve_one(conn, token, code)
    except BaseException:  # a server bug: logged, and the client sees no answer
        log(failures, "stub server child failed:\n" + traceback.format_exc())
        status = SERVER_ERROR
    finally:
        try:
            conn.close()
        finally:
            os._exit(status)


def reap(failures: str) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if status != 0:
            log(failures, f"stub server child {pid} ended with wait status {status:#x}")


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
    devnull = os.open(os.devnull, os.O_WRONLY)  # no child holds the owner's pipe
    os.dup2(devnull, 1)
    os.close(devnull)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    poll = select.poll()
    poll.register(listener, select.POLLIN)
    poll.register(0, select.POLLIN | select.POLLHUP)
    while True:
        for fd, _ in poll.poll(1000):
            if fd == 0:
                if not os.read(0, 512):  # the owner is gone (or stopping us): its folder goes with us
                    folder = os.path.dirname(failures)  # absolute: the owner passes it so
                    if os.path.basename(folder).startswith("rocefab-stubserver-"):
                        shutil.rmtree(folder, ignore_errors=True)
                    return
                continue
            conn, _ = listener.accept()
            code.refresh()
            if os.fork() == 0:
                child(listener, conn, token, code, failures)
            conn.close()
        reap(failures)


if __name__ == "__main__":
    main()
