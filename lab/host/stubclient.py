"""The host stubs' server's clients as one small compiled program, where a C compiler is at hand.

A tool call through the bash client (stubserver.py `_CLIENT`) costs a bash start, and a `--check` of a lab host
makes eight calls. This program speaks the same protocol (stubs/_server.py: `TOKEN PID NARGS\\n` out,
`STATUS OUTLEN ERRLEN\\n` and the relayed bytes back, or `exec`) and fails the same way (the message on stderr, a
line in the failures file, exit 70), for less: 2.9 -> 1.7 CPU-ms per call on the calling side, the script's
`$(...)` subshell included (100 calls from one bash, medians of 3, load 8; 2026-12-02). One binary
serves every tool: the name it was started by says which (`bin/ip` is a link to it), and the server reads the
call's argv, environment, folder and streams from /proc as it does for the bash client. Linked statically where
the C library allows it (a dynamic start of an empty program: 0.89 CPU-ms, a static one 0.66).

`compiled(...)` builds it in the server's folder; None when there is no compiler or the build fails, and then
every tool gets the bash client: the lab works the same without one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

SYSTEM_PATH = "/usr/bin:/bin"
BUILD_TIMEOUT_S = 60

_SOURCE = r"""/* rocefab lab: a host tool as a client of the host stubs' server (lab/host/stubclient.py). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *tool = "?";

static void fail(const char *what) {
    char line[512];
    int n = snprintf(line, sizeof line, "rocefab lab: the host stub server (127.0.0.1:%d) %s; %s did not run\n",
                     PORT, what, tool);
    if (n > 0) (void)!write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    int log = open(FAILURES, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (log >= 0) {
        n = snprintf(line, sizeof line, "%s: %s\n", tool, what);
        if (n > 0) (void)!write(log, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        close(log);
    }
    _exit(70);
}

static int write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(fd, data, size);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        data += done;
        size -= (size_t)done;
    }
    return 0;
}

/* `size` bytes of the socket to `fd`: a stream the server could not write itself */
static int relay(int sock, int fd, long size) {
    char buffer[65536];
    while (size > 0) {
        ssize_t got = read(sock, buffer, size < (long)sizeof buffer ? (size_t)size : sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        if (write_all(fd, buffer, (size_t)got) < 0) return -1;
        size -= got;
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *slash = strrchr(argv[0], '/');
    tool = slash ? slash + 1 : argv[0];
    int sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock >= 0 && sock <= 2) { /* a closed standard stream stays closed: the server reads 0-2 as the call's */
        int moved = fcntl(sock, F_DUPFD_CLOEXEC, 3);
        close(sock);
        sock = moved;
    }
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(PORT)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (sock < 0 || connect(sock, (struct sockaddr *)&address, sizeof address) < 0) fail("cannot be reached");
    char request[128];
    int n = snprintf(request, sizeof request, "%s %ld %d\n", TOKEN, (long)getpid(), argc - 1);
    if (n <= 0 || write_all(sock, request, (size_t)n) < 0) fail("took no request");
    /* the answer's first line, read a byte at a time: what follows it is relayed output */
    char line[128];
    size_t used = 0;
    for (;;) {
        char c;
        ssize_t got = read(sock, &c, 1);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) fail("closed without an answer");
        if (c == '\n') break;
        if (used + 1 >= sizeof line) fail("closed without an answer");
        line[used++] = c;
    }
    line[used] = '\0';
    if (strcmp(line, "exec") == 0) { /* a call the server cannot reproduce: the real stub runs it */
        close(sock);
        static char stub[4096];
        snprintf(stub, sizeof stub, "%s/%s", STUBS, tool);
        argv[0] = stub;
        execv(stub, argv);
        fprintf(stderr, "%s: %s: %s\n", tool, stub, strerror(errno));
        return errno == ENOENT ? 127 : 126;
    }
    int status;
    long out, err;
    if (sscanf(line, "%d %ld %ld", &status, &out, &err) != 3) fail("closed without an answer");
    if (out > 0 && relay(sock, 1, out) < 0) fail("lost the output");
    if (err > 0 && relay(sock, 2, err) < 0) fail("lost the error output");
    return status;
}
"""


def _c_string(text: str) -> str:
    """`text` as a C string literal (the token is hex, the paths are the lab's own temporary folders)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def compiled(folder: Path, port: int, token: str, failures: Path, stubs: Path) -> Path | None:
    """The client built in `folder` for this server, or None (no C compiler, or it would not build)."""
    compiler = shutil.which("cc", path=SYSTEM_PATH) or shutil.which("gcc", path=SYSTEM_PATH)
    if compiler is None:
        return None
    source = folder / "client.c"
    source.write_text(_SOURCE, encoding="utf-8")
    binary = folder / "client"
    defines = [f"-DPORT={port}", f"-DTOKEN={_c_string(token)}", f"-DFAILURES={_c_string(str(failures))}",
               f"-DSTUBS={_c_string(str(stubs))}"]
    for static in (["-static"], []):  # a static start is cheaper; not every C library ships for static linking
        try:
            done = subprocess.run([compiler, "-O2", *static, *defines, "-o", str(binary), str(source)],
                                  capture_output=True, timeout=BUILD_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode == 0:
            binary.chmod(0o700)
            return binary
    return None
