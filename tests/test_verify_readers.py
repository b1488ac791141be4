"""verify's readers on text, without a lab: each platform's QoS reading of the configuration rocefab renders for
it agrees with the plan on every port, and a line taken away is seen as missing; the host reader parses the
tools' real output formats."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rocefab.deploy.verify.checks import Verdict, switch_rows
from rocefab.deploy.verify.observation import Interface, Neighbor, SwitchObservation, SwitchQos
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
