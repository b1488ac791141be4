"""Rail-optimized hosts: the rendered script of a server with single-port NICs (one /31 per NIC to its rail leaf, a
main-table route for its rail, per-NIC policy routing) run for real against the fake Linux host of
lab/host/fakehost.py with plain per-port RDMA devices; plus the `ip` stub's policy routing (rules, numbered tables),
which those scripts rely on."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from fakehost import (
    BLOCK_BEGIN,
    BLOCK_END,
    STUBS,
    SYSTEM_PATH,
    Applied,
    apply_once,
    assert_drifts,
    copy_applied,
    diff,
    drifts,
    host_env,
    make_host,
    run_script,
    snapshot,
    stub,
)
from hostlib import place_script

from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import Host, HostNic
from rocefab.renderers.render import render_fabric

# A small rail-optimized fabric: 4 servers x 2 single-port NICs, NIC i of every server on the leaf of rail i. The
# RDMA device names are not positional (mlx5_3 for the second NIC, as on a DGX), so the fake host must take them
# from the plan.
RAIL_INTENT = {
    "fabric": {"name": "rail4", "description": "4 servers x 2 NICs, rail-optimized"},
    "underlay": {
        "asn": {"spine": 64600, "leaf_first": 64700, "superspine": 64500},
        "ecmp_max_paths": 64,
        "loopback_subnet": "10.0.0.0/22",
        "p2p_subnet": "10.1.0.0/16",
        "host_subnet": "10.128.0.0/12",
    },
    "management": {"subnet": "192.168.0.0/22", "gateway": "192.168.0.1"},
    "topology": {
        "design": "rail-optimized",
        "nodes": 4,
        "nics_per_node": 2,
        "nic_speed_gbps": 400,
        "models": {"leaf": "SN5600", "spine": "SN5600"},
        "oversubscription": "1:1",
    },
    "hosts": {
        "nics": [{"netdev": "enp24s0np0", "rdma_device": "mlx5_0"}, {"netdev": "enp64s0np0", "rdma_device": "mlx5_3"}],
        "nccl": {"socket_ifname": "eno3"},
    },
}
DEFAULT_RULES = ["0:\tfrom all lookup local", "32766:\tfrom all lookup main", "32767:\tfrom all lookup default"]


@dataclass(frozen=True)
class Rail:
    script: Path
    host: Host
    nccl_conf: str  # what the script writes to etc/nccl.conf
    lossless: tuple[int, ...]

    @property
    def nics(self) -> tuple[HostNic, ...]:
        return self.host.nics

    @property
    def rdma(self) -> dict[str, str]:
        return {nic.netdev: nic.rdma_device for nic in self.nics}

    def fresh_host(self, folder: Path) -> Path:
        return make_host(folder, [nic.netdev for nic in self.nics], rdma=self.rdma)


@pytest.fixture(scope="module")
def rail(tmp_path_factory: pytest.TempPathFactory) -> Rail:
    folder = tmp_path_factory.mktemp("rail")
    intent = folder / "rail4.yaml"
    intent.write_text(yaml.safe_dump(RAIL_INTENT, sort_keys=False), encoding="utf-8")
    checked = check_file(intent, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    files = {f.path: f.content for f in render_fabric(checked.plan)}
    script = place_script(folder / "gpu001.roce.sh", files["hosts/gpu001.roce.sh"])
    env = files["hosts/gpu001.nccl.env"]
    host = next(h for h in checked.plan.hosts if h.name == "gpu001")
    assert host.bonds == () and len(host.nics) == 2
    assert [nic.rdma_device for nic in host.nics] == ["mlx5_0", "mlx5_3"]
    assert len({nic.table for nic in host.nics}) == 2  # a table of its own per NIC
    conf = "".join(line.removeprefix("export ") + "\n" for line in env.splitlines() if line.startswith("export "))
    return Rail(script, host, conf, checked.plan.qos.lossless_priorities)


def source(nic: HostNic) -> str:
    return nic.ipv4.split("/")[0]


def rules(root: Path) -> list[str]:
    return stub(root, "ip", "-4", "rule", "show").stdout.splitlines()


def rules_from(root: Path, src: str) -> list[str]:
    return [line for line in rules(root) if line.split("\t")[1].startswith(f"from {src} ")]


def assert_one_rule_per_nic(root: Path, rail: Rail) -> None:
    for nic in rail.nics:
        assert [line.split("\t")[1] for line in rules_from(root, source(nic))] == [
            f"from {source(nic)} lookup {nic.table}"]


# --- the fake host's per-port RDMA devices ------------------------------------------------------------------------


def test_per_port_rdma_devices_exist_from_boot(tmp_path: Path, rail: Rail) -> None:
    root = rail.fresh_host(tmp_path / "host")
    ib = root / "sys/class/infiniband"
    assert sorted(p.name for p in ib.iterdir()) == ["mlx5_0", "mlx5_3"]
    nic = rail.nics[1]
    assert [p.name for p in (root / "sys/class/net" / nic.netdev / "device/infiniband").iterdir()] == ["mlx5_3"]
    assert stub(root, "cma_roce_tos", "-d", "mlx5_3", "-p", "1").stdout == "0\n"
    assert stub(root, "cma_roce_mode", "-d", "mlx5_3", "-p", "1").stdout == "RoCE v2\n"
    port = ib / "mlx5_3/ports/1"
    assert (port / "gid_attrs/types/1").read_text() == "RoCE v2\n"  # the link-local one
    assert (port / "gid_attrs/types/3").is_dir()  # an empty entry: reading it fails
    stub(root, "ip", "addr", "add", "10.136.0.1/31", "dev", nic.netdev)
    assert (port / "gid_attrs/types/3").read_text() == "RoCE v2\n"
    assert (port / "gid_attrs/ndevs/3").read_text() == f"{nic.netdev}\n"
    assert (port / "gids/3").read_text() == "0000:0000:0000:0000:0000:ffff:0a88:0001\n"  # 10.136.0.1
    stub(root, "ip", "addr", "flush", "dev", nic.netdev)
    assert (port / "gid_attrs/types/3").is_dir()
    assert (ib / "mlx5_0/ports/1/gid_attrs/types/3").is_dir()  # the other NIC never had an address


def test_make_host_checks_the_rdma_mapping(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not netdevs of the host"):
        make_host(tmp_path / "a", ["eth0"], rdma={"eth1": "mlx5_1"})
    with pytest.raises(ValueError, match="more than once"):
        make_host(tmp_path / "b", ["eth0", "eth1"], rdma={"eth1": "mlx5_0"})  # eth0 is mlx5_0 by position
    root = make_host(tmp_path / "c", ["eth0", "eth1"], rdma={"eth1": "mlx5_7"})
    assert sorted(p.name for p in (root / "sys/class/infiniband").iterdir()) == ["mlx5_0", "mlx5_7"]


# --- the rail script ------------------------------------------------------------------------------------------------


def nic_drifts(rail: Rail, nic: HostNic) -> list[str]:
    n, gw = nic.netdev, nic.gateway
    ecn = [f"{n} DCQCN {point} point, priority {p}: is '0', want '1'"
           for p in rail.lossless for point in ("notification", "reaction")]
    return [f"{n} global pause: is 'off/on/on'", f"{n} rings: is '1024/1024'", f"{n} qos trust: is 'pcp'",
            f"{n} dscp map: is ''", f"{n} pfc priorities: is '0,0,0,0,0,0,0,0'",
            f"{n} cable length: is '7', want '{nic.nic_cable_len}'", *ecn, f"{n} mtu: is '1500'",
            f"{n} ipv4 address: is '', want '{nic.ipv4}'",
            *(f"route {r}: is ' ', want '{gw} {n}'" for r in nic.routes),
            f"rule from {source(nic)}: is '', want '{nic.table}'",
            f"route {nic.connected} table {nic.table}: is ' ', want '{n} {source(nic)}'",
            *(f"route {r} table {nic.table}: is ' ', want '{gw} {n}'" for r in nic.table_routes),
            f"{nic.rdma_device} default traffic class: is '<unset>', want '106'",
            f"{nic.rdma_device} rdma_cm default ToS: is '0', want '106'",
            f"{nic.rdma_device} has no RoCE v2 GID for {source(nic)} on {nic.netdev}"]


def test_check_on_a_fresh_host_reports_every_setting_and_changes_nothing(tmp_path: Path, rail: Rail) -> None:
    root = rail.fresh_host(tmp_path / "host")
    before = snapshot(root)
    result = run_script(rail.script, root, "--check")
    assert result.returncode == 1, result.stdout + result.stderr
    expected = [d for nic in rail.nics for d in nic_drifts(rail, nic)] + [
        f"{root}/etc/nccl.conf rocefab block: is '<missing>'", f"{root}/usr/local/sbin/rocefab-roce.sh: is '<missing>'",
        f"{root}/etc/systemd/system/rocefab-roce.service: is '<missing>'"]
    assert_drifts(result.stdout, expected)
    assert result.stdout.rstrip().endswith(f"{len(expected)} setting(s) drifted")
    for nic in rail.nics:  # a booted NIC is up, and its RDMA device is there in RoCE v2 mode
        assert f"ok      {nic.netdev} admin state = up" in result.stdout
        assert f"ok      {nic.rdma_device} RDMA device = present" in result.stdout
        assert f"ok      {nic.rdma_device} rdma_cm RoCE mode = RoCE v2" in result.stdout
    assert "changed" not in result.stdout and result.stderr == ""
    assert diff(before, snapshot(root)) == []


@pytest.fixture(scope="module")
def applied_once(tmp_path_factory: pytest.TempPathFactory, rail: Rail) -> Applied:
    """gpu001's script applied once to a fresh host (shared: copy it with `applied` before changing it)."""
    return apply_once(rail.script, rail.fresh_host(tmp_path_factory.mktemp("rail-applied") / "host"))


@pytest.fixture
def applied(tmp_path: Path, applied_once: Applied) -> Path:
    return copy_applied(applied_once, tmp_path)


def test_apply_configures_a_fresh_host(applied_once: Applied, rail: Rail) -> None:
    root, result = applied_once.root, applied_once.result
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAILED" not in result.stdout and "DRIFT" not in result.stdout
    # every drift of a fresh host but the GID checks (which the address fixes, they are no setting of their own),
    # then nccl.conf, the installed script and its unit
    assert result.stdout.rstrip().endswith(f"{(len(nic_drifts(rail, rail.nics[0])) - 1) * 2 + 3} setting(s) changed")
    for nic in rail.nics:
        n, gw, rdma = nic.netdev, nic.gateway, nic.rdma_device
        assert (root / "sys/class/net" / n / "mtu").read_text() == "9000\n"
        assert [line.split()[3] for line in stub(root, "ip", "-4", "-o", "addr", "show", "dev", n).stdout.splitlines()
                ] == [nic.ipv4]
        for prefix in nic.routes:
            assert stub(root, "ip", "-4", "route", "show", prefix).stdout == f"{prefix} via {gw} dev {n} \n"
        # the NIC's table holds exactly its routes, and only there: the main table does not show them
        # (and the /31 with its leaf on-link, from the NIC's own address)
        shown = stub(root, "ip", "-4", "route", "show", "table", str(nic.table)).stdout.splitlines()
        assert sorted(shown) == sorted([f"{nic.connected} dev {n} scope link src {source(nic)} ",
                                        *(f"{prefix} via {gw} dev {n} " for prefix in nic.table_routes)]), shown
        assert stub(root, "cma_roce_tos", "-d", rdma, "-p", "1").stdout == "106\n"
        assert stub(root, "cma_roce_mode", "-d", rdma, "-p", "1").stdout == "RoCE v2\n"
        assert (root / "sys/class/infiniband" / rdma / "ports/1/gid_attrs/types/3").read_text() == "RoCE v2\n"
        assert f"ok      {rdma} RoCE v2 GID of {source(nic)} on {n} at index 3 (NCCL selects it)" in result.stdout
        assert (root / "sys/class/infiniband" / rdma / "tc/1/traffic_class").read_text() == "Global tclass=106\n"
    assert_one_rule_per_nic(root, rail)
    # the kernel's default preferences, one below the previous rule, in the order the script added them
    first, second = rail.nics
    assert rules(root) == [DEFAULT_RULES[0], f"32764:\tfrom {source(second)} lookup {second.table}",
                           f"32765:\tfrom {source(first)} lookup {first.table}", *DEFAULT_RULES[1:]]
    main = stub(root, "ip", "-4", "route", "show").stdout
    assert all(f"{prefix} via" not in main for nic in rail.nics for prefix in nic.table_routes)
    assert sorted(p.name for p in (root / "sys/class/infiniband").iterdir()) == sorted(rail.rdma.values())
    assert (root / "etc/nccl.conf").read_text() == BLOCK_BEGIN + rail.nccl_conf + BLOCK_END
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_3:1\n" in rail.nccl_conf


def test_after_apply_check_is_in_sync_and_apply_changes_nothing(applied: Path, rail: Rail) -> None:
    before = snapshot(applied)
    check = run_script(rail.script, applied, "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert drifts(check.stdout) == [] and check.stdout.rstrip().endswith("in sync")
    again = run_script(rail.script, applied)
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.rstrip().endswith("0 setting(s) changed")
    assert "changed " not in again.stdout.replace("setting(s) changed", "") and again.stderr == ""
    assert diff(before, snapshot(applied)) == []


# --- drift behind the script's back ---------------------------------------------------------------------------------
# NIC 0 of gpu001 (see the `rail` fixture: the plan's values, checked here so a planner change shows up plainly)
NIC0, SRC0, TABLE0, GW0, RAIL0, ALL_RAILS = "enp24s0np0", "10.128.0.1", "100", "10.128.0.0", "10.128.0.0/13", \
    "10.128.0.0/12"
NIC1, SRC1, TABLE1, GW1, RAIL1 = "enp64s0np0", "10.136.0.1", "101", "10.136.0.0", "10.136.0.0/13"


def test_the_drift_cases_know_the_plan(rail: Rail) -> None:
    first, second = rail.nics
    assert (first.netdev, source(first), str(first.table), first.gateway, first.routes, first.table_routes) == (
        NIC0, SRC0, TABLE0, GW0, (RAIL0,), (ALL_RAILS,))
    assert (second.netdev, source(second), str(second.table), second.gateway, second.routes,
            second.table_routes) == (NIC1, SRC1, TABLE1, GW1, (RAIL1,), (ALL_RAILS,))


def ip(*args: str) -> Callable[[Path], object]:
    return lambda root: stub(root, "ip", *args)


def steps(*changes: Callable[[Path], object]) -> Callable[[Path], object]:
    return lambda root: [change(root) for change in changes]


DRIFT_CASES = {
    "rule-deleted": (ip("-4", "rule", "del", "from", SRC0), [f"rule from {SRC0}: is '', want '{TABLE0}'"]),
    "rule-other-table": (steps(ip("-4", "rule", "del", "from", SRC1), ip("-4", "rule", "add", "from", SRC1,
                                                                          "lookup", "200")),
                         [f"rule from {SRC1}: is '200', want '{TABLE1}'"]),
    # a leftover behind the right rule: lib.sh shows '200' today (the last rule listed); '100,200' would do too
    "stale-rule-behind": (ip("-4", "rule", "add", "from", SRC0, "lookup", "200", "pref", "40000"),
                          [f"rule from {SRC0}: is '"]),
    "table-route-deleted": (ip("route", "del", ALL_RAILS, "table", TABLE0),
                            [f"route {ALL_RAILS} table {TABLE0}: is ' ', want '{GW0} {NIC0}'"]),
    "table-route-other-rail": (ip("route", "replace", ALL_RAILS, "via", GW1, "dev", NIC1, "table", TABLE0),
                               [f"route {ALL_RAILS} table {TABLE0}: is '{GW1} {NIC1}', want '{GW0} {NIC0}'"]),
    # the kernel flushes every route through a device that goes down or loses its address, in every table
    "nic-down": (ip("link", "set", "dev", NIC0, "down"),
                 [f"{NIC0} admin state: is 'down'", f"route {RAIL0}: is ' '",
                  f"route {GW0}/31 table {TABLE0}: is ' '", f"route {ALL_RAILS} table {TABLE0}: is ' '"]),
    "address-gone": (ip("addr", "flush", "dev", NIC1),
                     [f"{NIC1} ipv4 address: is ''", f"route {RAIL1}: is ' '",
                      f"route {GW1}/31 table {TABLE1}: is ' '", f"route {ALL_RAILS} table {TABLE1}: is ' '",
                      f"mlx5_3 has no RoCE v2 GID for {SRC1} on {NIC1}"]),
    "tos": (lambda root: stub(root, "cma_roce_tos", "-d", "mlx5_3", "-t", "0"),
            ["mlx5_3 rdma_cm default ToS: is '0'"]),
}
# Policy-rule drift hidden behind a correct-looking rule: a stray rule added without a preference lands in front
# of ours (the kernel's default preference is one below the rules there) and wins every lookup, and a duplicate
# of ours is harmless but untidy. `rule_table` lists every matching rule's table, so both show.
RULE_IN_FRONT_DRIFT = {
    "wrong-rule-in-front": (ip("-4", "rule", "add", "from", SRC0, "lookup", "200"),
                            [f"rule from {SRC0}: is '200,{TABLE0}', want '{TABLE0}'"]),
    "duplicate-rule": (ip("-4", "rule", "add", "from", SRC1, "lookup", TABLE1),
                       [f"rule from {SRC1}: is '{TABLE1},{TABLE1}', want '{TABLE1}'"]),
}
RAIL_DRIFT = [*DRIFT_CASES, *RULE_IN_FRONT_DRIFT]


@pytest.mark.parametrize("case", RAIL_DRIFT)
def test_drift_is_reported_exactly_and_apply_repairs_it(case: str, applied: Path, rail: Rail,
                                                        applied_once: Applied) -> None:
    tamper, expected = {**DRIFT_CASES, **RULE_IN_FRONT_DRIFT}[case]
    tamper(applied)
    before = snapshot(applied)
    check = run_script(rail.script, applied, "--check")
    assert check.returncode == 1, check.stdout + check.stderr
    assert_drifts(check.stdout, expected)
    assert check.stdout.rstrip().endswith(f"{len(expected)} setting(s) drifted")
    assert diff(before, snapshot(applied)) == []
    fix = run_script(rail.script, applied)
    assert fix.returncode == 0 and "FAILED" not in fix.stdout, fix.stdout + fix.stderr
    recheck = run_script(rail.script, applied, "--check")
    assert recheck.returncode == 0 and drifts(recheck.stdout) == [], recheck.stdout
    assert_one_rule_per_nic(applied, rail)
    assert len(rules(applied)) == len(DEFAULT_RULES) + len(rail.nics)
    if case == "tos":  # nothing moved in the kernel's lists: the host is exactly what the first apply made
        assert diff(applied_once.snapshot, snapshot(applied)) == []


# --- the ip stub's policy routing -----------------------------------------------------------------------------------


@pytest.fixture
def host(tmp_path: Path) -> Path:
    return make_host(tmp_path / "host", [NIC0, NIC1], rdma={NIC0: "mlx5_0", NIC1: "mlx5_3"})


def run(root: Path, *args: str) -> tuple[int, str, str]:
    r = stub(root, "ip", *args, check=False)
    return r.returncode, r.stdout, r.stderr


def test_rules_at_boot_in_every_spelling(host: Path) -> None:
    listing = "".join(f"{line}\n" for line in DEFAULT_RULES)
    for args in (("-4", "rule", "show"), ("rule", "show"), ("rule",), ("-4", "rule", "list"), ("ru", "s")):
        assert run(host, *args) == (0, listing, ""), args


def test_rule_preferences_follow_the_kernel(host: Path) -> None:
    assert run(host, "-4", "rule", "add", "from", SRC0, "lookup", "100") == (0, "", "")
    assert run(host, "-4", "rule", "add", "from", SRC1, "table", "101") == (0, "", "")
    assert run(host, "rule", "add", "from", "10.0.0.0/8", "lookup", "main", "pref", "100")[0] == 0
    assert run(host, "rule", "add", "from", "10.1.0.0/16", "lookup", "1000", "priority", "100")[0] == 0  # after
    assert run(host, "rule", "add", "from", "all", "lookup", "default", "pref", "32766")[0] == 0  # after main
    assert rules(host) == [
        "0:\tfrom all lookup local", "100:\tfrom 10.0.0.0/8 lookup main", "100:\tfrom 10.1.0.0/16 lookup 1000",
        f"32764:\tfrom {SRC1} lookup 101", f"32765:\tfrom {SRC0} lookup 100", "32766:\tfrom all lookup main",
        "32766:\tfrom all lookup default", "32767:\tfrom all lookup default"]
    # the default preference is one below the second rule's, whatever that is now
    assert run(host, "-4", "rule", "add", "from", "10.2.0.1", "lookup", "7")[0] == 0
    assert "99:\tfrom 10.2.0.1 lookup 7" in rules(host)
    assert run(host, "-4", "rule", "show", "from", SRC0) == (0, f"32765:\tfrom {SRC0} lookup 100\n", "")
    assert run(host, "-4", "rule", "show", "table", "101") == (0, f"32764:\tfrom {SRC1} lookup 101\n", "")


def test_adding_a_rule_twice_makes_two_and_delete_takes_one_at_a_time(host: Path) -> None:
    for _ in range(2):
        assert run(host, "-4", "rule", "add", "from", SRC0, "lookup", "100") == (0, "", "")
    assert rules_from(host, SRC0) == [f"32764:\tfrom {SRC0} lookup 100", f"32765:\tfrom {SRC0} lookup 100"]
    # with the same preference the kernel refuses an identical rule (NLM_F_EXCL)
    assert run(host, "-4", "rule", "add", "from", SRC0, "lookup", "100", "pref", "32765") == (
        2, "", "RTNETLINK answers: File exists\n")
    assert run(host, "-4", "rule", "add", "from", SRC0, "lookup", "200") == (0, "", "")
    # a delete names what to match: the first such rule in the kernel's order goes
    assert run(host, "-4", "rule", "del", "from", SRC0, "lookup", "100") == (0, "", "")
    assert rules_from(host, SRC0) == [f"32763:\tfrom {SRC0} lookup 200", f"32765:\tfrom {SRC0} lookup 100"]
    assert run(host, "-4", "rule", "del", "from", SRC0, "lookup", "300") == (
        2, "", "RTNETLINK answers: No such file or directory\n")
    assert run(host, "-4", "rule", "del", "from", SRC0) == (0, "", "")  # any table: the 200 one, first
    assert rules_from(host, SRC0) == [f"32765:\tfrom {SRC0} lookup 100"]
    assert run(host, "-4", "rule", "del", "from", SRC0) == (0, "", "")
    assert run(host, "-4", "rule", "del", "from", SRC0) == (2, "", "RTNETLINK answers: No such file or directory\n")
    assert rules(host) == DEFAULT_RULES
    assert run(host, "-4", "rule", "add", "from", SRC0, "lookup", "100")[0] == 0  # back to the first default
    assert rules_from(host, SRC0) == [f"32765:\tfrom {SRC0} lookup 100"]


def test_table_routes(host: Path) -> None:
    replace = ("route", "replace", ALL_RAILS, "via", GW0, "dev", NIC0, "table", TABLE0)
    assert run(host, *replace) == (2, "", "Error: Nexthop has invalid gateway.\n")  # no address yet
    stub(host, "ip", "addr", "add", f"{SRC0}/31", "dev", NIC0)
    stub(host, "ip", "addr", "add", f"{SRC1}/31", "dev", NIC1)
    # the gateway must be on a connected subnet of that device, in a table as in main
    assert run(host, "route", "replace", ALL_RAILS, "via", GW1, "dev", NIC0, "table", TABLE0) == (
        2, "", "Error: Nexthop has invalid gateway.\n")
    assert run(host, *replace) == (0, "", "")
    assert run(host, *replace) == (0, "", "")  # replace: still one route
    assert run(host, "route", "add", ALL_RAILS, "via", GW1, "dev", NIC1, "table", TABLE1) == (0, "", "")
    assert run(host, "route", "add", ALL_RAILS, "via", GW1, "dev", NIC1, "table", TABLE1) == (
        2, "", "RTNETLINK answers: File exists\n")
    assert run(host, "route", "replace", RAIL0, "via", GW0, "dev", NIC0) == (0, "", "")  # main
    table0 = f"{ALL_RAILS} via {GW0} dev {NIC0} \n"
    assert run(host, "-4", "route", "show", "table", TABLE0) == (0, table0, "")
    assert run(host, "-4", "route", "show", "table", TABLE0, ALL_RAILS) == (0, table0, "")
    assert run(host, "-4", "route", "show", "table", TABLE0, RAIL0) == (0, "", "")
    assert run(host, "-4", "route", "show", "table", "102") == (0, "", "")  # an empty table lists nothing
    main = run(host, "-4", "route", "show")
    assert main == run(host, "-4", "route", "show", "table", "main")
    assert main[1] == (f"10.128.0.0/31 dev {NIC0} proto kernel scope link src {SRC0} \n"
                       f"{RAIL0} via {GW0} dev {NIC0} \n"
                       f"10.136.0.0/31 dev {NIC1} proto kernel scope link src {SRC1} \n")
    assert run(host, "-4", "route", "show", ALL_RAILS) == (0, "", "")  # not in main
    assert run(host, "route", "del", ALL_RAILS) == (2, "", "RTNETLINK answers: No such process\n")
    assert run(host, "route", "del", RAIL0, "table", TABLE0) == (2, "", "RTNETLINK answers: No such process\n")
    # rules stay; a device that goes down, or loses its address, takes its routes with it, in every table
    stub(host, "ip", "-4", "rule", "add", "from", SRC0, "lookup", TABLE0)
    stub(host, "ip", "link", "set", "dev", NIC0, "down")
    assert run(host, "-4", "route", "show", "table", TABLE0) == (0, "", "")
    assert run(host, "-4", "route", "show", RAIL0) == (0, "", "")
    stub(host, "ip", "addr", "flush", "dev", NIC1)
    assert run(host, "-4", "route", "show", "table", TABLE1) == (0, "", "")
    assert rules_from(host, SRC0) == [f"32765:\tfrom {SRC0} lookup {TABLE0}"]
    assert run(host, "route", "del", ALL_RAILS, "table", TABLE1) == (2, "", "RTNETLINK answers: No such process\n")


def test_what_is_not_modelled_says_so(host: Path) -> None:
    for args in (("rule", "flush"), ("-4", "rule", "add", "from", SRC0, "iif", "lo", "lookup", "100"),
                 ("-4", "route", "show", "table", "local"), ("-4", "route", "show", "table", "all")):
        code, out, err = run(host, *args)
        assert (code, out) == (255, "") and err.startswith("stub ip: not modelled"), args
    assert run(host, "rule", "add") == (255, "", '"ip rule add" requires arguments.\n')


def test_listing_rules_stays_cheap(host: Path) -> None:
    """The scripts list rules once per NIC and run: that path imports nothing that `ip link show` does without
    (no ipaddress, json, re, ...: each costs every stub call start-up time)."""
    python = shutil.which("python3", path=SYSTEM_PATH)  # what the stubs' `#!/usr/bin/env python3` finds
    assert python is not None

    def imports(*args: str) -> set[str]:
        traced = subprocess.run([python, "-X", "importtime", str(STUBS / "ip"), *args], env=host_env(host),
                                capture_output=True, text=True, check=False)
        assert traced.returncode == 0, traced.stderr
        return {line.split("|")[-1].strip() for line in traced.stderr.splitlines() if line.startswith("import time:")}

    baseline = imports("-o", "link", "show")
    assert imports("-4", "rule", "show") - baseline == set()
    assert "ipaddress" in imports("-4", "route", "show", "table", "100") - baseline  # the check can tell
