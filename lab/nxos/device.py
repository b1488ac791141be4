"""Cisco NX-OS (Nexus 9000) emulator on 127.0.0.1: NX-API (JSON-RPC `POST /ins`) plus SSH (CLI, SCP, SFTP).

NAPALM's `nxos` and `nxos_ssh` drivers and netmiko `cisco_nxos` run against it unpatched: one CLI engine
(`CliSession`) answers both transports, with the vendor's exact output and error strings, because the SSH path
detects errors by string matching. See /work/shared/reference/deploy-toolchain.md §2 for what the clients send.

Here: the switch (`NxosDevice`): its running and startup configs, bootflash, checkpoints, credentials, and what the
lab fabric asks it. Its parts: the CLI engine both transports share (lab/nxos/cli.py), the NX-API and SSH listeners
(lab/nxos/server.py), the config tree and grammar (lab/nxos/config.py, lab/nxos/grammar.py), the state and counters
it reports (lab/nxos/state.py, lab/nxos/counters.py).
"""

import hashlib
import re
import threading
import time
from dataclasses import dataclass

from rocefab.lab.faults import Knobs, Reachability
from rocefab.lab.nxos import state as nxos_state
from rocefab.lab.nxos.cli import BIOS, VERSION, CliSession
from rocefab.lab.nxos.config import NxosConfig
from rocefab.lab.wiring import BgpSpeaker, Wiring

__all__ = ["Faults", "NxosDevice"]

# A placeholder hash, never a real secret: the emulator checks credentials held outside the config.
FACTORY = """hostname {hostname}
feature nxapi
feature scp-server
username admin password 5 $5$LAB$placeholder.not.a.real.hash role network-admin
interface mgmt0
  vrf member management
"""


@dataclass
class Faults:
    """Failures a test switches on at runtime."""

    reject_line: str | None = None  # config lines matching this regex are invalid (also inside rollback files)
    delay_seconds: float = 0.0  # before answering each NX-API request / SSH command
    drop_on: str | None = None  # at a command matching this regex the server closes the connection, unanswered
    password: str | None = None  # when set, the only password the device accepts (a rotated credential)
    refuse_logins: bool = False  # every login refused, as after a password change nobody was told of


class NxosDevice:
    KNOBS = Knobs(delay="delay_seconds", refuse_logins="refuse_logins", reject="reject_line")

    def __init__(self, hostname: str = "switch", username: str = "admin", password: str = "admin",
                 ports: int = 64) -> None:
        self.name = hostname  # its name in the lab's wiring
        self.wiring: Wiring | None = None  # set when the device is part of a lab fabric
        self.running = NxosConfig.parse(FACTORY.format(hostname=hostname))
        self.username, self.password, self.ports = username, password, ports
        self.serial = "FDO" + hashlib.md5(hostname.encode()).hexdigest()[:8].upper()
        self.bootflash: dict[str, str] = {}
        self.bootflash_dirs: set[str] = set()  # `mkdir bootflash:x` (rocefab's lock marks), empty
        self.checkpoints: dict[str, str] = {}
        self.faults = Faults()
        self.reach = Reachability()
        self.commands: list[str] = []  # every command received, in order: the wire log tests assert on
        self.lock = threading.RLock()
        self.booted = time.monotonic()
        self.startup = self.running_config("show startup-config")
        # GIR's mode (`system mode maintenance`): device state, not configuration, so replaces and rollbacks keep it
        self.system_mode = nxos_state.NORMAL

    def check_password(self, username: str, password: str) -> bool:
        expected = self.faults.password if self.faults.password is not None else self.password
        return username == self.username and password == expected and not self.faults.refuse_logins

    def running_config(self, command: str = "show running-config") -> str:
        stamp = time.strftime("%a %b %d %H:%M:%S %Y")
        head = f"\n!Command: {command}\n!Time: {stamp}\n\nversion {VERSION} Bios:version {BIOS}\n"
        return head + self.running.render()

    def session(self, implicit_config: bool) -> "CliSession":
        return CliSession(self, implicit_config)

    # -- the lab fabric's questions and the faults a person makes at the CLI (lab/nxos/state.py) -------------------
    def port_enabled(self, port: str) -> bool:
        return nxos_state.port_enabled(self, port)

    def bgp_speaker(self) -> BgpSpeaker | None:
        return nxos_state.bgp_speaker(self)

    def _port(self, port: str) -> str:
        found = re.fullmatch(r"Ethernet1/(\d+)", port)
        if (found is None or not 1 <= int(found.group(1)) <= self.ports) and self.running.section(
                f"interface {port}") is None:
            raise ValueError(f"{self.name} has no interface {port}")
        return port

    def set_mtu(self, port: str, mtu: int) -> str:
        nxos_state.configure(self, f"interface {self._port(port)}", f"mtu {mtu}")
        return f"interface {port} / mtu {mtu}"

    def pfc_off(self, port: str, priority: int) -> str:
        nxos_state.configure(self, f"interface {self._port(port)}", "priority-flow-control mode off")
        return f"interface {port} / priority-flow-control mode off"

    def strict_off(self, priority: int) -> str:
        """The strict queue of the queuing policy leaves priority (NX-OS keeps the CNP class on the top qos-group,
        whatever the fabric's CNP priority is called)."""
        for policy in self.running.root.children:
            if not policy.line.startswith("policy-map type queuing"):
                continue
            for klass in policy.children:
                if any(c.line.startswith("priority level") for c in klass.children):
                    nxos_state.configure(self, policy.line, klass.line, "no priority level 1",
                                         "bandwidth remaining percent 0")
                    return f"{policy.line} / {klass.line} / no priority level 1"
        raise ValueError(f"{self.name} has no strict queue")

    def snapshot(self) -> object:
        with self.lock:
            return self.running.copy()

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, NxosConfig)
        with self.lock:
            self.running = snapshot.copy()
            self.reach.clear()
