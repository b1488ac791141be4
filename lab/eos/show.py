"""The show commands of the lab's EOS emulator: each handler answers (eAPI JSON, CLI text) from the device's config,
files and sessions and, for interfaces, LLDP, BGP and MLAG, from what lab/eos/state.py derives.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from rocefab.lab.configtree import ConfigTree, unified_diff
from rocefab.lab.eos import state as eos_state
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.eos.sessions import failed

if TYPE_CHECKING:
    from rocefab.lab.eos.commands import Batch


def show_version(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    dev, uptime = b.dev, b.dev.uptime()
    build = dev.version.replace(".", "")
    out = {"mfgName": "Arista", "modelName": dev.model, "hardwareRevision": "11.00", "serialNumber": dev.serial,
           "systemMacAddress": dev.mac, "hwMacAddress": dev.mac, "configMacAddress": "00:00:00:00:00:00",
           "version": dev.version, "architecture": "x86_64", "internalVersion": f"{dev.version}-40000000.{build}",
           "internalBuildId": "00000000-0000-0000-0000-000000000000", "imageFormatVersion": "3.0",
           "imageOptimization": "Default", "bootupTimestamp": dev._boot_epoch, "uptime": uptime,
           "memTotal": 32_000_000, "memFree": 24_000_000, "isIntlVersion": False}
    return out, (f"Arista {dev.model}\nSerial number: {dev.serial}\nSystem MAC address: {dev.mac}\n\n"
                 f"Software image version: {dev.version}\nUptime: {int(uptime)} seconds\n")


def show_hostname(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    name = b.dev.hostname
    return {"hostname": name, "fqdn": name}, f"Hostname: {name}\nFQDN:     {name}\n"


def show_interfaces(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    interfaces = eos_state.interfaces(b.dev)
    if m.group(1):
        if m.group(1) not in interfaces:
            raise failed(f"Interface does not exist: {m.group(1)}")
        interfaces = {m.group(1): interfaces[m.group(1)]}
    text = "".join(f"{n} is {i['lineProtocolStatus']}\n  Description: {i['description']}\n  MTU {i['mtu']} bytes\n"
                   for n, i in interfaces.items())
    return {"interfaces": interfaces}, text


def show_lldp(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    rows = eos_state.lldp_neighbors(b.dev)
    return {"lldpNeighbors": rows}, "".join(f"{r['port']} {r['neighborDevice']} {r['neighborPort']}\n" for r in rows)


def show_bgp_summary(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    summary = eos_state.bgp_summary(b.dev)
    rows = [f"{key} {p['asn']} {p['peerState']}\n"
            for vrf in summary["vrfs"].values() for key, p in vrf["peers"].items()]
    return summary, "".join(rows)


def show_mlag(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    from rocefab.lab.eos.device import EosDevice  # not at the top: eos_device imports eos_commands, which imports this

    peers = {n: d for n, d in b.dev.wiring.devices.items() if isinstance(d, EosDevice)} if b.dev.wiring else {}
    state = eos_state.mlag(b.dev, peers)
    return state, "".join(f"{k}: {v}\n" for k, v in state.items())


def show_sessions(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    dev = b.dev
    # Only the keys the corpus shows (tests/fixtures/devices/eos, reconstructed from NAPALM's and Arista's readers)
    out: dict[str, Any] = {"sessions": {}}
    for s in dev.sessions.values():
        info: dict[str, Any] = {"state": s.state}
        if s.state == "pendingCommitTimer":
            if dev.new_shape():
                out["commitTimerSessionName"], out["commitTimerExpireTime"] = s.name, s.commit_by
            else:
                info["commitBy"] = s.commit_by
        out["sessions"][s.name] = info
    text = "".join(f"{n:<24}{i['state']}\n" for n, i in out["sessions"].items())
    return out, text


def show_session_config(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    if m.group(1):
        session = b.named_session(m.group(1))
    elif b.session is not None:
        session = b.session
    else:
        raise failed("% Not in a configuration session")
    if m.group(2):
        return None, unified_diff(b.dev.running, session.config, "system:/running-config",
                                  f"session:/{session.name}-session-config")
    return None, session.config.text()


def _sanitize(text: str) -> str:
    return re.sub(r"(secret (?:sha512 |5 |0 )?)\S+", r"\1<removed>", text)


def show_config(b: Batch, m: re.Match[str], data: str | None) -> tuple[dict[str, Any] | None, str]:
    startup, options, pipe_json = m.group(1) == "startup", m.group(2).split(), bool(m.group(3))
    text = b.dev.startup if startup else b.dev.running_text()
    if "sanitized" in options:
        text = _sanitize(text)
    if not pipe_json and b.fmt == "text":
        return None, text
    as_json = {"header": [f"! device: {b.dev.hostname} ({b.dev.model}, EOS-{b.dev.version})"],
               **ConfigTree.parse(EOS_GRAMMAR, text).to_json()}
    return as_json, json.dumps(as_json, indent=2)
