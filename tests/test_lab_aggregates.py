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
from rocefab.lab.configtree import ConfigTree
from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.nxos.config import NxosConfig
from rocefab.lab.wiring import BgpPeerConfig, BgpSpeaker, Wiring
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
