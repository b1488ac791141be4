"""The lab's stand-in for an EOS switch: the eAPI emulator, over HTTPS with the lab's certificate."""

from __future__ import annotations

from pathlib import Path

from rocefab.lab.eos.device import EosDevice
from rocefab.lab.eos.eapi import serve_eos
from rocefab.lab.fabric import LabDevice
from rocefab.lab.tls import LabCertificate
from rocefab.renderers.plan import Switch

VERSION = "4.34.1F"  # what `show version` reports: the release the templates target


def start(switch: Switch, folder: Path, password: str, certificate: LabCertificate) -> LabDevice:
    server = serve_eos(EosDevice(switch.name, model=switch.model, version=VERSION, password=password),
                       tls=certificate)
    return LabDevice(switch.name, "eos", server, {"host": server.host, "port": server.port, "transport": "eapi"})
