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

from rocefab.lab.cumulus_nvue import CumulusDevice
from rocefab.lab.eos_eapi import EosDevice, serve_eos
from rocefab.lab.linux_host import LinuxHost
from rocefab.lab.nxos_device import NxosDevice, serve_nxos
from rocefab.lab.sshd import LabSSHServer
from rocefab.lab.tls import LabCertificate, self_signed
from rocefab.renderers.plan import FabricPlan, Host, Switch

EOS_VERSION = "4.34.1F"
USERS = {"eos": "admin", "nxos": "admin", "cumulus": "cumulus", "host": "root"}


def _planned_speeds(host: Host) -> dict[str, int]:
    """Every fabric port of a lab host comes up at the speed the plan gives it, in Mb/s as sysfs reports it."""
    speeds = {m.netdev: bond.speed_gbps * 1000 for bond in host.bonds for m in bond.members}
    speeds.update({nic.netdev: nic.speed_gbps * 1000 for nic in host.nics})
    return speeds


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

    def start(self) -> None:
        # Every lab starts from factory state: the sandboxes of an earlier lab in this folder go.
        for sandbox in ("devices", "hosts"):
            shutil.rmtree(self.folder / sandbox, ignore_errors=True)
        try:
            for switch in self.plan.switches:
                self.devices.append(self._switch(switch))
            for host in self.plan.hosts:
                self.devices.append(self._host(host))
        except BaseException:
            self.stop()
            raise

    def _switch(self, sw: Switch) -> LabDevice:
        if sw.platform == "eos":
            eos = serve_eos(EosDevice(sw.name, model=sw.model, version=EOS_VERSION, password=self.password),
                            tls=self.certificate)
            return LabDevice(sw.name, "eos", eos, {"host": eos.host, "port": eos.port, "transport": "eapi"})
        if sw.platform == "nxos":
            nxos = serve_nxos(NxosDevice(sw.name, password=self.password), tls=self.certificate)
            return LabDevice(sw.name, "nxos", nxos,
                             {"host": nxos.host, "port": nxos.http_port, "ssh_port": nxos.ssh_port,
                              "transport": "nxapi"},
                             f"[{nxos.host}]:{nxos.ssh_port} {nxos.host_key_public}")
        device = CumulusDevice(self.folder / "devices" / sw.name, sw.name, username=USERS["cumulus"],
                               password=self.password, model=sw.model)
        ssh = LabSSHServer(device, name=sw.name, workers=4)
        return LabDevice(sw.name, "cumulus", ssh, {"host": ssh.host, "port": ssh.port, "transport": "nvue-ssh",
                                                   "username": USERS["cumulus"]}, ssh.known_hosts_line())

    def _host(self, host: Host) -> LabDevice:
        netdevs = [*(m.netdev for bond in host.bonds for m in bond.members), *(n.netdev for n in host.nics)]
        lag = {bond.rdma_device: (bond.members[0].netdev, bond.members[1].netdev) for bond in host.bonds}
        device = LinuxHost(self.folder / "hosts" / host.name, host.name, netdevs, lag,
                           rdma={n.netdev: n.rdma_device for n in host.nics}, speeds=_planned_speeds(host),
                           username=USERS["host"],
                           password=self.password)
        ssh = LabSSHServer(device, name=host.name, workers=4)
        return LabDevice(host.name, "host", ssh, {"host": ssh.host, "port": ssh.port, "transport": "ssh",
                                                  "username": USERS["host"]}, ssh.known_hosts_line())

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
                "username": USERS["eos"],
                "password_file": str(password),
                "ca_file": str(self.folder / "lab-ca.pem"),
                "known_hosts": str(self.folder / "known_hosts"),
                "timeout_s": 30,
            },
            "devices": {d.name: d.access for d in self.devices},
        }
        path = self.folder / "inventory.yaml"
        header = ("# Written by `rocefab lab up`: the local lab's devices on 127.0.0.1. TLS certificates and SSH\n"
                  "# host keys are pinned (lab-ca.pem, known_hosts); the password is in a file only you can read.\n")
        path.write_text(header + yaml.safe_dump(inventory, sort_keys=False), encoding="utf-8")
        os.chmod(path, 0o644)  # noqa: PTH101 - explicit: the inventory holds no secret
        return path
