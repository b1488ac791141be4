"""The lab's stand-in for a Cumulus switch: `nv` over SSH, with SFTP into the login's home."""

from __future__ import annotations

from pathlib import Path

from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.fabric import LabDevice
from rocefab.lab.sshd import LabSSHServer
from rocefab.lab.tls import LabCertificate
from rocefab.renderers.plan import Switch

USERNAME = "cumulus"


def start(switch: Switch, folder: Path, password: str, certificate: LabCertificate) -> LabDevice:
    device = CumulusDevice(folder / "devices" / switch.name, switch.name, username=USERNAME, password=password,
                           model=switch.model)
    server = LabSSHServer(device, name=switch.name, workers=4)
    return LabDevice(switch.name, "cumulus", server, {"host": server.host, "port": server.port,
                                                      "transport": "nvue-ssh", "username": USERNAME},
                     server.known_hosts_line())
