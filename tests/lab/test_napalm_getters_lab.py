"""NAPALM's own getters, unpatched, as a second opinion on every lab switch NAPALM has a driver for (EOS over
eAPI, NX-OS over NX-API; NAPALM ships none for Cumulus): facts, interfaces, LLDP neighbours, BGP neighbours and
interface counters (EOS only: NAPALM's NX-API driver has none) each give the planned values of a freshly pushed
fabric. What rocefab's readers believe of these
devices is then also what the library operators use believes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from verifylab import napalm_driver, pushed_lab

from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan

ROOT = Path(__file__).resolve().parents[2]
INTENTS = {"eos": ROOT / "intents" / "lab.yaml", "nxos": ROOT / "tests" / "lab" / "intents" / "mixed.yaml"}


@pytest.fixture(scope="module", params=sorted(INTENTS))
def fabric(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        tuple[str, FabricPlan, Path]]:
    platform: str = request.param
    checked = check_file(INTENTS[platform], platform)
    assert checked.plan is not None
    with pushed_lab(INTENTS[platform], tmp_path_factory.mktemp("napalm") / "lab") as folder:
        yield platform, checked.plan, folder / "inventory.yaml"


def test_napalm_getters_return_the_plan(fabric: tuple[str, FabricPlan, Path], subtests: pytest.Subtests) -> None:
    platform, plan, inventory = fabric
    hosts = {h.name for h in plan.hosts}
    for sw in (s for s in plan.switches if s.platform == platform):
        with subtests.test(msg=sw.name):
            device = napalm_driver(inventory, sw)
            try:
                facts = device.get_facts()
                # NX-OS names the chassis ("Nexus9000 C9364D-GX2A Chassis"), EOS the product (DCS-...)
                assert facts["hostname"] == sw.name and sw.model.removeprefix("N9K-") in facts["model"]
                interfaces = device.get_interfaces()
                for port in sw.ports:
                    seen = interfaces[port.name]
                    assert seen["is_up"] and seen["speed"] == port.speed_gbps * 1000, (port.name, seen)
                lldp = device.get_lldp_neighbors()
                for port in sw.ports:
                    names = {(n["hostname"].split(".")[0], n["port"]) for n in lldp.get(port.name, [])}
                    assert (port.peer.device, port.peer.port) in names or port.peer.device in hosts, port.name
                peers = device.get_bgp_neighbors()["global"]["peers"]
                assert len(peers) == len(sw.bgp.neighbors)
                assert all(p["is_up"] for p in peers.values()), peers
                assert sorted(p["remote_as"] for p in peers.values()) == sorted(n.remote_asn for n in sw.bgp.neighbors)
                if platform == "nxos":  # NAPALM's NX-API driver has no counters getter (its SSH driver has)
                    with pytest.raises(NotImplementedError):
                        device.get_interfaces_counters()
                    continue
                counters = device.get_interfaces_counters()
                for port in sw.ports:
                    # -1 is NAPALM's word for a counter the device did not report
                    assert counters[port.name]["rx_unicast_packets"] >= 0, (port.name, counters[port.name])
            finally:
                device.close()
