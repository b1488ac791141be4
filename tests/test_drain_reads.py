"""What `rocefab drain` expects of the neighbours' routes (deploy/drain.py), on pod32's plan: a drained switch's
next hops leave the routes it was planned on, the others stay, and undraining asks for the plan again."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import example_plan

from rocefab.deploy.drain import cannot_drain, moved_rows, neighbours
from rocefab.deploy.inventory import Access, Secret, Transport
from rocefab.deploy.verify.ecmp import planned_routes
from rocefab.deploy.verify.observation import NextHop
from rocefab.platforms.nxos.maintenance import in_maintenance


def _routes(switch: str, without: set[str]) -> dict[str, tuple[NextHop, ...]]:
    """The planned routes of `switch` as a device would show them, minus the next hops via `without`."""
    plan = example_plan("pod32")
    return {r.prefix: tuple(NextHop(None, port) for port, peer in r.via if peer not in without)
            for r in planned_routes(plan, plan.switch(switch))}


def test_the_neighbours_of_a_leaf_are_its_spines_and_its_peer() -> None:
    assert neighbours(example_plan("pod32"), {"rack1-a"}) == ["spine1", "spine2", "rack1-b"]


def test_a_drained_leaf_leaves_the_spines_routes_and_only_those() -> None:
    plan = example_plan("pod32")
    rows = moved_rows(plan, "spine1", _routes("spine1", {"rack1-a"}), {"rack1-a"}, {"rack1-a"})
    assert rows and all(r.verdict.value == "pass" and r.check == "drained" for r in rows), rows
    # the pair's subnet was planned over both leaves' 8 links each: 8 are left
    subnet = next(r for r in rows if "rack1 pair subnet" in r.expected)
    assert subnet.expected.startswith("8 paths") and subnet.observed == "8 paths"
    # the device still routes over the drained leaf: the check fails and names the ports
    still = moved_rows(plan, "spine1", _routes("spine1", set()), {"rack1-a"}, {"rack1-a"})
    failing = [r for r in still if r.failed]
    assert failing and all("still by" in r.observed for r in failing)


def test_undraining_asks_for_the_plan_again_but_not_of_a_switch_still_drained() -> None:
    plan = example_plan("pod32")
    back = moved_rows(plan, "spine1", _routes("spine1", set()), {"rack1-a"}, set())
    assert back and all(r.verdict.value == "pass" and r.check == "undrained" for r in back)
    early = moved_rows(plan, "spine1", _routes("spine1", {"rack1-a"}), {"rack1-a"}, set())
    assert any(r.failed for r in early), "four paths missing: not undrained yet"
    # rack2-a is still drained: routes through it are not asked back
    other = moved_rows(plan, "spine1", _routes("spine1", {"rack2-a"}), {"rack1-a"}, {"rack2-a"})
    assert all(r.verdict.value == "pass" for r in other), other


def test_the_routes_a_drain_moves_are_found_past_verifys_cap() -> None:
    """cluster1024-rail: verify checks 24 of a spine's prefixes, which need not include leaf128's; the drain of
    leaf128 still finds every route of the spine's it is a next hop of."""
    from rocefab.deploy.verify.ecmp import routes_through

    plan = example_plan("cluster1024-rail")
    spine = plan.switch("spine001")
    found = routes_through(plan, spine, {"leaf128"})
    assert found and all(any(peer == "leaf128" for _, peer in r.via) for r in found)


def _access(name: str, kind: str, transport: Transport) -> Access:
    return Access(name=name, kind=kind, host="127.0.0.1", transport=transport, port=443, ssh_port=22,
                  username="admin", password=Secret("x"), scheme="https", verify_tls=True, ca_file=None,
                  verify_host_key=False, known_hosts=Path("/nonexistent"), timeout_s=5, sudo=False)


def test_what_each_platforms_maintenance_mode_can_drain() -> None:
    """GIR keeps what a switch originates advertised: an NX-OS spine (its loopback only) drains, an NX-OS leaf (its
    pair's host subnet) does not, and neither over SSH; EOS and Cumulus leaves drain (graceful shutdown de-prefers
    their own routes too)."""
    plan = example_plan("pod32")
    assert cannot_drain(plan, _access("spine1", "nxos", Transport.NXAPI)) is None
    leaf = cannot_drain(plan, _access("rack4-a", "nxos", Transport.NXAPI))
    assert leaf is not None and "keeps what the switch originates advertised" in leaf
    assert plan.switch("rack4-a").bgp.advertised[1] in leaf, "the prefix that would still draw traffic is named"
    ssh = cannot_drain(plan, _access("spine1", "nxos", Transport.NXOS_SSH))
    assert ssh is not None and "transport: nxapi" in ssh
    assert cannot_drain(plan, _access("rack1-a", "eos", Transport.EAPI)) is None
    assert cannot_drain(plan, _access("rack3-a", "cumulus", Transport.NVUE_SSH)) is None


@pytest.mark.parametrize(("text", "mode"), [
    # the form rocefab expects (no verbatim capture found: see rocefab/platforms/nxos/maintenance.py)
    ("System Mode: Normal\n", False),
    ("System Mode: Maintenance\n", True),
    ("\nSystem Mode: Maintenance\nMaintenance Mode Timer: 24 minutes 55 seconds remaining\n", True),
    # anything else is not understood, never normal
    ("", None),
    ("% Invalid command at '^' marker.\n", None),
    ("System Mode: Transition\n", None),
])
def test_show_system_mode_is_read_strictly(text: str, mode: bool | None) -> None:
    assert in_maintenance(text) is mode
