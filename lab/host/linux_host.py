"""A Linux GPU host for the lab: exec requests run real bash against a fake host (lab/host/fakehost.py).

The host lives in one sandbox folder: the fake sysfs in `sys/`, the fake `/etc` in `etc/`, and whatever a client
uploads by SFTP/SCP (which is chrooted to the sandbox). Every command runs as `bash -c <command>` with the sandbox
as working directory and a clean environment: PATH is the host stubs (the stub server's clients, see
stubserver.py) then /usr/bin:/bin, and ROCEFAB_SYSFS_ROOT / ROCEFAB_ETC_ROOT point at the fake host, so a
rendered host script uploaded next to it runs as it would on a real node (`bash gpu001.roce.sh --check`) while the
stubs refuse to touch the real machine. Use paths relative to the sandbox: an absolute path in a command is the
test machine's. Each command (also each line typed in the netmiko shell) is a fresh bash, so `cd` or variables do
not carry over to the next line.
"""

from __future__ import annotations

import hmac
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocefab.lab.faults import Knobs, Reachability
from rocefab.lab.host import fakehost
from rocefab.lab.host import traffic as host_traffic
from rocefab.lab.sshd import Disconnect, Outcome

EXEC_TIMEOUT_S = 120


class LinuxHost:
    """`LinuxHost(sandbox, "gpu001", netdevs, roce_lag)` builds a pristine fake host in `sandbox` (which must not
    exist yet) and serves it to `rocefab.lab.sshd.LabSSHServer`."""

    KNOBS = Knobs(delay="delay_s", refuse_logins="refuse_logins", on_faults=False)

    def __init__(self, sandbox: Path, hostname: str, netdevs: Sequence[str],
                 roce_lag: Mapping[str, tuple[str, str]], *, rdma: Mapping[str, str] | None = None,
                 speeds: Mapping[str, int] | None = None, username: str = "root", password: str = "lab",
                 refuse_logins: bool = False, sudo: bool = True) -> None:
        self.sandbox = sandbox.resolve()
        self.sandbox.mkdir(parents=True)
        fakehost.make_host(self.sandbox, netdevs, roce_lag, rdma=rdma, speeds=speeds)
        (self.sandbox / "tmp").mkdir()  # /tmp over SFTP, where a deploy run leaves its lock mark
        self.hostname = hostname
        self.username = username
        self.password = password
        self.refuse_logins = refuse_logins  # fault: every login fails, as after a password change
        self.sudo = sudo  # whether the login user may `sudo -n` (root always runs as root)
        self.reach = Reachability()
        self.delay_s = 0.0  # fault: every command answers this much later
        self.traffic = host_traffic.HostTraffic()  # its RDMA and NIC counters, in sysfs for commands that read them

    @property
    def root(self) -> Path:
        return self.sandbox

    def authenticate(self, username: str, password: str) -> bool:
        return (not self.refuse_logins and username == self.username
                and hmac.compare_digest(password.encode(), self.password.encode()))

    def prompt(self, username: str) -> str:
        return f"{username}@{self.hostname}:~{'#' if username == 'root' else '$'} "

    def handle(self, command: str, username: str) -> Outcome:
        if self.delay_s:
            time.sleep(self.delay_s)
        if self.reach.cut_before(command):
            raise Disconnect
        root = username == "root"
        if command.startswith("sudo -n "):  # what rocefab sends for an inventory's `sudo: true`
            if not (root or self.sudo):
                return 1, "", "sudo: a password is required\n"
            command, root = command.removeprefix("sudo -n "), True
        if host_traffic.reads_counters(command):
            self.traffic.render(self.sandbox)
        done = subprocess.run(["/bin/bash", "-c", command], cwd=self.sandbox, env=self.env(root=root),
                              stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=EXEC_TIMEOUT_S, check=False)
        fakehost.check_stubs()  # a failed stub server is the lab's error (exit 255), never a tool's output
        if self.reach.cut_after(command):
            raise Disconnect
        return done.returncode, done.stdout, done.stderr

    def env(self, *, root: bool = True) -> dict[str, str]:
        """The stubs refuse what the real tools refuse without root when ROCEFAB_LAB_UID is not 0."""
        return fakehost.host_env(self.sandbox, env={"HOME": str(self.sandbox), "HOSTNAME": self.hostname,
                                                    "USER": "root" if root else self.username,
                                                    "ROCEFAB_LAB_UID": "0" if root else "1000"})

    # -- faults a person makes on the host (lab/control.py), with the host's own tools ----------------------------
    def host_fault(self, kind: str, args: list[str]) -> str:
        """Run the command a person (or a driver reset) would, with the host's own tools."""
        target = args[0] if args else ""
        if kind == "peermem-unload":  # the one host fault without a target
            target = "nvidia_peermem"
        if not re.fullmatch(r"[A-Za-z0-9_.=:,-]{1,64}", target):
            raise ValueError(f"{target!r} is not a name or setting this host has")
        if kind in ("firmware", "retransmits", "host-pause-storm"):
            return self._below_the_kernel(kind, args)
        net = self.sandbox / "sys/class/net" / target
        rdma = self.sandbox / "sys/class/infiniband" / target
        if kind in ("trust-pcp", "ecn-off", "global-pause", "mtu", "bond-leave", "no-address", "dscp-map") \
                and not net.is_dir():
            raise ValueError(f"{self.hostname} has no netdev {target!r}")
        if kind == "tos-reset" and not rdma.is_dir():
            raise ValueError(f"{self.hostname} has no RDMA device {target!r}")
        if kind == "nccl-set" and "=" not in target:
            raise ValueError("nccl-set takes KEY=VALUE")
        command = {
            "trust-pcp": f"mlnx_qos -i {target} --trust pcp",
            "ecn-off": f'for f in "$ROCEFAB_SYSFS_ROOT"/class/net/{target}/ecn/roce_*/enable/*; do echo 0 > "$f"; done',
            "global-pause": f"ethtool -A {target} rx on tx on",
            "mtu": f"ip link set dev {target} mtu {args[1] if len(args) > 1 else ''}",
            "dscp-map": f"mlnx_qos -i {target} --dscp2prio set,{','.join(args[1:3])}",
            "bond-leave": f"ip link set dev {target} nomaster",
            "no-address": f"ip address flush dev {target}",
            "tos-reset": f"cma_roce_tos -d {target} -p 1 -t 0",
            # a site line at the top of nccl.conf: NCCL keeps a key's first value
            "nccl-set": f'f="$ROCEFAB_ETC_ROOT/nccl.conf"; {{ echo {target}; cat "$f" 2>/dev/null; }} > "$f.new" '
                        f'&& mv "$f.new" "$f"',
            # what `modprobe -r nvidia_peermem` leaves in /proc/modules (the stubs have no modprobe)
            "peermem-unload": 'm="$ROCEFAB_PROC_ROOT/modules"; grep -v "^nvidia_peermem " "$m" > "$m.new" '
                              '&& mv "$m.new" "$m"',
        }[kind]
        outcome = self.handle(command, "root")  # a person at the console, as root
        status, stderr = (outcome[0], outcome[2]) if isinstance(outcome, tuple) else (1, "no answer")
        if status != 0:
            raise ValueError(f"{self.hostname}: `{command}` failed: {stderr.strip()}")
        return command

    def _below_the_kernel(self, kind: str, args: list[str]) -> str:
        """Faults no shell command makes: another firmware flashed on a NIC's card, a lossy path that makes an
        RDMA device retransmit, a NIC that pauses its leaf without end."""
        target = args[0]
        if kind == "retransmits":
            if not (self.sandbox / "sys/class/infiniband" / target).is_dir():
                raise ValueError(f"{self.hostname} has no RDMA device {target!r}")
            self.traffic.retransmit(target)
            return f"{self.hostname} {target} retransmits {host_traffic.RETRANSMIT_FRACTION:.1%} of what it sends"
        hw = fakehost.state(self.sandbox)["hw"]
        if target not in hw["netdev_pci"]:
            raise ValueError(f"{self.hostname} has no NIC port {target!r}")
        if kind == "host-pause-storm":
            self.traffic.storm(target)
            return f"{self.hostname} {target} pauses its leaf without end"
        version = args[1] if len(args) > 1 else ""
        if not re.fullmatch(r"\d{1,3}\.\d{1,4}\.\d{1,4}", version):
            raise ValueError(f"{version!r} is not a firmware release like 28.39.1002")
        card = hw["netdev_pci"][target][:-1]  # every PCI function of the card: one flash holds its firmware

        def flash(hw: dict[str, Any]) -> None:
            for address, function in hw["pci"].items():
                if function["kind"] == "nic" and address.startswith(card):
                    function["fw"] = version

        fakehost.edit_hardware(self.sandbox, flash)
        return f"{self.hostname}: the card of {target} runs firmware {version} (as after mlxfwmanager and a reset)"

    def set_mtu(self, netdev: str, mtu: int) -> str:
        return self.host_fault("mtu", [netdev, str(mtu)])

    def snapshot(self) -> object:
        """The fake host's whole state (sysfs, /etc, the stubs' kernel state), to put back on `restore`."""
        saved = Path(tempfile.mkdtemp(prefix=f"rocefab-lab-{self.hostname}-"))
        shutil.copytree(self.sandbox, saved / "host", symlinks=True)
        return saved

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, Path)
        for child in list(self.sandbox.iterdir()):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
        shutil.copytree(snapshot / "host", self.sandbox, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(snapshot, ignore_errors=True)
        self.reach.clear()
        self.traffic.clear()

    def close(self) -> None:
        """Nothing runs between commands; the sandbox stays for inspection (the caller owns the folder)."""
