"""The host script's side of a shared machine and of a reboot, run for real against the fake host: the site's own
/etc/nccl.conf lines kept around rocefab's block, the exact NCCL_SOCKET_IFNAME, a pinned GID index checked against
the interface's address, one routing table per bond when a host has two, and the boot unit it installs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakehost import BLOCK_BEGIN, BLOCK_END, Applied, apply_once, assert_drifts, copy_applied, run_script, stub
from fakehost import make_host as fresh_host
from hostlib import place_script, staged

from rocefab.platforms.host import config
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.planner import exact_ifname
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent
LAB_PORTS = ("ens1f0np0", "ens1f1np1")
LAB_LAG = {"mlx5_bond_0": LAB_PORTS}
POD_PORTS = ("enp24s0f0np0", "enp24s0f1np1", "enp154s0f0np0", "enp154s0f1np1")
POD_LAG = {"mlx5_bond_0": POD_PORTS[:2], "mlx5_bond_1": POD_PORTS[2:]}


def render_host(folder: Path, intent: dict[str, Any], host: str = "gpu001") -> dict[str, str]:
    path = folder / "intent.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    files = {f.path.removeprefix(f"hosts/{host}"): f.content for f in render_fabric(checked.plan)
             if f.path.startswith(f"hosts/{host}.")}
    place_script(folder / f"{host}.roce.sh", files[".roce.sh"])
    return files


def example(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "intents" / f"{name}.yaml").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("lab")
    render_host(folder, example("lab"))
    return folder / "gpu001.roce.sh"


@pytest.fixture(scope="module")
def lab_applied(tmp_path_factory: pytest.TempPathFactory, lab: Path) -> Applied:
    return apply_once(lab, fresh_host(tmp_path_factory.mktemp("applied") / "host", LAB_PORTS, LAB_LAG))


def conf(root: Path) -> Path:
    return root / "etc" / "nccl.conf"


# --- /etc/nccl.conf: one marked block, the site's lines kept -------------------------------------------------------


def test_the_sites_nccl_settings_are_kept_below_rocefabs_block(tmp_path: Path, lab: Path) -> None:
    root = fresh_host(tmp_path / "host", LAB_PORTS, LAB_LAG)
    site = "# site settings\nNCCL_DEBUG=WARN\nNCCL_IB_TC=104\n"
    conf(root).write_text(site, encoding="utf-8")
    check = run_script(lab, root, "--check")
    assert f"DRIFT   {conf(root)} rocefab block: is '<absent>'" in check.stdout
    result = run_script(lab, root)
    assert result.returncode == 0, result.stdout + result.stderr
    text = conf(root).read_text()
    assert text.startswith(BLOCK_BEGIN) and text.endswith(BLOCK_END + site)  # the block first: NCCL's first value wins
    # the site's own NCCL_IB_TC is never read by NCCL now, and the run says so
    assert f"note    {conf(root)} line 11 (NCCL_IB_TC=104) is ignored by NCCL: the block above sets NCCL_IB_TC" in (
        result.stdout)
    assert run_script(lab, root, "--check").returncode == 0


def test_a_block_below_the_sites_lines_is_moved_to_the_top(tmp_path: Path, lab: Path, lab_applied: Applied) -> None:
    root = copy_applied(lab_applied, tmp_path)
    block = conf(root).read_text()
    conf(root).write_text("NCCL_IB_TC=104\n" + block, encoding="utf-8")  # would win over rocefab's value
    check = run_script(lab, root, "--check")
    assert_drifts(check.stdout, [f"{conf(root)} rocefab block: is '<not at the top>'"])
    assert run_script(lab, root).returncode == 0
    assert conf(root).read_text() == block + "NCCL_IB_TC=104\n"


def test_drift_inside_the_block_is_named_per_setting(tmp_path: Path, lab: Path, lab_applied: Applied) -> None:
    root = copy_applied(lab_applied, tmp_path)
    text = conf(root).read_text()
    conf(root).write_text(text.replace("NCCL_IB_TIMEOUT=20\n", "").replace("NCCL_IB_TC=106", "NCCL_IB_TC=98"))
    check = run_script(lab, root, "--check")
    assert_drifts(check.stdout, [f"{conf(root)} NCCL_IB_TC: is '98', want '106'",
                                 f"{conf(root)} NCCL_IB_TIMEOUT: missing, want '20'"])
    fix = run_script(lab, root)
    assert f"changed {conf(root)} NCCL_IB_TC: is '98', want '106'" in fix.stdout
    assert conf(root).read_text() == text


def test_the_same_settings_in_another_order_are_rewritten(tmp_path: Path, lab: Path, lab_applied: Applied) -> None:
    root = copy_applied(lab_applied, tmp_path)
    text = conf(root).read_text()
    lines = text.splitlines(keepends=True)
    conf(root).write_text("".join([lines[0], *reversed(lines[1:-1]), lines[-1]]))
    assert_drifts(run_script(lab, root, "--check").stdout,
                  [f"{conf(root)} rocefab block: the same settings, written otherwise"])
    assert run_script(lab, root).returncode == 0 and conf(root).read_text() == text


# --- NCCL_SOCKET_IFNAME and the GID ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("written", "rendered"), [
    ("eno3", "=eno3"), ("=eno3", "=eno3"), ("eno3,eno4", "=eno3,eno4"), ("^docker,lo", "^docker,lo"),
    ("^=docker0", "^=docker0"),
])
def test_socket_ifname_is_an_exact_match_unless_written_otherwise(written: str, rendered: str) -> None:
    assert exact_ifname(written) == rendered


def pinned(index: int) -> dict[str, Any]:
    intent = copy.deepcopy(example("lab"))
    intent["hosts"]["nccl"]["gid_index"] = index
    return intent


def test_a_pinned_gid_index_is_checked_against_the_interfaces_address(tmp_path: Path) -> None:
    files = render_host(tmp_path, pinned(3))
    assert "export NCCL_IB_GID_INDEX=3\n" in files[".nccl.env"]
    root = fresh_host(tmp_path / "host", LAB_PORTS, LAB_LAG)
    result = run_script(tmp_path / "gpu001.roce.sh", root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ok      mlx5_bond_0 GID index 3 = RoCE v2 GID of 10.101.0.4 on bond0" in result.stdout


def test_a_pinned_index_holding_another_gid_is_drift(tmp_path: Path) -> None:
    """Index 1 is the RoCE v2 GID of the IPv6 link-local address: right type, wrong GID (the old check passed it)."""
    render_host(tmp_path, pinned(1))
    root = fresh_host(tmp_path / "host", LAB_PORTS, LAB_LAG)
    result = run_script(tmp_path / "gpu001.roce.sh", root)
    assert result.returncode == 1
    gid_types = root / "sys/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/types/1"
    assert gid_types.read_text() == "RoCE v2\n"
    assert ("DRIFT   mlx5_bond_0 GID index 1 is not the RoCE v2 GID of 10.101.0.4 on bond0 (that is at index 3): "
            "NCCL_IB_GID_INDEX=1 picks the wrong GID") in result.stdout


# --- two bonds: each sources its traffic through its own leaf pair VLAN --------------------------------------------


@pytest.fixture(scope="module")
def pod(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Applied]:
    folder = tmp_path_factory.mktemp("pod")
    render_host(folder, example("pod32"))
    script = folder / "gpu001.roce.sh"
    return script, apply_once(script, fresh_host(folder / "host", POD_PORTS, POD_LAG))


def test_each_bond_has_a_table_for_what_it_sources(pod: tuple[Path, Applied]) -> None:
    script, applied = pod
    assert applied.result.returncode == 0, applied.result.stdout + applied.result.stderr
    rules = stub(applied.root, "ip", "-4", "rule", "show").stdout.splitlines()
    assert "32765:\tfrom 10.101.0.4 lookup 200" in rules and "32764:\tfrom 10.102.0.4 lookup 201" in rules
    # a RoCE peer on the other training VLAN is reached through the bond the GID belongs to
    # and a same-rack peer on the bond's own VLAN on-link, from the bond's address, as the main table reaches it
    for table, gateway, bond, own in (("200", "10.101.0.1", "bond0", "10.101.0.4"),
                                      ("201", "10.102.0.1", "bond1", "10.102.0.4")):
        subnet = own.rsplit(".", 1)[0] + ".0/24"
        shown = stub(applied.root, "ip", "-4", "route", "show", "table", table).stdout
        assert sorted(shown.splitlines()) == sorted([f"{subnet} dev {bond} scope link src {own} ",
                                                     f"10.101.0.0/16 via {gateway} dev {bond} ",
                                                     f"10.102.0.0/16 via {gateway} dev {bond} "]), shown
    assert run_script(script, applied.root, "--check").returncode == 0


def test_a_bond_rule_lost_is_drift_and_repaired(tmp_path: Path, pod: tuple[Path, Applied]) -> None:
    script, applied = pod
    root = copy_applied(applied, tmp_path)
    stub(root, "ip", "-4", "rule", "del", "from", "10.102.0.4")
    assert_drifts(run_script(script, root, "--check").stdout, ["rule from 10.102.0.4: is '', want '201'"])
    assert run_script(script, root).returncode == 0
    assert run_script(script, root, "--check").returncode == 0


def test_one_bond_needs_no_table(lab: Path) -> None:
    assert "ensure_rule" not in lab.read_text().split("# --- NCCL")[0].split("# --- bond0")[1]


# --- re-applied at every boot ---------------------------------------------------------------------------------------


def test_the_boot_unit_runs_the_installed_script_once_the_network_is_up(tmp_path: Path) -> None:
    script = render_host(tmp_path, example("lab"))[".roce.sh"]
    plan = check_file(tmp_path / "intent.yaml", "0.0.0-test").plan
    assert plan is not None
    unit = config.render_unit(plan, plan.hosts[0])
    assert f"<<'ROCEFAB_UNIT'\n{unit.rstrip()}\nROCEFAB_UNIT\n" in script, "the script carries the unit it installs"
    assert unit.startswith("# Generated by rocefab")
    body = "\n".join(line for line in unit.splitlines() if not line.startswith("#"))
    sections = {block.split("]")[0].lstrip("["): block for block in body.split("\n\n")}
    assert set(sections) == {"Unit", "Service", "Install"}
    assert sections["Unit"].endswith("After=network-online.target openibd.service\nWants=network-online.target")
    assert "Type=oneshot\nRemainAfterExit=yes\nExecStart=/bin/bash /usr/local/sbin/rocefab-roce.sh" in (
        sections["Service"])
    assert sections["Install"].strip() == "[Install]\nWantedBy=multi-user.target"


def test_a_changed_installed_copy_is_drift(tmp_path: Path, lab: Path, lab_applied: Applied) -> None:
    root = copy_applied(lab_applied, tmp_path)
    installed = root / "usr/local/sbin/rocefab-roce.sh"
    installed.write_text(installed.read_text() + "# edited\n")
    assert_drifts(run_script(lab, root, "--check").stdout, [f"{installed}: is '"])
    assert run_script(lab, root).returncode == 0 and installed.read_text() == staged(lab.read_text())
