"""The lab emulators and the rail leaves' BGP summaries, without starting a lab: each NOS's grammar takes the rendered
aggregate line where the template puts it and reads it back into the BGP speaker, and lab/routing.py originates an
aggregate only with a contributor, and keeps a summary-only aggregate's longer prefixes from the peers."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import TEST_VERSION
from test_rail_host_script import RAIL_INTENT

from rocefab.lab import routing
from rocefab.lab.configtree import ConfigError, ConfigTree, Cursor
from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.nxos.config import NxosConfig
from rocefab.lab.wiring import GRACEFUL_SHUTDOWN, ISOLATE, BgpPeerConfig, BgpSpeaker, Wiring
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Role, Switch
from rocefab.renderers.render import render_fabric


def _rail(tmp_path: Path, leaf_model: str) -> tuple[FabricPlan, dict[str, str]]:
    intent = copy.deepcopy(RAIL_INTENT)
    intent["topology"]["models"] = {"leaf": leaf_model, "spine": "SN5600"}
    path = tmp_path / "rail.yaml"
    path.write_text(yaml.safe_dump(intent), encoding="utf-8")
    checked = check_file(path, TEST_VERSION)
    assert checked.plan is not None, [str(f) for f in checked.findings]
    return checked.plan, {f.path: f.content for f in render_fabric(checked.plan)}


def _first_leaf(plan: FabricPlan) -> Switch:
    leaf = next(s for s in plan.switches if s.role is Role.LEAF)
    assert len(leaf.bgp.aggregates) == 1  # four servers: a /29 over four /31s
    return leaf


def test_eos_takes_the_aggregate_at_router_bgp_level(tmp_path: Path) -> None:
    plan, files = _rail(tmp_path, "DCS-7060X6-64PE")
    leaf = _first_leaf(plan)
    tree = ConfigTree.parse(EOS_GRAMMAR, files[f"switches/{leaf.name}.cfg"])
    lines = tree.text().splitlines()
    (agg,) = leaf.bgp.aggregates
    at = lines.index(f"   aggregate-address {agg} summary-only")
    assert lines.index("   address-family ipv4") > at  # printed before the address families, where it was rendered


def test_nxos_takes_the_aggregate_in_its_ipv4_family(tmp_path: Path) -> None:
    plan, files = _rail(tmp_path, "N9K-C9364D-GX2A")
    leaf = _first_leaf(plan)
    text = NxosConfig.parse(files[f"switches/{leaf.name}.cfg"]).render()
    (agg,) = leaf.bgp.aggregates
    family = text.split("  address-family ipv4 unicast\n", 1)[1].split("\n  neighbor ", 1)[0]
    assert f"    aggregate-address {agg} summary-only" in family.splitlines()


def test_nvue_takes_aggregate_route_and_refuses_other_values(tmp_path: Path) -> None:
    dev = CumulusDevice(tmp_path / "cl", "cl")
    base = "nv set vrf default router bgp address-family ipv4-unicast"
    for line in ("nv set router bgp autonomous-system 65100", f"{base} network 10.128.0.0/31",
                 f"{base} network 10.128.0.2/31", f"{base} aggregate-route 10.128.0.0/30 summary-only on"):
        assert dev.handle(line, "cumulus")[0] == 0, line
    code, _, err = dev.handle(f"{base} aggregate-route 10.128.0.0/30 summary-only yes", "cumulus")
    assert code == 1 and "'yes' is not one of ['on', 'off']" in err
    assert dev.handle("nv config apply -y", "cumulus")[0] == 0
    speaker = dev.bgp_speaker()
    assert speaker is not None and speaker.aggregates == (("10.128.0.0/30", True),)


class _Speaker:
    """A device of the wiring that only speaks BGP, with every port enabled."""

    def __init__(self, speaker: BgpSpeaker) -> None:
        self.speaker = speaker

    def bgp_speaker(self) -> BgpSpeaker:
        return self.speaker

    def port_enabled(self, port: str) -> bool:
        return True


def _fabric(aggregates: tuple[tuple[str, bool], ...], networks: tuple[str, ...]) -> Wiring:
    """leaf-a and leaf-b, each on one /31 to the spine; leaf-a originates `networks` and `aggregates`."""
    far = {("leaf-a", "e1"): ("spine", "s1"), ("spine", "s1"): ("leaf-a", "e1"),
           ("leaf-b", "e1"): ("spine", "s2"), ("spine", "s2"): ("leaf-b", "e1")}
    wiring = Wiring(far, dict.fromkeys(far, 400))
    devices: dict[str, Any] = {
        "leaf-a": BgpSpeaker(65001, "10.0.0.1", (BgpPeerConfig("10.1.0.1", 65000, None, "10.1.0.1"),),
                             {"10.1.0.0": "e1"}, networks, aggregates),
        "spine": BgpSpeaker(65000, "10.0.0.3", (BgpPeerConfig("10.1.0.0", 65001, None, "10.1.0.0"),
                                                BgpPeerConfig("10.1.0.3", 65002, None, "10.1.0.3")),
                            {"10.1.0.1": "s1", "10.1.0.2": "s2"}),
        "leaf-b": BgpSpeaker(65002, "10.0.0.2", (BgpPeerConfig("10.1.0.2", 65000, None, "10.1.0.2"),),
                             {"10.1.0.3": "e1"}, ("10.0.0.2/32",)),
    }
    wiring.devices = {name: _Speaker(sp) for name, sp in devices.items()}
    return wiring


HOSTS = ("10.128.0.0/31", "10.128.0.2/31")


def _peers(wiring: Wiring, device: str, prefix: str) -> list[str] | None:
    hops = routing.next_hops(wiring, device, prefix)
    return None if hops is None else [h.peer for h in hops]


def test_a_summary_only_aggregate_replaces_its_contributors() -> None:
    wiring = _fabric((("10.128.0.0/30", True),), ("10.0.0.1/32", *HOSTS))
    assert _peers(wiring, "spine", "10.128.0.0/30") == ["leaf-a"]
    assert _peers(wiring, "leaf-b", "10.128.0.0/30") == ["spine"]
    assert _peers(wiring, "leaf-a", "10.128.0.0/30") is None  # its own
    assert _peers(wiring, "spine", HOSTS[1]) == [] and _peers(wiring, "leaf-b", HOSTS[0]) == []
    assert _peers(wiring, "spine", "10.0.0.1/32") == ["leaf-a"]  # the loopback is outside: still advertised


@pytest.mark.parametrize(("aggregates", "networks", "spine_sees"), [
    ((("10.128.0.0/30", False),), HOSTS, {"10.128.0.0/30", *HOSTS}),  # no summary-only: both travel
    ((("10.128.0.0/30", True),), ("10.128.0.0/30",), {"10.128.0.0/30"}),  # same length: a network, not a contributor
    ((("10.128.4.0/30", True),), HOSTS, set(HOSTS)),  # no contributor inside: never originated
])
def test_an_aggregate_needs_a_longer_contributor(aggregates: tuple[tuple[str, bool], ...], networks: tuple[str, ...],
                                                 spine_sees: set[str]) -> None:
    wiring = _fabric(aggregates, networks)
    candidates = {"10.128.0.0/30", "10.128.4.0/30", *HOSTS}
    assert {p for p in candidates if _peers(wiring, "spine", p)} == spine_sees


def _two_spines(maintenance: dict[str, str]) -> Wiring:
    """leaf-a and leaf-b, each on a /31 to spine1 and to spine2; leaf-b and spine1 originate their loopbacks;
    `maintenance` puts devices in a maintenance mode."""
    links = [("leaf-a", "e1", "spine1", "s1", "10.1.0.0"), ("leaf-a", "e2", "spine2", "s1", "10.1.0.2"),
             ("leaf-b", "e1", "spine1", "s2", "10.1.0.4"), ("leaf-b", "e2", "spine2", "s2", "10.1.0.6")]
    far: dict[tuple[str, str], tuple[str, str]] = {}
    asn = {"leaf-a": 65001, "leaf-b": 65002, "spine1": 65000, "spine2": 65000}
    peers: dict[str, list[BgpPeerConfig]] = {name: [] for name in asn}
    addresses: dict[str, dict[str, str]] = {name: {} for name in asn}
    for leaf, leaf_port, spine, spine_port, low in links:
        high = low[:-1] + str(int(low[-1]) + 1)
        far[(leaf, leaf_port)], far[(spine, spine_port)] = (spine, spine_port), (leaf, leaf_port)
        addresses[leaf][low], addresses[spine][high] = leaf_port, spine_port
        peers[leaf].append(BgpPeerConfig(high, asn[spine], None, high))
        peers[spine].append(BgpPeerConfig(low, asn[leaf], None, low))
    originated = {"leaf-b": ("10.0.0.2/32",), "spine1": ("10.0.0.11/32",)}
    wiring = Wiring(far, dict.fromkeys(far, 400))
    wiring.devices = {name: _Speaker(BgpSpeaker(asn[name], f"10.0.0.{i}", tuple(peers[name]), addresses[name],
                                                originated.get(name, ()), maintenance=maintenance.get(name)))
                      for i, name in enumerate(asn, 1)}
    return wiring


def test_a_drained_spine_leaves_the_ecmp_group_while_another_path_exists() -> None:
    assert sorted(_peers(_two_spines({}), "leaf-a", "10.0.0.2/32") or []) == ["spine1", "spine2"]
    for mode in (GRACEFUL_SHUTDOWN, ISOLATE):
        assert _peers(_two_spines({"spine1": mode}), "leaf-a", "10.0.0.2/32") == ["spine2"], mode
    # every spine drained with graceful shutdown: the tagged paths are all there is, so both still carry traffic
    both = _two_spines({"spine1": GRACEFUL_SHUTDOWN, "spine2": GRACEFUL_SHUTDOWN})
    assert sorted(_peers(both, "leaf-a", "10.0.0.2/32") or []) == ["spine1", "spine2"]
    # isolated, a switch still advertises what it originates, and withdraws what it learnt
    isolated = _two_spines({"spine1": ISOLATE})
    assert _peers(isolated, "leaf-a", "10.0.0.11/32") == ["spine1"]
    assert _peers(_two_spines({"spine1": ISOLATE, "spine2": ISOLATE}), "leaf-a", "10.0.0.2/32") == []


def test_a_drained_leaf_is_still_the_only_way_to_its_own_prefix() -> None:
    drained = _two_spines({"leaf-b": GRACEFUL_SHUTDOWN})
    assert sorted(_peers(drained, "leaf-a", "10.0.0.2/32") or []) == ["spine1", "spine2"]
    assert _peers(drained, "spine1", "10.0.0.2/32") == ["leaf-b"]


def test_nvue_maintenance_mode_drains_bgp_and_takes_only_its_documented_values(tmp_path: Path) -> None:
    """Cumulus 5.14, Maintenance Mode: `nv set maintenance unit all-protocols mode enabled|disabled`."""
    dev = CumulusDevice(tmp_path / "cl", "cl")
    for line in ("nv set router bgp autonomous-system 65100", "nv set vrf default router bgp router-id 10.0.0.9",
                 "nv set maintenance unit all-protocols mode enabled"):
        assert dev.handle(line, "cumulus")[0] == 0, line
    code, _, err = dev.handle("nv set maintenance unit all-protocols mode maintenance", "cumulus")
    assert code == 1 and "'maintenance' is not one of ['enabled', 'disabled']" in err
    assert dev.handle("nv config apply -y", "cumulus")[0] == 0
    speaker = dev.bgp_speaker()
    assert speaker is not None and speaker.maintenance == GRACEFUL_SHUTDOWN
    for line in ("nv set maintenance unit all-protocols mode disabled", "nv config apply -y"):
        assert dev.handle(line, "cumulus")[0] == 0, line
    speaker = dev.bgp_speaker()
    assert speaker is not None and speaker.maintenance is None


def test_eos_takes_a_quiesced_maintenance_unit_only_inside_the_unit() -> None:
    text = "maintenance\n   unit System\n      quiesce\n"
    assert "      quiesce" in ConfigTree.parse(EOS_GRAMMAR, text).text().splitlines()
    with pytest.raises(ConfigError):
        ConfigTree.parse(EOS_GRAMMAR, "maintenance\n   quiesce\n")


def test_eos_no_quiesce_clears_the_unit() -> None:
    tree = ConfigTree.parse(EOS_GRAMMAR, "maintenance\n   unit System\n      quiesce\n")
    cursor = Cursor(tree)
    for line in ("maintenance", "unit System", "no quiesce"):
        cursor.apply(line)
    assert "quiesce" not in tree.text() and "unit System" in tree.text()
