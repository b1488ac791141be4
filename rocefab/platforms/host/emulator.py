"""The lab's stand-in for a GPU host: real bash over SSH against a fake host (sysfs and stubbed tools)
whose ports come up at the speeds the plan gives them."""

from __future__ import annotations

from pathlib import Path

from rocefab.lab.fabric import LabDevice
from rocefab.lab.host.linux_host import LinuxHost
from rocefab.lab.sshd import LabSSHServer
from rocefab.lab.tls import LabCertificate
from rocefab.renderers.plan import Host

USERNAME = "root"


def _planned_speeds(host: Host) -> dict[str, int]:
    """Every fabric port comes up at the speed the plan gives it, in Mb/s as sysfs reports it."""
    speeds = {m.netdev: bond.speed_gbps * 1000 for bond in host.bonds for m in bond.members}
    speeds.update({nic.netdev: nic.speed_gbps * 1000 for nic in host.nics})
    return speeds


def start(host: Host, folder: Path, password: str, certificate: LabCertificate) -> LabDevice:
    netdevs = [*(m.netdev for bond in host.bonds for m in bond.members), *(n.netdev for n in host.nics)]
    lag = {bond.rdma_device: (bond.members[0].netdev, bond.members[1].netdev) for bond in host.bonds}
    device = LinuxHost(folder / "hosts" / host.name, host.name, netdevs, lag,
                       rdma={n.netdev: n.rdma_device for n in host.nics}, speeds=_planned_speeds(host),
                       username=USERNAME, password=password)
    server = LabSSHServer(device, name=host.name, workers=4)
    return LabDevice(host.name, "host", server, {"host": server.host, "port": server.port, "transport": "ssh",
                                                 "username": USERNAME}, server.known_hosts_line())
