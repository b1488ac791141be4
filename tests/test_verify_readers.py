"""verify's readers on text, without a lab: each platform's QoS reading of the configuration rocefab renders for
it agrees with the plan on every port, and a line taken away is seen as missing; the host reader parses the
tools' real output formats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rocefab.deploy.verify.checks import Verdict, switch_rows
from rocefab.deploy.verify.doctor_fabric import tier_too_thin
from rocefab.deploy.verify.ecmp import ecmp_rows, planned_routes
from rocefab.deploy.verify.observation import Interface, Neighbor, NextHop, SwitchObservation, SwitchQos
from rocefab.platforms import unit
from rocefab.platforms.cumulus import observe as cumulus
from rocefab.platforms.eos import observe as eos
from rocefab.platforms.host import observe as host
from rocefab.platforms.nxos import observe as nxos
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Switch
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[1]
_checked = check_file(ROOT / "intents" / "pod32.yaml", "pod32")
assert _checked.plan is not None
PLAN: FabricPlan = _checked.plan
FILES = {(f.device, f.kind): f.content for f in render_fabric(PLAN)}


def rendered(sw: Switch) -> str:
    return FILES[(sw.name, unit(sw.platform).candidate_kind)]


def read_qos(sw: Switch, text: str) -> SwitchQos:
    ports = [p.name for p in sw.ports]
    spec = unit(sw.platform).spec
    assert spec is not None
    if sw.platform == "eos":
        return eos.qos(text, spec.default_dscp_classes, ports)
    if sw.platform == "nxos":
        return nxos.qos(text, ports)
    tree = yaml.safe_load(text)[0]["set"]
    return cumulus.qos(tree, spec.default_dscp_classes, ports)


def healthy(sw: Switch, qos: SwitchQos) -> SwitchObservation:
    """Everything but QoS as the plan has it, so the rows judge the QoS reading alone."""
    interfaces = {p.name: Interface(p.name, True, float(p.speed_gbps), sw.mtu_bytes) for p in sw.ports}
    interfaces.update({lag.name: Interface(lag.name, True, None, sw.mtu_bytes) for lag in sw.lags})
    spec = unit(sw.platform).spec
    assert spec is not None
    interfaces.update({(n := spec.svi_format.format(vlan=s.vlan)): Interface(n, True, None, sw.mtu_bytes)
                       for s in sw.svis})
    lldp = {p.name: (Neighbor(p.peer.device, p.peer.port),) for p in sw.ports}
    return SwitchObservation(sw.name, interfaces, lldp, (), qos, None)


QOS_CHECKS = {"trust", "pfc", "pfc-watchdog", "dscp-map", "cnp-strict", "ecn"}
SWITCHES = {sw.platform: sw for sw in PLAN.switches if sw.role.value == "leaf"}


@pytest.mark.parametrize("platform", sorted(SWITCHES))
def test_the_rendered_qos_reads_back_as_planned(platform: str) -> None:
    sw = SWITCHES[platform]
    rows = [r for r in switch_rows(PLAN, sw, healthy(sw, read_qos(sw, rendered(sw)))) if r.check in QOS_CHECKS]
    assert {r.check for r in rows} == QOS_CHECKS
    assert [r for r in rows if r.verdict is not Verdict.PASS] == []


# One line taken out of the rendered config, and the check that must then fail on which port ("" = device).
REMOVALS = {
    "eos": [(r"   service-profile ROCE-LOSSLESS\n", 1, "pfc"),
            (r"      priority strict\n", 0, "cnp-strict"),
            # DSCP 24, 25, 27-31 then fall to EOS's default class 3, the no-drop one
            (r"qos map dscp 24 [^\n]*\n", 0, "dscp-map"),
            (r"      random-detect ecn [^\n]*\n", 0, "ecn")],
    "nxos": [(r"  priority-flow-control mode on\n", 1, "pfc"),
             (r"    priority level 1\n", 0, "cnp-strict"),
             (r"  match dscp 26\n", 0, "dscp-map"),
             (r"    random-detect [^\n]*ecn\n", 0, "ecn")],
    "cumulus": [(r"          trust: l3\n", 0, "trust"),
                (r"            '3': \{\}\n", 0, "pfc"),
                (r"              mode: strict\n", 0, "cnp-strict"),
                (r"              ecn: enable\n", 0, "ecn")],
}


@pytest.mark.parametrize(("platform", "pattern", "count", "check"),
                         [(p, *r) for p, rs in REMOVALS.items() for r in rs],
                         ids=[f"{p}-{r[2]}" for p, rs in REMOVALS.items() for r in rs])
def test_a_missing_line_fails_its_check(platform: str, pattern: str, count: int, check: str) -> None:
    sw = SWITCHES[platform]
    text, n = re.subn(pattern, "", rendered(sw), count=count)
    assert n, f"{pattern!r} is not in the rendered {platform} config"
    rows = switch_rows(PLAN, sw, healthy(sw, read_qos(sw, text)))
    failed = {r.check for r in rows if r.failed}
    assert check in failed, (check, failed)


def test_nxos_lists_and_ranges() -> None:
    assert nxos._numbers("24,26-28 48") == {24, 26, 27, 28, 48}


MLNX_QOS = """DCBX mode: OS controlled
Priority trust state: dscp
dscp2prio mapping:
\tprio:0 dscp:07,06,05,04,03,02,01,00,
\tprio:3 dscp:26,
\tprio:6 dscp:48,
default priority:
Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016
Cable len: 7
PFC configuration:
\tpriority    0   1   2   3   4   5   6   7
\tenabled     0   0   0   1   0   0   0   0
\tbuffer      0   0   0   1   0   0   0   0
"""


def test_host_reader_parses_mlnx_qos_and_ethtool() -> None:
    trust, pfc, dscp = host.parse_mlnx_qos(MLNX_QOS.splitlines())
    assert trust == "dscp" and pfc == (0, 0, 0, 1, 0, 0, 0, 0)
    assert dscp is not None and dscp[26] == 3 and dscp[48] == 6 and dscp[24] == 0
    assert host.parse_pause(["Pause parameters for ens1f0np0:", "Autonegotiate:\toff", "RX:\t\ton", "TX:\t\toff"]) \
        == (True, False)


def test_host_script_quotes_every_name() -> None:
    text = host.script(["bond0", "x; touch pwned"], ["mlx5_0"])
    assert "'x; touch pwned'" in text and "touch pwned\n" not in text


# -- switch routes and counters: samples written in each command's shape, the source named at each -------------
# EOS eAPI `show ip route 10.0.0.4/32`: vrfs -> default -> routes -> prefix -> vias (the keys ANTA's
# VerifyRoutingTableEntry and next-hop tests read); an unnumbered (RFC 5549) via carries the peer's link-local.
EOS_ROUTE = {"vrfs": {"default": {"routes": {"10.0.0.4/32": {
    "routeType": "eBGP", "directlyConnected": False, "preference": 200, "metric": 0,
    "vias": [{"nexthopAddr": "fe80::1c73:aa01", "interface": "Et61/1"},
             {"nexthopAddr": "fe80::1c73:aa02", "interface": "Ethernet62/1"}]}}}}}
# NX-API `show ip route 10.0.0.4/32 | json`: TABLE_vrf/TABLE_addrf/TABLE_prefix/TABLE_path; one path prints as a
# dict, more as a list; `ubest` marks the paths NX-OS forwards on.
NXOS_ROUTE = {"TABLE_vrf": {"ROW_vrf": {"vrf-name-out": "default", "TABLE_addrf": {"ROW_addrf": {
    "addrf": "ipv4", "TABLE_prefix": {"ROW_prefix": {
        "ipprefix": "10.0.0.4/32", "ucast-nhops": "3", "attached": "false", "TABLE_path": {"ROW_path": [
            {"ipnexthop": "10.0.64.0", "ifname": "Eth1/61", "ubest": "true", "pref": "20", "clientname": "bgp-65101"},
            {"ipnexthop": "10.0.64.2", "ifname": "Eth1/62", "ubest": "true", "pref": "20", "clientname": "bgp-65101"},
            {"ipnexthop": "10.255.252.1", "ifname": "Vlan3967", "ubest": "false", "pref": "20"}]}}}}}}}}
# FRR `show ip route 10.0.0.2/32 json` (vtysh): prefix -> entries, the selected one's nexthops.
FRR_ROUTE = {"10.0.0.2/32": [{"prefix": "10.0.0.2/32", "protocol": "bgp", "selected": True, "installed": True,
                              "distance": 20, "nexthops": [
                                  {"fib": True, "ip": "10.0.64.8", "afi": "ipv4", "interfaceName": "swp62s0",
                                   "active": True},
                                  {"fib": True, "ip": "10.0.64.10", "afi": "ipv4", "interfaceName": "swp62s1",
                                   "active": True},
                                  {"ip": "10.0.64.12", "afi": "ipv4", "interfaceName": "swp1", "active": False}]}]}


def test_route_readers_take_the_forwarding_next_hops() -> None:
    assert eos.route(EOS_ROUTE, "10.0.0.4/32") == (NextHop("fe80::1c73:aa01", "Ethernet61/1"),
                                                    NextHop("fe80::1c73:aa02", "Ethernet62/1"))
    assert eos.route(EOS_ROUTE, "10.0.0.9/32") == ()
    assert nxos.route(NXOS_ROUTE, "10.0.0.4/32") == (NextHop("10.0.64.0", "Ethernet1/61"),
                                                      NextHop("10.0.64.2", "Ethernet1/62"))
    assert nxos.route({"TABLE_vrf": {"ROW_vrf": {"TABLE_addrf": {"ROW_addrf": {"addrf": "ipv4"}}}}}, "x") == ()
    assert cumulus.route(FRR_ROUTE, "10.0.0.2/32") == (NextHop("10.0.64.8", "swp62s0"),
                                                        NextHop("10.0.64.10", "swp62s1"))
    assert cumulus.route({}, "10.0.0.2/32") == ()
    assert "'show ip route 10.0.0.2/32 json'" in cumulus.route_command("10.0.0.2/32")


def test_ecmp_rows_count_paths_and_name_the_missing_ports() -> None:
    sw = PLAN.switch("rack1-a")
    routes = {r.prefix: tuple(NextHop(None, port) for port, _ in r.via) for r in planned_routes(PLAN, sw)}
    assert routes and all(r.verdict is Verdict.PASS for r in ecmp_rows(PLAN, sw, routes))
    remote = next(r for r in planned_routes(PLAN, sw) if len(r.via) > 2)
    kept = remote.via[1:]
    rows = {r.port: r for r in ecmp_rows(PLAN, sw, {**routes, remote.prefix: tuple(NextHop(None, p) for p, _ in kept)})}
    failed = rows[remote.prefix]
    assert failed.failed and f"missing {remote.via[0][0]} ({remote.via[0][1]})" in failed.observed, failed
    # no route at all: every planned next hop is missing
    gone = next(r for r in ecmp_rows(PLAN, sw, {**routes, remote.prefix: ()}) if r.port == remote.prefix)
    assert gone.failed and gone.observed.startswith("0 paths") and all(p in gone.observed for p, _ in remote.via)


def test_tier_too_thin_from_an_oversubscribed_plan(tmp_path: Path) -> None:
    """The sized 128-server fabric asked for 2:1: doctor names the leaf tier from the plan alone, with its figures;
    the 1:1 plans get no such diagnosis."""
    intent = tmp_path / "tor2.yaml"
    intent.write_text((ROOT / "intents" / "tor128-3tier.yaml").read_text().replace(
        'oversubscription: "1:1"', 'oversubscription: "2:1"'))
    thin = check_file(intent, "thin").plan
    assert thin is not None
    found = {d.title.split()[0]: d for d in tier_too_thin(thin, [])}
    assert "leaf" in found and "2:1" in found["leaf"].title and "uplinks into" in found["leaf"].evidence[0]
    assert tier_too_thin(PLAN, []) == []


def test_cumulus_reads_the_5_15_rename_of_enable_on_as_state_enabled() -> None:
    """A switch on 5.15 or later words `qos roce enable on` and `mlag enable on` as `state enabled`."""
    ports = ["swp1"]
    old = cumulus.qos({"qos": {"roce": {"enable": "on", "mode": "lossless"}}}, list(range(8)), ports)
    new = cumulus.qos({"qos": {"roce": {"state": "enabled", "mode": "lossless"}}}, list(range(8)), ports)
    off = cumulus.qos({"qos": {"roce": {"state": "disabled", "mode": "lossless"}}}, list(range(8)), ports)
    assert old.ports["swp1"].pfc_priorities == new.ports["swp1"].pfc_priorities == frozenset({3})
    assert off.ports["swp1"].pfc_priorities == frozenset()
    seen = cumulus.mlag({"state": "enabled", "peer-alive": "True", "local-role": "primary"})
    assert seen is not None and seen.healthy and cumulus.mlag({"state": "disabled"}) is None
