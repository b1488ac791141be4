"""The lab's stand-in for an NX-OS switch: NX-API over HTTPS plus SSH/SCP for full replaces."""

from __future__ import annotations

from pathlib import Path

from rocefab.lab.fabric import LabDevice
from rocefab.lab.nxos.device import NxosDevice
from rocefab.lab.nxos.server import serve_nxos
from rocefab.lab.tls import LabCertificate
from rocefab.renderers.plan import Switch


def start(switch: Switch, folder: Path, password: str, certificate: LabCertificate) -> LabDevice:
    server = serve_nxos(NxosDevice(switch.name, password=password), tls=certificate)
    return LabDevice(switch.name, "nxos", server,
                     {"host": server.host, "port": server.http_port, "ssh_port": server.ssh_port,
                      "transport": "nxapi"},
                     f"[{server.host}]:{server.ssh_port} {server.host_key_public}")
