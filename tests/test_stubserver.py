"""The host stubs' server (lab/host/stubserver.py, lab/host/stubs/_server.py): a call through its client answers
byte for byte what the standalone stub answers, fake hosts stay apart under concurrent calls, and a failed server is an
error of the harness, never a tool's output."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rocefab.lab.host import fakehost, stubserver
from rocefab.lab.host.fakehost import STUBS, SYSTEM_PATH, TOOLS, host_env, make_host

PORTS = ("ens1f0np0", "ens1f1np1")
LAG = {"mlx5_bond_0": PORTS}


@pytest.fixture(scope="module")
def server() -> Iterator[stubserver.StubServer]:
    srv = stubserver.StubServer(STUBS, TOOLS)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def bash_server() -> Iterator[stubserver.StubServer]:
    """The bash client, which every tool gets where no C compiler builds the compiled one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(stubserver.CLIENT_SWITCH, "bash")
        srv = stubserver.StubServer(STUBS, TOOLS)
    yield srv
    srv.stop()


def bash(root: Path, folder: Path, command: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = subprocess.run(["/bin/bash", "-c", command], env=host_env(root, f"{folder}:{SYSTEM_PATH}", env),
                          cwd=root, capture_output=True, text=True, timeout=60, check=False)
    return done.returncode, done.stdout, done.stderr


# Reads, changes, failures in each tool's own words, and every way a stream can be wired: a pipe, /dev/null, both
# streams in one pipe (2>&1: the interleaving of a block-buffered stdout and a line-buffered stderr), a file written
# from its offset (relayed), a file opened for append (reopened), stdin from a pipe, a closed stdout, another locale
# (both of which the server hands back to a standalone run).
COMMANDS = [
    "ip -o link show", "ip -d link show 2>&1", "ip -4 -o address show", "ip -4 rule show", "ip bogus",
    "ip link add bond0 type bond mode 802.3ad; echo $?; ip link add bond0 type bond mode 802.3ad; echo $?",
    "ip link set dev nope up 2>&1; echo $?",
    "ethtool -a ens1f0np0", "ethtool -A ens1f0np0 rx on tx on; echo $?", "ethtool -g ens1f1np1 >/dev/null",
    "ethtool -i ens1f0np0", "ethtool -G ens1f0np0 rx 1000 2>&1 >/dev/null",
    "mlnx_qos -i ens1f0np0", "mlnx_qos -i nope 2>&1", "mlnx_qos -i ens1f0np0 --bogus",
    "mlnx_qos -i ens1f0np0 --trust dscp | tail -3",
    "cma_roce_tos -d mlx5_bond_0", "cma_roce_tos -d mlx5_0 -t 300", "cma_roce_tos -d mlx5_0 -t x 2>&1",
    "cma_roce_tos -h", "cma_roce_mode -d mlx5_0", "rdma link", "rdma link show mlx5_9", "ofed_info -s", "ofed_info",
    "lspci -vv | head -5", "nvidia-smi topo -m", "nvidia-smi -q",
    "ethtool -a ens1f0np0 > out; cat out", "{ ip -o link show; mlnx_qos -i nope; } > both 2>&1; cat both",
    "ip -o link show >> log; ethtool -g ens1f0np0 >> log; cat log", "ip -o link show 2> err >/dev/null; cat err",
    "printf 'x\\n' | ip -o link show dev bond0", "ip -o link show >&- 2>/dev/null; echo $?",
    "LC_ALL= LANG=C.UTF-8 ip -o link show", "PYTHONUNBUFFERED=1 ethtool -A ens1f0np0 rx on tx on 2>&1",
    "STUB_ETHTOOL=netlink ethtool -A ens1f0np0 rx on tx on; echo $?", "STUB_RDMA=indexed rdma link",
    "ROCEFAB_SYSFS_ROOT=sys ip -o link show; cd etc && ip -o link show",
    "umask 077; ip link add bond0 type bond mode 802.3ad; stat -c %a sys/class/net/bond0 sys/class/net/bond0/bonding",
]


def test_the_compiled_client_serves_where_a_compiler_builds_it(server: stubserver.StubServer,
                                                               bash_server: stubserver.StubServer) -> None:
    has_compiler = any(shutil.which(cc, path=SYSTEM_PATH) for cc in ("cc", "gcc"))
    assert server.client == ("compiled" if has_compiler else "bash")
    assert bash_server.client == "bash" and (bash_server.bin / "ip").read_text().startswith("#!/bin/bash -p")


# every way a stream reaches the client's own code (pipes, a relayed file, a closed stdout, the standalone fallback)
BASH_CLIENT_COMMANDS = ["ip -o link show", "{ ip -o link show; mlnx_qos -i nope; } > both 2>&1; cat both",
                        "ip -o link show >&- 2>/dev/null; echo $?", "LC_ALL= LANG=C.UTF-8 ip -o link show"]


@pytest.mark.parametrize("command", BASH_CLIENT_COMMANDS)
def test_the_bash_client_answers_what_the_standalone_stub_answers(bash_server: stubserver.StubServer, tmp_path: Path,
                                                                  command: str) -> None:
    standalone = make_host(tmp_path / "standalone", PORTS, LAG)
    served = make_host(tmp_path / "served", PORTS, LAG)
    assert bash(served, bash_server.bin, command) == bash(standalone, STUBS, command)
    bash_server.check()


@pytest.mark.parametrize("command", COMMANDS)
def test_a_call_answers_what_the_standalone_stub_answers(server: stubserver.StubServer, tmp_path: Path,
                                                          command: str) -> None:
    standalone = make_host(tmp_path / "standalone", PORTS, LAG)
    served = make_host(tmp_path / "served", PORTS, LAG)
    expected = bash(standalone, STUBS, command)
    assert bash(served, server.bin, command) == expected
    assert fakehost.snapshot(served) == fakehost.snapshot(standalone)
    server.check()


def test_a_stub_that_raises_prints_its_traceback_and_exits_1(server: stubserver.StubServer, tmp_path: Path) -> None:
    root = make_host(tmp_path / "host", PORTS, LAG)
    (root / "sys" / ".stubstate" / "state.marshal").write_bytes(b"not marshal")
    code, out, err = bash(root, server.bin, "rdma link")
    assert (code, out) == (1, "") and err.startswith("Traceback (most recent call last):\n")
    assert err == bash(root, STUBS, "rdma link")[2]
    server.check()  # a stub's own failure is its answer, not the server's


def test_a_call_leaves_the_worker_as_it_found_it(tmp_path: Path) -> None:
    """A worker serves call after call in one process: whatever a stub does to its process (environment, folder,
    umask, argv, the standard streams) ends with its call, so the next call sees what a standalone start sees."""
    stubs = tmp_path / "stubs"
    shutil.copytree(STUBS, stubs)
    (stubs / "ofed_info").write_text(textwrap.dedent("""\
        #!/usr/bin/env -S python3 -S
        import os, sys
        mask = os.umask(0)
        print(os.environ.get("LEAK", "clean"), os.getcwd(), oct(mask), sys.argv[1:], sys.stdout.name)
        os.environ["LEAK"] = "leaked"
        os.chdir("/")
        os.umask(0o777)
        sys.argv.append("leaked")
        sys.stdout.flush()
        sys.stdout = open(os.devnull, "w")
        """))
    root = make_host(tmp_path / "host", PORTS, LAG)
    expected = bash(root, stubs, "ofed_info -s")
    assert expected == (0, f"clean {root} 0o22 ['-s'] <stdout>\n", "")
    srv = stubserver.StubServer(stubs, TOOLS)
    try:
        # more calls than workers, one at a time: every worker serves again after its first call
        answers = [bash(root, srv.bin, "ofed_info -s") for _ in range(3 * _server_workers())]
        assert answers == [expected] * len(answers)
        srv.check()
    finally:
        srv.stop()


def test_a_failed_worker_is_replaced(tmp_path: Path) -> None:
    srv = stubserver.StubServer(STUBS, TOOLS)
    try:
        root = make_host(tmp_path / "host", PORTS, LAG)
        for _ in range(_server_workers() + 1):  # more failures than workers: each is replaced
            with socket.create_connection(("127.0.0.1", srv.port)) as conn:
                conn.sendall(b"nottoken 1 0\n")
                assert conn.recv(100) == b""
        assert bash(root, srv.bin, "ip -o link show dev bond0") == (1, "", 'Device "bond0" does not exist.\n')
        deadline = time.monotonic() + 10
        while srv.failures.read_text().count("ended with wait status") < _server_workers() + 1:
            assert time.monotonic() < deadline, srv.failures.read_text()
            time.sleep(0.05)
    finally:
        srv.stop()


def _server_workers() -> int:
    source = (STUBS / "_server.py").read_text()
    return int(source.split("\nWORKERS = ", 1)[1].split()[0])


def test_concurrent_calls_on_many_hosts_stay_apart(server: stubserver.StubServer, tmp_path: Path) -> None:
    roots = [make_host(tmp_path / f"h{i}", PORTS, LAG) for i in range(6)]

    def change(i: int) -> tuple[int, str, str]:
        root = roots[i % len(roots)]
        return bash(root, server.bin, f"ip link set dev ens1f0np0 mtu {1500 + i}; ip address add 10.0.{i}.1/24 "
                                      f"dev ens1f1np1; mlnx_qos -i ens1f1np1 --trust dscp >/dev/null")

    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(change, range(24)))
    assert all(r == (0, "", "") for r in results), results
    for n, root in enumerate(roots):
        mine = range(n, 24, len(roots))
        dev = fakehost.state(root)["netdevs"]
        assert sorted(dev["ens1f1np1"]["addrs"]) == sorted(f"10.0.{i}.1/24" for i in mine)
        assert dev["ens1f1np1"]["dcb"]["trust"] == "dscp"
        assert int((root / "sys/class/net/ens1f0np0/mtu").read_text()) in {1500 + i for i in mine}
    server.check()


def test_a_dead_server_fails_loudly(tmp_path: Path) -> None:
    srv = stubserver.StubServer(STUBS, TOOLS)
    try:
        root = make_host(tmp_path / "host", PORTS, LAG)
        srv.check()
        srv.process.kill()
        srv.process.wait()
        code, out, err = bash(root, srv.bin, "ip -o link show")
        assert (code, out) == (70, "")
        assert "rocefab lab: the host stub server (127.0.0.1:" in err and "ip did not run" in err
        # its workers die with it: refused, or closed unanswered when the call reached the queue before they died
        with pytest.raises(stubserver.StubServerError, match=r"ip: (cannot be reached|closed without an answer)"):
            srv.check()
    finally:
        srv.stop()
    assert not srv.folder.exists()


def test_a_request_without_the_token_is_refused_and_logged(tmp_path: Path) -> None:
    srv = stubserver.StubServer(STUBS, TOOLS)
    try:
        with socket.create_connection(("127.0.0.1", srv.port)) as conn:
            conn.sendall(f"nottoken {os.getpid()} 0\n".encode())
            assert conn.recv(100) == b""  # no answer
        deadline = time.monotonic() + 10
        while not srv.failures.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(stubserver.StubServerError, match="not a client's request"):
            srv.check()
    finally:
        srv.stop()


def test_a_failure_seen_while_its_line_is_written_is_reported_with_its_words(tmp_path: Path) -> None:
    """A writer creates the failures file, then writes its line: a check in between waits for the line (this was
    a flake: the check raised with an empty text)."""
    import threading

    srv = stubserver.StubServer(STUBS, TOOLS)
    try:
        srv.failures.touch()
        writer = threading.Timer(0.3, lambda: srv.failures.write_text("ip: not a client's request\n"))
        writer.start()
        with pytest.raises(stubserver.StubServerError, match="ip: not a client's request"):
            srv.check()
        writer.join()
    finally:
        srv.stop()


def test_the_server_ends_with_its_owner(tmp_path: Path) -> None:
    """Killed without a chance to clean up, the owner leaves no server or folder behind: its stdin closes."""
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from rocefab.lab.host import stubserver
        srv = stubserver.StubServer(Path({str(STUBS)!r}), ["ip"])
        print(srv.process.pid, srv.folder, flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    words = owner.stdout.readline().split()
    pid, folder = int(words[0]), Path(words[1])
    os.kill(pid, 0)  # running
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"stub server {pid} outlived its owner")
    assert not folder.exists()  # the server took its folder with it


def test_fakehost_runs_scripts_through_the_shared_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(stubserver.SWITCH, "1")
    root = make_host(tmp_path / "host", PORTS, LAG)
    script = tmp_path / "s.sh"
    script.write_text('command -v ip\nip -o link show dev bond0; echo "exit $?"\n')
    done = fakehost.run_script(script, root)
    shared = stubserver.shared(STUBS, TOOLS)
    assert done.stdout == f"{shared.bin}/ip\nexit 1\n" and done.stderr == 'Device "bond0" does not exist.\n'
    monkeypatch.setenv(stubserver.SWITCH, "0")
    assert fakehost.stub_dir() == STUBS
    assert fakehost.run_script(script, root).stdout == f"{STUBS}/ip\nexit 1\n"


def test_a_served_call_starts_no_python(server: stubserver.StubServer, tmp_path: Path) -> None:
    """With nothing but the clients on PATH, a standalone stub could not start (`env` finds no python3)."""
    root = make_host(tmp_path / "host", PORTS, LAG)
    code, out, err = bash(root, server.bin, "ip -o link show dev bond0; ethtool -a ens1f0np0",
                          {"PATH": str(server.bin)})
    assert (code, err) == (0, 'Device "bond0" does not exist.\n') and out.startswith("Pause parameters for ")
    assert bash(root, server.bin, "LC_ALL=C.UTF-8 ip -o link show", {"PATH": str(server.bin)})[0] == 127
