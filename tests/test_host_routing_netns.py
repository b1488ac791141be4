"""The routing part of real rendered host scripts, applied by the kernel in network namespaces (root only).

A host namespace gets plain veth interfaces named as the script's bonds or rail NICs (bonds cannot be made here;
the routing does not care what carries the address), their far ends in a leaf namespace holding the gateways. The
script's own library and its address, route, rule and table lines run there; then `ip route get` says how a peer is
reached from each interface's address: a same-subnet peer on-link, a peer elsewhere in the fabric via the gateway.
The same run without the table's connected-subnet line shows what it fixes (same-rack traffic sent to the leaf).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from ipaddress import IPv4Interface, ip_interface
from pathlib import Path

import pytest
from hostlib import staged

ROOT = Path(__file__).resolve().parents[1]
ROUTING = re.compile(r"ensure_(address|route|rule|table_route|table_link) ")


def _namespaces_allowed() -> str | None:
    if shutil.which("ip") is None:  # CI installs it (ROCEFAB_REQUIRE_TOOLS): there the test fails instead
        return None if os.environ.get("ROCEFAB_REQUIRE_TOOLS") else "iproute2 is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    name = f"rf-probe-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        return f"network namespaces are not permitted here: {made.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], check=False)
    return None


WHY_NOT = _namespaces_allowed()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=WHY_NOT or "")


@dataclass(frozen=True)
class Port:
    """One routed interface of the script: its name, address, gateway and policy table."""

    netdev: str
    address: IPv4Interface
    gateway: str
    table: str


def ports(script: str) -> list[Port]:
    addresses = dict(re.findall(r"^ensure_address (\S+) (\S+)$", script, re.MULTILINE))
    tables = dict(re.findall(r"^ensure_rule (\S+) (\d+)$", script, re.MULTILINE))
    gateways = {dev: gw for _, gw, dev in re.findall(r"^ensure_route (\S+) (\S+) (\S+)$", script, re.MULTILINE)}
    return [Port(dev, ip_interface(cidr), gateways[dev], tables[cidr.split("/")[0]])  # type: ignore[arg-type]
            for dev, cidr in addresses.items()]


def routing_script(script: str, connected: bool = True) -> str:
    """The script's library, its routing lines (without the table's connected subnet unless `connected`), and its
    summary: what the whole script does to routing, and nothing else."""
    lines = script.splitlines()
    main = next(i for i, line in enumerate(lines) if line.startswith("require_tools "))
    picked = [line for line in lines[main:] if ROUTING.match(line)
              and (connected or not line.startswith("ensure_table_link "))]
    return "\n".join([*lines[:main], *picked, "finish", ""])


def sh(*argv: str) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{' '.join(argv)}: {done.stderr}"
    return done.stdout


@dataclass
class Namespaces:
    host: str
    leaf: str

    def run(self, *argv: str) -> str:
        return sh("ip", "netns", "exec", self.host, *argv)

    def route_get(self, peer: str, source: str) -> str:
        return " ".join(self.run("ip", "-4", "route", "get", peer, "from", source).split())


@pytest.fixture
def namespaces() -> Iterator[Namespaces]:
    made = Namespaces(f"rf-host-{os.getpid()}", f"rf-leaf-{os.getpid()}")
    for name in (made.host, made.leaf):
        sh("ip", "netns", "add", name)
    try:
        yield made
    finally:
        for name in (made.host, made.leaf):
            subprocess.run(["ip", "netns", "del", name], check=False)


def cable(ns: Namespaces, port: Port, index: int) -> None:
    """The host's interface and, in the leaf namespace, the gateway's end with the gateway address."""
    far = f"leaf{index}"
    sh("ip", "-n", ns.host, "link", "add", port.netdev, "type", "veth", "peer", "name", far, "netns", ns.leaf)
    sh("ip", "-n", ns.host, "link", "set", port.netdev, "up")
    sh("ip", "-n", ns.leaf, "addr", "add", f"{port.gateway}/{port.address.network.prefixlen}", "dev", far)
    sh("ip", "-n", ns.leaf, "link", "set", far, "up")


def peers(port: Port) -> tuple[str, str]:
    """A same-subnet peer (another host of the rack, or the leaf on a /31) and a peer elsewhere in the fabric."""
    net = port.address.network
    same = str(next(a for a in net.hosts() if str(a) not in (str(port.address.ip), port.gateway))) \
        if net.num_addresses > 2 else port.gateway
    elsewhere = str(net.network_address + 4 * net.num_addresses + 9) if net.num_addresses > 2 else \
        str(net.network_address + 4 * 256 + 9)
    return same, elsewhere


GOLDEN = [("pod32", "gpu001"), ("cluster1024-rail", "gpu1024")]


@pytest.mark.parametrize(("intent", "host"), GOLDEN)
def test_same_subnet_peers_are_on_link_and_the_rest_via_the_gateway(namespaces: Namespaces, tmp_path: Path,
                                                                    intent: str, host: str) -> None:
    script = staged((ROOT / "tests" / "golden" / intent / "hosts" / f"{host}.roce.sh").read_text(encoding="utf-8"))
    found = ports(script)
    assert len(found) >= 2, "each of the host's interfaces has its own table"
    for index, port in enumerate(found):
        cable(namespaces, port, index)
    before = tmp_path / "before.sh"
    before.write_text(routing_script(script, connected=False), encoding="utf-8")
    assert "changed" in namespaces.run("bash", str(before))
    shown: list[str] = []
    was = {}
    for port in found:
        same, _ = peers(port)
        was[port.netdev] = namespaces.route_get(same, str(port.address.ip))
        shown.append(f"before: {was[port.netdev]}")
    after = tmp_path / "after.sh"
    after.write_text(routing_script(script), encoding="utf-8")
    applied = namespaces.run("bash", str(after))
    assert "FAILED" not in applied, applied
    for port in found:
        same, elsewhere = peers(port)
        source = str(port.address.ip)
        on_link = namespaces.route_get(same, source)
        routed = namespaces.route_get(elsewhere, source)
        shown += [f"after:  {on_link}", f"after:  {routed}"]
        assert f" dev {port.netdev} " in f"{on_link} " and " via " not in on_link, on_link
        assert f"table {port.table}" in on_link, on_link
        assert f"via {port.gateway} dev {port.netdev} " in f"{routed} " and f"table {port.table}" in routed, routed
        if same != port.gateway:  # a peer of the rack went through the leaf before
            assert f"via {port.gateway} dev {port.netdev} " in f"{was[port.netdev]} ", was[port.netdev]
    checked = subprocess.run(["ip", "netns", "exec", namespaces.host, "bash", str(after), "--check"],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0 and "in sync" in checked.stdout, checked.stdout + checked.stderr
    print("\n".join(shown))
