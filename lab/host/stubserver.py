"""The host stubs' server: fake-host tool calls at the cost of a bash start instead of a Python start.

Every call of a stub (`ip`, `ethtool`, `mlnx_qos`, ...) used to be a fresh `python3 -S`: ~12 ms of interpreter
start on this 2-core machine, plus ~3 ms compiling the stub's file (a script is never cached) and the imports. With
the server, the executables on a fake host's PATH are bash clients (`bin/<tool>` in the server's folder) that
connect to one long-lived Python server on 127.0.0.1 (stubs/_server.py), whose workers have the stub modules
loaded. A worker reads the client's argv, environment, working folder, umask and standard streams from /proc and
runs the stub file as `__main__` exactly as a standalone start would, writing straight to the client's own pipes,
so output bytes, stdout/stderr interleaving, exit status and tracebacks stay the standalone ones (details and the
few cases relayed or sent back to a standalone run: _server.py). The stubs themselves are
unchanged and still run standalone (`STUBS / "ip"`, `stubs_without` folders).

Measured on this 2-core machine, shared with other jobs (medians; CPU = user+sys of every process involved,
the server's forked children included; measured 2026-12-01, with the load average noted per row):

    one call, `ip -o link show` / `mlnx_qos -i` (40 calls each, load 4-10)            CPU per call   wall
      python3 -S -c pass (the interpreter alone)                                        11.8 ms     14.6 ms
      standalone stub, _state importing typing (before)                                     -         50 ms (load 5)
      standalone stub, no typing import                                                 23 / 20 ms  26 / 21 ms
      served: client bash 2.8 + server fork 1.2 + child 4.5 ms                        8.5 / 8.6 ms 11 / 10 ms
    one lab host (intents/lab.yaml gpu001, bond + RoCE LAG; 3 runs, load 3)   standalone -> served
      --check, pristine (15 stub calls among ~95 processes)                   0.65 -> 0.47 s wall, 0.44 -> 0.26 s CPU
      apply (56 stub calls)                                                   2.78 -> 1.49 s wall, 1.73 -> 0.93 s CPU
      --check, applied (17 stub calls)                                        0.89 -> 0.59 s wall, 0.55 -> 0.34 s CPU
      verify's host script (5 stub calls), also without $(cat) per attribute 0.67 -> 0.08 s wall, 0.25 -> 0.06 s CPU
    202-device lab (176 hosts; the two labs side by side, 3 alternating runs, load 10-24)
      apply --dry-run -j 32                                     69.7 -> 46.4 s wall, 124 -> 79 CPU-s
      verify (factory state)                                    17.9 -> 19.1 s wall (noise), 32 -> 30 CPU-s
    tests/test_host_script.py + tests/test_preflight.py, -n 2   86 -> 72 s wall (load 7 -> 3)

Where the served dry run's 79 CPU-s go: the rocefab apply process 21, the lab process 10, the hosts' bash scripts
with their coreutils and the clients 30, this server 16 (2,640 calls, ~6 ms each). Its floor on two idle cores is
therefore ~40 s, not 10: the rendered script's own ~80 processes per `--check` (tr, awk, subshells) and apply's
own CPU dominate. verify's 30 CPU-s are half its own process (15 CPU-s in one interpreter, so ~15 s of wall at
best); the hosts' share is ~8 CPU-s.

Alternatives weighed: (1) the stubs' logic as `main(argv, env, stdin) -> (out, err, code)` run in server threads:
saves the fork, but every `print` in the stubs (which other work keeps editing) would move to a context object,
every reader of os.environ, sys.argv and sys.std* would become call-local, and a stub bug could hang or corrupt the
shared process. The server first forked a child per call (a private copy of the loaded modules for each); since
2026-12-02 a few forked workers each serve one call at a time in their own process, wearing the client's state for
the call and their own after it, so the stubs stay as they are and a hung stub holds one worker: the server's CPU
for one host's --check (8 calls) fell from 57 to 13 ms, the 202-device dry run's lab CPU from 27.9 to 17.2 CPU-s
(wall 21.4 -> 15.7 s at -j 16; both measured in the same hour, 2026-12-02 07:15-07:30). (2) A compiled client: saves
most of the bash start; built where a C compiler is (lab/host/stubclient.py; 2.9 -> 1.7 CPU-ms per call on the calling
side, a `$(...)` subshell included, measured 2026-12-02 at load 8), the bash client elsewhere. (3) Relaying stdout and
stderr over the socket: needs framing, and bash reads a socket byte by byte, so the client would fork `head` or
`cat` for any output; reopening the client's own pipes from /proc needs none (only a file written from its offset,
or a socket, is relayed). (4) Fewer processes per script: verify's host script now reads sysfs with the read
builtin (126 forks -> 7); the rendered host scripts' tr/awk/subshells are the next floor (templates/host/).

`shared(stubs, tools)` is the process's server, started on first use and stopped at exit; the server also ends
when its stdin closes, so a killed owner leaves nothing behind. `check()` raises `StubServerError` once anything went
wrong (a client that could not reach the server, a child that failed): a dead server must not look like a tool's
error. ROCEFAB_LAB_STUB_SERVER=0 turns it off (every call a standalone stub, as before).
"""

from __future__ import annotations

import atexit
import os
import secrets
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from rocefab.lab.host import stubclient

SWITCH = "ROCEFAB_LAB_STUB_SERVER"
CLIENT_SWITCH = "ROCEFAB_LAB_STUB_CLIENT"  # "bash": the bash client even where the compiled one builds
SYSTEM_PATH = "/usr/bin:/bin"
START_TIMEOUT_S = 30
FAILURE_TEXT_WAIT_S = 2.0  # how long `check` waits for a failure line being written

_CLIENT = """#!/bin/bash -p
# rocefab lab: {tool} as a client of the host stubs' server (lab/host/stubserver.py), which runs {stub}
# for this process from its own argv, environment, folder and streams (read from /proc). -p: no BASH_ENV, no
# functions or SHELLOPTS from the environment, as the standalone Python stub would not see them either.
fail() {{
  printf 'rocefab lab: the host stub server (127.0.0.1:{port}) %s; {tool} did not run\\n' "$1" >&2
  printf '%s: %s\\n' {tool_q} "$1" >>{failures}
  exit 70
}}
exec 3<>/dev/tcp/127.0.0.1/{port} || fail "cannot be reached"
if [[ -e /proc/self/fd/1 ]]; then
  printf '%s %s %s\\n' {token} "$$" "$#" >&3 || fail "took no request"
else  # stdout closed: `>&3` would lend it the socket while the server reads /proc; a subshell's redirect is its own
  (printf '%s %s %s\\n' {token} "$$" "$#") >&3 || fail "took no request"
fi
read -r status out err <&3 || fail "closed without an answer"
if [[ $status == exec ]]; then  # a call the server cannot reproduce (see _server.py): the real stub runs it
  exec 3<&-
  exec {stub} "$@"
fi
# streams it could not write itself (a file written from its offset, a socket)
if ((out)); then {head} -c "$out" <&3 || fail "lost the output"; fi
if ((err)); then {head} -c "$err" <&3 >&2 || fail "lost the error output"; fi
exit "$status"
"""


class StubServerError(RuntimeError):
    """The stub server failed: tool calls may not have run, whatever the scripts printed."""


def enabled() -> bool:
    """On unless ROCEFAB_LAB_STUB_SERVER=0, where the server can work (Linux /proc, bash)."""
    return (os.environ.get(SWITCH, "1") != "0" and os.path.isfile("/proc/self/environ")  # noqa: PTH113
            and os.access("/bin/bash", os.X_OK))


class StubServer:
    """A running server for the stubs in `stubs`, with a client for each of `tools` in `bin`."""

    def __init__(self, stubs: Path, tools: Sequence[str]) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="rocefab-stubserver-"))  # 0700: the token stays ours
        self.failures = self.folder / "failures"
        self.log = self.folder / "server.log"
        self.owner = os.getpid()
        token = secrets.token_hex(16)
        python = shutil.which("python3", path=SYSTEM_PATH)  # what the stubs' `#!/usr/bin/env python3` finds
        head = shutil.which("head", path=SYSTEM_PATH)
        if python is None or head is None:
            raise StubServerError(f"no python3 or head in {SYSTEM_PATH}")
        with self.log.open("w") as log:
            # its own session: a ^C to the test run's process group is not its to handle (it ends with its stdin)
            self.process = subprocess.Popen(
                [python, "-S", str(stubs / "_server.py"), str(self.failures)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, cwd=self.folder, env={"LC_ALL": "C", "PATH": SYSTEM_PATH},
                start_new_session=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{token}\n".encode())  # not in argv: `ps` shows every user that
        self.process.stdin.flush()
        timer = threading.Timer(START_TIMEOUT_S, self.process.kill)
        timer.start()
        try:
            line = self.process.stdout.readline()
        finally:
            timer.cancel()
        if not line.strip().isdigit():
            self.stop()
            raise StubServerError(f"the stub server did not start: {self.log.read_text()}")
        self.port = int(line)
        self.bin = self.folder / "bin"
        self.bin.mkdir()
        # The compiled client where a C compiler builds one (a bash start less per call), else the bash client.
        binary = None if os.environ.get(CLIENT_SWITCH) == "bash" else \
            stubclient.compiled(self.folder, self.port, token, self.failures, stubs)
        self.client = "compiled" if binary is not None else "bash"
        for tool in tools:
            client = self.bin / tool
            if binary is not None:
                client.symlink_to(binary)  # the name it is started by is the tool it asks for
                continue
            client.write_text(_CLIENT.format(
                tool=tool, tool_q=shlex.quote(tool), stub=shlex.quote(str(stubs / tool)), port=self.port,
                token=token, failures=shlex.quote(str(self.failures)), head=shlex.quote(head)))
            client.chmod(0o700)

    def check(self) -> None:
        """Raise if anything went wrong since the start (it stays wrong: the failures are kept)."""
        if self.failures.exists():
            # A writer opens the file (creating it) and then writes its line: seen in between, the file is empty.
            # The failure is certain either way; its words are worth a moment's wait.
            deadline = time.monotonic() + FAILURE_TEXT_WAIT_S
            text = self.failures.read_text()
            while not text.endswith("\n") and time.monotonic() < deadline:
                time.sleep(0.02)
                text = self.failures.read_text()
            raise StubServerError(f"host stub server failures ({self.failures}):\n{text}")
        status = self.process.poll()
        if status is not None:
            raise StubServerError(f"the host stub server exited with status {status}: {self.log.read_text()}")

    def stop(self) -> None:
        """End the server (closing its stdin ends it) and remove its folder; only the process that started it."""
        if os.getpid() != self.owner:
            return
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


_shared: StubServer | None = None
_lock = threading.Lock()


def shared(stubs: Path, tools: Sequence[str]) -> StubServer:
    """This process's server, started on first use (the lab's hosts and a test session's all share it: each call
    carries its own fake root, and the stubs lock each root's state as they always did)."""
    global _shared
    with _lock:
        if _shared is None or _shared.owner != os.getpid():
            _shared = StubServer(stubs, tools)
            atexit.register(_shared.stop)
        return _shared
