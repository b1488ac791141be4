"""A whole fabric of emulated devices on 127.0.0.1, one per switch and host of a plan, with the files a
user needs to reach it: an inventory, the SSH host keys and the HTTPS certificate to trust, a password file."""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from rocefab.lab.control import FaultBook
from rocefab.lab.tls import LabCertificate, self_signed
from rocefab.lab.wiring import Wiring
from rocefab.platforms import host_unit, unit
from rocefab.renderers.plan import FabricPlan

DEFAULT_USER = "admin"  # the login of emulators whose inventory entry names none


class Stoppable(Protocol):
    device: Any

    def stop(self) -> None: ...


@dataclass
class LabDevice:
    name: str
    kind: str
    server: Stoppable
    access: dict[str, Any]  # this device's inventory entry
    known_host: str | None = None  # "[127.0.0.1]:port ssh-ed25519 AAAA..."


class FabricLab:
    """Start with `start()`, stop with `stop()`; `write_files()` leaves the inventory and trust files in `folder`."""

    def __init__(self, plan: FabricPlan, folder: Path, password: str | None = None) -> None:
        self.plan = plan
        self.folder = folder.resolve()
        self.password = password or secrets.token_urlsafe(18)
        self.certificate: LabCertificate = self_signed("rocefab-lab")
        self.devices: list[LabDevice] = []
        self.wiring = Wiring.from_plan(plan)
        self.faults: FaultBook | None = None

    def start(self) -> None:
        # Every lab starts from factory state: the sandboxes of an earlier lab in this folder go.
        for sandbox in ("devices", "hosts"):
            shutil.rmtree(self.folder / sandbox, ignore_errors=True)
        try:
            for switch in self.plan.switches:
                self.devices.append(unit(switch.platform).emulator()(switch, self.folder, self.password,
                                                                      self.certificate))
            hosts = host_unit().emulator()
            for host in self.plan.hosts:
                self.devices.append(hosts(host, self.folder, self.password, self.certificate))
            self._wire()
        except BaseException:
            self.stop()
            raise

    def _wire(self) -> None:
        """Cable the emulators together as the plan does (lab/wiring.py), and open the fault book."""
        for device in self.devices:
            emulated = device.server.device
            self.wiring.devices[device.name] = emulated
            if hasattr(emulated, "wiring"):
                emulated.wiring = self.wiring
        self.faults = FaultBook(self.wiring, Wiring.from_plan(self.plan), dict(self.wiring.devices),
                                self.plan.qos.roce_priority)

    def emulator(self, name: str) -> Any:
        """The emulated device behind `name` (EosDevice, NxosDevice, CumulusDevice or LinuxHost): its state and
        its `faults` and `reach` controls."""
        for device in self.devices:
            if device.name == name:
                return device.server.device
        raise KeyError(name)

    def stop(self) -> None:
        while self.devices:
            self.devices.pop().server.stop()

    def write_files(self) -> Path:
        """Write inventory.yaml (and the files it points at) into the lab folder; return its path."""
        self.folder.mkdir(parents=True, exist_ok=True)
        password = self.folder / "password"
        password.touch(mode=0o600)
        password.chmod(0o600)
        password.write_text(self.password + "\n", encoding="utf-8")
        (self.folder / "lab-ca.pem").write_bytes(self.certificate.cert_pem)
        (self.folder / "known_hosts").write_text(
            "".join(f"{d.known_host}\n" for d in self.devices if d.known_host), encoding="utf-8")
        inventory = {
            "defaults": {
                "username": DEFAULT_USER,
                "password_file": str(password),
                "ca_file": str(self.folder / "lab-ca.pem"),
                "known_hosts": str(self.folder / "known_hosts"),
                # A fake host's tools are Python processes: sixteen host scripts at once on a two-core machine run
                # a minute and more (a real host's takes seconds), and a device that times out is "state unknown".
                "timeout_s": 120,
            },
            "devices": {d.name: d.access for d in self.devices},
        }
        path = self.folder / "inventory.yaml"
        header = ("# Written by `rocefab lab up`: the local lab's devices on 127.0.0.1. TLS certificates and SSH\n"
                  "# host keys are pinned (lab-ca.pem, known_hosts); the password is in a file only you can read.\n")
        path.write_text(header + yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
        os.chmod(path, 0o644)  # noqa: PTH101 - explicit: the inventory holds no secret
        return path
