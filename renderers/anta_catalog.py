"""An ANTA test catalog for the fabric's switches that ANTA can test (Arista EOS): the same expectations verify
holds, written as ANTA's own tests, for teams whose tool ANTA is.

One catalog for the fabric; each test carries `filters: tags: [<device>]`, and ANTA tags every device of its
inventory with its own name, so `anta nrfu --catalog anta/catalog.yml` runs each switch's tests on that switch
only. Tests used (ANTA 1.x names and inputs): interface status and speed of every planned port and LAG, the L3
MTU of routed interfaces, LLDP neighbours of fabric links from the cabling plan, a BGP session to every planned
peer (by address, or by interface when unnumbered), MLAG health, and no drop ever counted on the lossless queue of
any planned port (the RoCE priority's unicast traffic class, drop precedence 0).

Left to verify, which reads two samples of the counters: ANTA's PFC and ECN counter tests compare totals since the
counters were cleared with a fixed threshold, and a healthy lossless fabric pauses and marks now and then, so no
threshold tells a storm from a busy week. ANTA has no test of the QoS configuration (trust, DSCP map, PFC
priorities, strict CNP queue): `rocefab verify` checks those.
"""

from __future__ import annotations

from typing import Any

from rocefab.platforms import unit
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.templating import header_lines
from rocefab.renderers.yamltext import dump_block


def _switch_tests(plan: FabricPlan, sw: Switch) -> dict[str, list[dict[str, Any]]]:
    tags = {"filters": {"tags": [sw.name]}}
    hosts = {h.name for h in plan.hosts}
    status = [{"name": p.name, "status": "up"} for p in sw.ports] + [{"name": lag.name, "status": "up"}
                                                                        for lag in sw.lags]
    speed = [{"name": p.name, "auto": False, "speed": p.speed_gbps} for p in sw.ports]
    lldp = [{"port": p.name, "neighbor_device": p.peer.device, "neighbor_port": p.peer.port}
            for p in sw.ports if p.peer.device not in hosts]
    peers = [{"interface": n.interface} if n.interface else {"peer_address": n.address, "vrf": "default"}
             for n in sw.bgp.neighbors]
    tests: dict[str, list[dict[str, Any]]] = {
        "anta.tests.interfaces": [
            {"VerifyInterfacesStatus": {"interfaces": status, **tags}},
            {"VerifyInterfacesSpeed": {"interfaces": speed, **tags}},
            {"VerifyL3MTU": {"mtu": sw.mtu_bytes, **tags}},
            # EOS queues priority p in traffic class p: the RoCE priority's class is the priority itself
            {"VerifyInterfacesEgressQueueDrops": {"interfaces": [p.name for p in sw.ports],
                                                  "traffic_classes": [f"TC{plan.qos.roce_priority}"],
                                                  "queue_types": ["unicast"], **tags}},
        ],
        "anta.tests.connectivity": [{"VerifyLLDPNeighbors": {"neighbors": lldp, **tags}}],
        "anta.tests.routing.bgp": [{"VerifyBGPPeerSession": {"bgp_peers": peers, **tags}}],
    }
    if sw.mlag is not None:
        tests["anta.tests.mlag"] = [{"VerifyMlagStatus": dict(tags)}]
    return tests


def anta_switches(plan: FabricPlan) -> list[Switch]:
    return [sw for sw in plan.switches if unit(sw.platform).anta]


def render_anta_catalog(plan: FabricPlan) -> str | None:
    """The catalog's YAML, or None when no switch of the fabric is one ANTA tests."""
    switches = anta_switches(plan)
    if not switches:
        return None
    header = header_lines(plan.source, "ANTA 1.x test catalog: anta nrfu --catalog anta/catalog.yml",
                          ", ".join(sw.name for sw in switches))
    catalog: dict[str, list[dict[str, Any]]] = {}
    for sw in switches:
        for module, tests in _switch_tests(plan, sw).items():
            catalog.setdefault(module, []).extend(tests)
    return "".join(f"# {line}\n" for line in header) + dump_block(catalog)
