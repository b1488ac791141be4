"""The lab's emulators answer in the shapes real devices do: each emulator answer to a command the corpus
(tests/fixtures/devices) has samples of is compared with them, path by path — keys, nesting, one-row tables,
and the kind of every value (a JSON number, a string of digits, a word). Every path the emulator prints must be
in some sample of that command; a path no sample shows is allowed only where this file says why. So an emulator
can only drift from the devices by failing here, and never toward what rocefab's readers happen to expect."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from corpus import beyond, entries, load, shape
from verifylab import napalm_driver, pushed_lab

from rocefab.deploy.inventory import PasswordSource, load_inventory
from rocefab.deploy.verify.ecmp import planned_routes
from rocefab.platforms.nxos import bootflash
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "tests" / "lab" / "intents" / "mixed.yaml"
LAB = ROOT / "intents" / "lab.yaml"

# NX-OS: the command sent (as the readers and NAPALM send it) -> the corpus commands whose samples it must fit.
# `show ip bgp summary` and `show bgp all summary vrf all` print one table; releases differ on counts as numbers
# or strings, so the two commands' samples together are the allowed shape.
NXOS = {
    "show interface counters | json": ["show interface counters | json"],
    "show interface counters errors | json": ["show interface counters errors | json"],
    "show interface priority-flow-control | json": ["show interface priority-flow-control | json"],
    "show queuing interface | json": ["show queuing interface | json"],
    "show queuing pfc-queue detail | json": ["show queuing pfc-queue detail | json"],
    "show ip bgp summary vrf default | json": ["show ip bgp summary vrf default | json",
                                               "show bgp all summary vrf all | json"],
    "show bgp all summary vrf all | json": ["show ip bgp summary vrf default | json",
                                            "show bgp all summary vrf all | json"],
    "show vpc brief | json": ["show vpc brief | json"],
    "show interface | json": ["show interface | json"],
    "show lldp neighbors detail | json": ["show lldp neighbors detail | json"],
    "show version | json": ["show version | json"],
    "show ip route {prefix} | json": ["show ip route "],
}
# EOS, over eAPI: what verify, NAPALM's getters and ANTA's tests send. `show bgp neighbors` and `show ip bgp
# neighbors` list the same peers (ANTA reads the first, NAPALM the second).
EOS = {
    "show interfaces": ["show interfaces"],
    "show priority-flow-control counters": ["show priority-flow-control counters"],
    "show interfaces counters queue detail": ["show interfaces counters queue detail"],
    "show qos interfaces ecn counters queue": ["show qos interfaces ecn counters queue"],
    "show interfaces description": ["show interfaces description"],
    "show mlag": ["show mlag"],
    "show ip route {prefix}": ["show ip route "],
    "show lldp neighbors detail": ["show lldp neighbors detail"],
    "show lldp neighbors": ["show lldp neighbors"],
    "show bgp neighbors vrf all": ["show bgp neighbors vrf all", "show ip bgp neighbors vrf all"],
    "show ip bgp neighbors vrf all": ["show ip bgp neighbors vrf all"],
    "show ip bgp summary vrf all": ["show ip bgp summary vrf all"],
    "show ipv6 bgp summary vrf all": ["show ipv6 bgp summary vrf all"],
    "show ipv6 bgp peers vrf all": ["show ipv6 bgp peers vrf all"],
    "show version": ["show version"],
    "show configuration sessions detail": ["show configuration sessions detail"],
}
# Cumulus, over SSH: what verify's counter reader sends per port (platforms/cumulus/counters.py). The SN5600
# collector's queue table and NVIDIA's table-derived one are the same view, so together they are its shape.
CUMULUS = {
    "show interface {port} link stats -o json": ["nv show interface swp1 link stats -o json"],
    "show interface {port} counters qos -o json": ["nv show interface swp1 counters qos -o json",
                                                   "nv show interface swp37s0 counters qos -o json"],
    "show interface {port} qos pfc-watchdog status -o json": ["nv show interface swp1 qos pfc-watchdog status -o json"],
}
# paths an emulator prints that no sample shows, each with the evidence it rests on
ALLOWED = {
    "/TABLE_interface/ROW_interface[]/desc: str":
        "a port's description: NAPALM's nxos get_interfaces reads `desc` (napalm/nxos/nxos.py); no sample has a "
        "described port",
    "/vpc-domain-id: str":
        "a switch without a vPC domain ('not configured', as NX-OS's text prints the domain id); no JSON sample of "
        "such a switch was found (the index lists it as unsourced), and the reader takes any word as no vPC",
}


def samples_shape(platform: str, commands: list[str]) -> set[str]:
    """The union of the samples' shapes; a command ending in a space matches any argument (a route's prefix)."""
    found = [e for c in commands for e in entries(platform, c) if e["file"].endswith(".json")
             and (c.endswith(" ") or e["command"] == c)]
    assert found, commands
    return set().union(*(shape(load(platform, e["file"])) for e in found))


def pushed(intent: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FabricPlan, Path]]:
    checked = check_file(intent, intent.stem)
    assert checked.plan is not None
    with pushed_lab(intent, tmp_path_factory.mktemp("conformance") / "lab") as folder:
        yield checked.plan, folder / "inventory.yaml"


@pytest.fixture(scope="module")
def mixed_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FabricPlan, Path]]:
    yield from pushed(MIXED, tmp_path_factory)


@pytest.fixture(scope="module")
def eos_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FabricPlan, Path]]:
    yield from pushed(LAB, tmp_path_factory)


def drift(plan: FabricPlan, inventory: Path, platform: str, commands: dict[str, list[str]],
          ask: Callable[[Any, list[str]], list[Any]]) -> list[str]:
    """Every path of every switch's answer to each command that no sample of it shows (nor ALLOWED names)."""
    found = []
    for sw in (s for s in plan.switches if s.platform == platform):
        prefix = next(iter(planned_routes(plan, sw)), None)
        sent = [t.format(prefix=prefix.prefix if prefix else "0.0.0.0/0") for t in commands]
        device = napalm_driver(inventory, sw)
        try:
            answers = ask(device, sent)
        finally:
            device.close()
        for template, body in zip(commands, answers, strict=True):
            printed = shape(body)
            assert printed and printed != {": dict"}, f"{sw.name}: {template} answered nothing"
            allowed = samples_shape(platform, commands[template])
            found += [f"{sw.name}: {template}: {path}" for path in sorted(beyond(printed, allowed))
                      if path not in ALLOWED]
    return found


def test_nxos_emulator_answers_in_the_samples_shapes(mixed_lab: tuple[FabricPlan, Path]) -> None:
    def ask(device: Any, sent: list[str]) -> list[Any]:
        return [json.loads(device.cli([c])[c] or "{}") for c in sent]  # NX-API, one command a request

    assert not (found := drift(*mixed_lab, "nxos", NXOS, ask)), "\n".join(found)


def test_eos_emulator_answers_in_the_samples_shapes(eos_lab: tuple[FabricPlan, Path]) -> None:
    def ask(device: Any, sent: list[str]) -> list[Any]:
        return list(device.device.run_commands(sent, encoding="json"))  # eAPI, one request

    assert not (found := drift(*eos_lab, "eos", EOS, ask)), "\n".join(found)


def test_cumulus_emulator_answers_in_the_samples_shapes(mixed_lab: tuple[FabricPlan, Path]) -> None:
    from rocefab.platforms.cumulus.session import CumulusSession

    plan, inventory = mixed_lab
    found = []
    for sw in (s for s in plan.switches if s.platform == "cumulus"):
        access = load_inventory(inventory).access(sw.name, sw.platform, PasswordSource(False))
        with CumulusSession(access) as session:
            for template, commands in CUMULUS.items():
                port = sw.ports[0].name
                body = json.loads(session._nv(*template.format(port=port).split()).stdout)
                printed = shape(body)
                assert printed and printed != {": dict"}, f"{sw.name}: {template} answered nothing"
                found += [f"{sw.name}: {template}: {path}"
                          for path in sorted(beyond(printed, samples_shape("cumulus", commands)))]
    assert not found, "\n".join(found)


# Hosts: the fake host's tools print text; each line, with its numbers as N, must be a line some sample of that
# tool prints (tests/fixtures/devices/host), in any mlnx-tools era the samples cover.
HOST_TOOLS = {
    ("mlnx_qos", "-i", "{port}"): "mlnx_qos",
    ("ethtool", "-a", "{port}"): "ethtool_a",
    ("ethtool", "-S", "{port}"): "ethtool_s",
    ("cma_roce_tos", "-d", "{rdma}", "-p", "1"): "cma_roce_tos",
}
HOST_ALLOWED = {
    "     rx_packets_phy: N": "mlx5's physical-port counter (Linux Documentation/networking/device_drivers/ethernet/"
                              "mellanox/mlx5/counters.rst); the ethtool -S sample is trimmed to pause counters",
    "     tx_packets_phy: N": "as rx_packets_phy",
}


def _lines(text: str) -> set[str]:
    return {re.sub(r"\d+", "N", line.rstrip()) for line in text.splitlines()}


@pytest.mark.parametrize("trust", ["pcp", "dscp"])
def test_host_tools_print_the_samples_lines(trust: str, tmp_path: Path) -> None:
    from rocefab.lab.host import fakehost

    root = fakehost.make_host(tmp_path / "host", ["ens1f0np0"], trust=trust)
    fakehost.stub(root, "mlnx_qos", "-i", "ens1f0np0", "--pfc", "0,0,0,1,0,0,0,0")  # a PFC priority: its counters
    drift = []
    for argv, stem in HOST_TOOLS.items():
        printed = fakehost.stub(root, *(a.format(port="ens1f0np0", rdma="mlx5_0") for a in argv)).stdout
        known = set().union(*(_lines(load("host", e["file"])) for e in entries("host", "")
                              if stem in e["file"]))
        drift += [f"{' '.join(argv)}: {line!r}" for line in sorted(_lines(printed) - known)
                  if line not in HOST_ALLOWED]
    assert not drift, "\n".join(drift)


def test_nxos_emulator_lists_bootflash_as_the_samples_do(mixed_lab: tuple[FabricPlan, Path]) -> None:
    """`dir bootflash:` with a folder in it (a lock mark): rows and usage lines in the captured answers' layout."""
    plan, inventory = mixed_lab
    sw = next(s for s in plan.switches if s.platform == "nxos")
    device = napalm_driver(inventory, sw)
    try:
        device.cli(["mkdir bootflash:rocefab-lock.conformance"])
        text = str(device.cli(["dir bootflash:"])["dir bootflash:"])
        device.cli(["rmdir bootflash:rocefab-lock.conformance"])
        after = str(device.cli(["dir bootflash:"])["dir bootflash:"])
    finally:
        device.close()
    rows, usage = text.split("\n\n", 1)
    assert all(bootflash.ROW.fullmatch(line) for line in rows.splitlines()), rows
    assert ("rocefab-lock.conformance", True) in bootflash.entries(text)
    assert ("rocefab-lock.conformance", True) not in bootflash.entries(after)
    sample = (ROOT / "tests/fixtures/devices/nxos/7.3/dir_bootflash.txt").read_text(encoding="utf-8")
    shape_of = [re.sub(r"\d+", "N", line.strip()) for line in sample.split("\n\n", 1)[1].splitlines()]
    assert [re.sub(r"\d+", "N", line.strip()) for line in usage.splitlines() if line.strip()] == shape_of
