"""The read-only host preflight (hosts/<host>.preflight.sh), run for real (bash) against the fake GPU host of
lab/host/fakehost.py for both host shapes, a ToR-bonded one (intents/lab.yaml) and a rail-optimized one: a healthy host
passes every check; each fault planted below the script (ACS left on, a downgraded PCIe link, a small BAR1,
nvidia_peermem missing, firmware that differs, an RDMA link down, no RoCE v2 GID, MTU 1500, a missing tool, GPUs on
the other socket) is found with its verdict; --json says the same as the table; nothing on the host changes; and
names that would mean something to a shell stay names."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakehost import (
    STUBS,
    Applied,
    apply_once,
    copy_applied,
    diff,
    edit_hardware,
    make_host,
    run_script,
    snapshot,
    state,
    stub,
    stubs_without,
)
from hostlib import place_script
from intent_bases import BASES
from test_hostile_strings import HOSTILE

from rocefab.models.intent import SIZED_TAG
from rocefab.platforms.host import preflight
from rocefab.platforms.host.library import PREFLIGHT
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan, Host
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass(frozen=True)
class Shape:
    """One host shape: gpu001's rendered files, its plan and the fake host it needs."""

    name: str
    plan: FabricPlan
    host: Host
    files: dict[str, str]

    @property
    def ports(self) -> list[str]:
        return [m.netdev for b in self.host.bonds for m in b.members] + [n.netdev for n in self.host.nics]

    @property
    def lag(self) -> dict[str, tuple[str, ...]]:
        return {b.rdma_device: tuple(m.netdev for m in b.members) for b in self.host.bonds}

    @property
    def rdma(self) -> dict[str, str]:
        return {n.netdev: n.rdma_device for n in self.host.nics}

    @property
    def first_rdma(self) -> tuple[str, str, str]:
        """(RDMA device, its netdev, its address) of the host's first planned RDMA device."""
        if self.host.bonds:
            bond = self.host.bonds[0]
            return bond.rdma_device, bond.name, bond.source
        nic = self.host.nics[0]
        return nic.rdma_device, nic.netdev, nic.source

    def write(self, folder: Path) -> tuple[Path, Path]:
        paths = []
        for suffix in (".roce.sh", ".preflight.sh"):
            paths.append(place_script(folder / f"{self.name}-gpu001{suffix}", self.files[f"hosts/gpu001{suffix}"]))
        return paths[0], paths[1]


def _shape(name: str, intent: Path) -> Shape:
    checked = check_file(intent, "0.0.0-test")
    assert checked.plan is not None, [str(f) for f in checked.findings]
    host = next(h for h in checked.plan.hosts if h.name == "gpu001")
    files = {f.path: f.content for f in render_fabric(checked.plan) if f.path.startswith("hosts/gpu001.")}
    return Shape(name, checked.plan, host, files)


@pytest.fixture(scope="module", params=["lab", "rail"])
def shape(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Shape:
    if request.param == "lab":
        return _shape("lab", ROOT / "intents" / "lab.yaml")
    intent = tmp_path_factory.mktemp("rail") / "rail.yaml"
    intent.write_text(yaml.safe_dump(BASES[SIZED_TAG]), encoding="utf-8")
    return _shape("rail", intent)


@pytest.fixture(scope="module")
def scripts(shape: Shape, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return shape.write(tmp_path_factory.mktemp("scripts"))


@pytest.fixture(scope="module")
def healthy_once(shape: Shape, scripts: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Applied:
    """The host after its NIC/bond script ran once (shared: copy it with `healthy` before changing it)."""
    root = make_host(tmp_path_factory.mktemp("healthy") / "host", shape.ports, shape.lag, rdma=shape.rdma)
    return apply_once(scripts[0], root)


@pytest.fixture
def healthy(tmp_path: Path, healthy_once: Applied) -> Path:
    return copy_applied(healthy_once, tmp_path)


def run(scripts: tuple[Path, Path], root: Path, *args: str, stubs: Path = STUBS,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_script(scripts[1], root, *args, stubs=stubs, env=env)


def report(scripts: tuple[Path, Path], root: Path, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    result = run(scripts, root, "--json", **kwargs)
    assert result.stderr == "", result.stderr
    assert result.returncode in (0, 1), result.stdout
    return result.returncode, json.loads(result.stdout)


def findings(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(check, subject, verdict) of every row that did not pass, in order."""
    return [(c["check"], c["subject"], c["verdict"]) for c in doc["checks"] if c["verdict"] != "pass"]


def assert_findings(doc: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    """The rows that did not pass are exactly these (subjects given by a prefix), in order."""
    found = findings(doc)
    assert len(found) == len(expected) and all(
        f[0] == e[0] and f[1].startswith(e[1]) and f[2] == e[2] for f, e in zip(found, expected, strict=True)), (
        f"found {found}\nexpected {expected}")


def hw(root: Path) -> dict[str, Any]:
    hardware: dict[str, Any] = state(root)["hw"]
    return hardware


def gpu(root: Path) -> str:
    return next(a for a, d in sorted(hw(root)["pci"].items()) if d["kind"] == "gpu")


# --- a healthy host -------------------------------------------------------------------------------------------------


def test_a_healthy_host_passes_every_check(shape: Shape, scripts: tuple[Path, Path], healthy: Path) -> None:
    code, doc = report(scripts, healthy)
    assert code == 0 and findings(doc) == [], findings(doc)
    checks = [c["check"] for c in doc["checks"]]
    rdma_devices = shape.host.rdma_devices
    netdevs = [b.name for b in shape.host.bonds] + shape.ports
    assert checks.count("pcie-link") == checks.count("firmware") == len(shape.ports)
    assert checks.count("rdma-link") == checks.count("roce-gid") == checks.count("gpu-affinity") == len(rdma_devices)
    assert checks.count("bar1") == len(shape.host.bonds) + len(shape.host.nics)  # the fake host: a GPU per card
    assert [c["subject"] for c in doc["checks"] if c["check"] == "mtu"] == netdevs
    assert {"iommu", "acs", "ofed", "firmware-match", "nvidia-peermem"} <= set(checks)
    assert doc["host"] == "gpu001"
    assert doc["summary"] == {"pass": len(checks), "warn": 0, "fail": 0}
    device, netdev, address = shape.first_rdma
    by_subject = {(c["check"], c["subject"]): c for c in doc["checks"]}
    assert by_subject["rdma-link", device]["observed"] == f"ACTIVE LINK_UP on {netdev}"
    assert by_subject["roce-gid", device]["expected"] == f"RoCE v2 GID of {address} on {netdev}"
    assert by_subject["roce-gid", device]["observed"] == "index 3"
    assert by_subject["gpu-affinity", device]["observed"] == "PIX to GPU0"
    assert by_subject["iommu", "kernel"]["observed"].startswith("passthrough (")


def test_the_table_says_what_the_json_says(scripts: tuple[Path, Path], healthy: Path) -> None:
    _, doc = report(scripts, healthy)
    table = run(scripts, healthy)
    assert table.returncode == 0 and table.stderr == ""
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["CHECK", "SUBJECT", "VERDICT"]
    expected = [f"{c['check']:<14} {c['subject']:<44} {c['verdict']:<7} {c['observed']} (expected {c['expected']})"
                + (f" -> {c['hint']}" if c["verdict"] != "pass" and c["hint"] else "") for c in doc["checks"]]
    assert lines[1:-1] == expected
    assert lines[-1] == f"gpu001: {len(expected)} pass, 0 warn, 0 fail"


@pytest.mark.parametrize("env", [{"STUB_RDMA": "colon"}, {"STUB_RDMA": "indexed"}, {"STUB_NVSMI_TOPO": "legacy"}],
                         ids=lambda env: "-".join(env.values()))
def test_other_releases_of_the_tools_read_the_same(env: dict[str, str], scripts: tuple[Path, Path],
                                                   healthy: Path) -> None:
    """MLNX_OFED's rdma ("link DEV/1: state"), a newer iproute2's ("N/1: DEV/1: state"), and nvidia-smi naming the
    NIC columns by RDMA device (older drivers) instead of NIC0.. with a legend."""
    code, doc = report(scripts, healthy, env=env)
    assert code == 0 and findings(doc) == []


def test_the_preflight_writes_nothing(scripts: tuple[Path, Path], healthy: Path) -> None:
    stub(healthy, "rdma", "link")  # settles what any stub call settles (mlx5's traffic_class text) before the look
    before = snapshot(healthy)
    assert run(scripts, healthy).returncode == 0
    assert run(scripts, healthy, "--json").returncode == 0
    stub(healthy, "ip", "-4", "addr", "flush", "dev", scripts_netdev(healthy))  # a failing host, read the same way
    failing = snapshot(healthy)
    assert run(scripts, healthy, "--json").returncode == 1
    assert diff(before, failing) != [] and diff(failing, snapshot(healthy)) == []
    assert run(scripts, healthy).returncode == 1 and diff(failing, snapshot(healthy)) == []


def scripts_netdev(root: Path) -> str:
    """The netdev holding the host's first address (bond0 on the lab host, the first rail NIC otherwise)."""
    return next(n for n, d in sorted(state(root)["netdevs"].items(), key=lambda i: i[1]["ifindex"]) if d["addrs"])


def test_the_script_uses_no_temporary_file(scripts: tuple[Path, Path]) -> None:
    """Bash backs a here-document or here-string with a temporary file (before 5.1, or when it is large); the
    preflight feeds its readers through pipes instead, so it writes nothing even in /tmp."""
    text = PREFLIGHT.embed(scripts[1].read_text(encoding="utf-8"), {PREFLIGHT.path(): PREFLIGHT.made()[0]})
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert PREFLIGHT.inline_text() in text and "<<" not in code and "mktemp" not in code


# --- faults ---------------------------------------------------------------------------------------------------------


def acs_above_gpu(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    port = hw(root)["pci"][gpu(root)]["parent"]

    def change(h: dict[str, Any]) -> None:
        h["pci"][port]["acs"].update(ReqRedir=True, CmpltRedir=True)

    edit_hardware(root, change)
    return [("acs", f"{port} (above GPU {gpu(root)})", "fail")]


def link_width(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    address = hw(root)["netdev_pci"][shape.ports[0]]
    edit_hardware(root, lambda h: h["pci"][address]["sta"].__setitem__(1, 8))
    return [("pcie-link", f"{shape.ports[0]} ({address})", "fail")]


def link_speed(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    address = hw(root)["netdev_pci"][shape.ports[-1]]
    edit_hardware(root, lambda h: h["pci"][address]["sta"].__setitem__(0, "16GT/s"))
    return [("pcie-link", f"{shape.ports[-1]} ({address})", "fail")]


def small_bar1(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    address = gpu(root)
    edit_hardware(root, lambda h: h["pci"][address].update(bar1_mib=256))
    return [("bar1", f"GPU {address}", "fail")]


def partial_bar1(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    address = gpu(root)
    edit_hardware(root, lambda h: h["pci"][address].update(bar1_mib=65536))
    return [("bar1", f"GPU {address}", "warn")]


def no_peermem(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    modules = root / "proc" / "modules"
    modules.write_text("".join(line + "\n" for line in modules.read_text().splitlines()
                               if not line.startswith("nvidia_peermem ")))
    return [("nvidia-peermem", "host", "fail")]


def firmware_mismatch(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    address = hw(root)["netdev_pci"][shape.ports[-1]]
    edit_hardware(root, lambda h: h["pci"][address].update(fw="28.39.1002"))
    return [("firmware-match", "planned NICs", "fail")]


def rdma_link_down(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    device, netdev, _ = shape.first_rdma
    stub(root, "ip", "link", "set", "dev", netdev, "down")
    return [("rdma-link", device, "fail")]


def no_gid(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    device, netdev, _ = shape.first_rdma
    stub(root, "ip", "-4", "addr", "flush", "dev", netdev)
    return [("roce-gid", device, "fail")]


def mtu_1500(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    _, netdev, _ = shape.first_rdma
    stub(root, "ip", "link", "set", "dev", netdev, "mtu", "1500")
    # a bond's MTU goes to its ports
    followers = [m.netdev for b in shape.host.bonds if b.name == netdev for m in b.members]
    return [("mtu", name, "fail") for name in [netdev, *followers]]


def gpus_on_the_other_socket(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    def change(h: dict[str, Any]) -> None:
        h["complexes"]["pci0000:80"] = 1
        gpus = sorted(a for a, d in h["pci"].items() if d["kind"] == "gpu")
        for k, address in enumerate(gpus):
            port = f"0000:80:{k + 1:02x}.0"
            h["pci"][port] = {"kind": "root", "parent": None, "complex": "pci0000:80", "acs": None,
                              "cap": ["32GT/s", 16], "sta": ["32GT/s", 16]}
            h["pci"][address]["parent"] = port

    edit_hardware(root, change)
    return [("gpu-affinity", device, "fail") for device in shape.host.rdma_devices]


def translating_iommu(root: Path, shape: Shape) -> list[tuple[str, str, str]]:
    edit_hardware(root, lambda h: h.update(iommu="DMA-FQ"))
    return [("iommu", "kernel", "warn")]


FAULTS: list[Callable[[Path, Shape], list[tuple[str, str, str]]]] = [
    acs_above_gpu, link_width, link_speed, small_bar1, partial_bar1, no_peermem, firmware_mismatch, rdma_link_down,
    no_gid, mtu_1500, gpus_on_the_other_socket, translating_iommu,
]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.__name__)
def test_a_fault_is_found_with_its_verdict(fault: Callable[[Path, Shape], list[tuple[str, str, str]]],
                                           shape: Shape, scripts: tuple[Path, Path], healthy: Path) -> None:
    expected = fault(healthy, shape)
    code, doc = report(scripts, healthy)
    assert_findings(doc, expected)
    assert code == (1 if any(verdict == "fail" for _, _, verdict in expected) else 0)
    for row in doc["checks"]:
        if row["verdict"] != "pass":
            assert row["hint"], row
    table = run(scripts, healthy)
    assert table.returncode == code
    for check, subject, verdict in expected:
        assert any(line.startswith(f"{check:<14} {subject}") and f" {verdict} " in line
                   for line in table.stdout.splitlines()), (check, subject, table.stdout)


def test_what_a_downgraded_link_reads(shape: Shape, scripts: tuple[Path, Path], healthy: Path) -> None:
    link_width(healthy, shape)
    link_speed(healthy, shape)
    _, doc = report(scripts, healthy)
    rows = {c["subject"].split()[0]: c for c in doc["checks"] if c["check"] == "pcie-link"}
    assert rows[shape.ports[0]]["observed"] == "32GT/s x8 (downgraded)"
    assert rows[shape.ports[-1]]["observed"] == "16GT/s x16 (downgraded)"
    assert rows[shape.ports[0]]["expected"] == "32GT/s x16 (its capability)"
    assert "lspci" not in rows[shape.ports[0]]["hint"] and rows[shape.ports[0]]["verdict"] == "fail"


def test_acs_is_read_from_the_switch_ports_not_the_root_port(scripts: tuple[Path, Path], healthy: Path) -> None:
    """Linux enables ACS redirect on root ports by itself; peer-to-peer under one switch never reaches them."""
    roots = [a for a, d in hw(healthy)["pci"].items() if d["kind"] == "root"]
    assert all(hw(healthy)["pci"][r]["acs"]["ReqRedir"] for r in roots)  # as the kernel leaves them
    _, doc = report(scripts, healthy)
    subjects = [c["subject"].split()[0] for c in doc["checks"] if c["check"] == "acs"]
    assert subjects and not set(subjects) & set(roots)


@pytest.mark.parametrize(("tool", "warned"), [
    ("lspci", ["acs", "pcie-link"]),
    ("nvidia-smi", ["bar1", "gpu-affinity"]),
    ("ofed_info", ["ofed"]),
])
def test_a_missing_tool_warns_and_the_rest_still_runs(tool: str, warned: list[str], shape: Shape,
                                                      scripts: tuple[Path, Path], healthy: Path,
                                                      tmp_path: Path) -> None:
    stubs = stubs_without(tmp_path / "stubs", tool)
    code, doc = report(scripts, healthy, stubs=stubs)
    assert code == 0
    bad = findings(doc)
    assert bad and {check for check, _, _ in bad} == set(warned) and {v for _, _, v in bad} == {"warn"}, bad
    assert all(tool in c["observed"] for c in doc["checks"] if c["verdict"] == "warn"), doc
    assert [c["check"] for c in doc["checks"] if c["check"] == "mtu"]  # the other checks ran


def test_without_root_lspci_hides_capabilities_and_the_script_says_so(scripts: tuple[Path, Path],
                                                                      healthy: Path) -> None:
    code, doc = report(scripts, healthy, env={"STUB_LSPCI": "user"})
    assert code == 0
    bad = findings(doc)
    assert {check for check, _, _ in bad} == {"acs", "pcie-link"} and {v for _, _, v in bad} == {"warn"}
    assert all("root" in c["hint"] for c in doc["checks"] if c["verdict"] == "warn")


def test_usage(scripts: tuple[Path, Path], healthy: Path) -> None:
    for args in (["--check"], ["--json", "--json"], ["-x"]):
        bad = run(scripts, healthy, *args)
        assert bad.returncode == 2 and bad.stdout == "" and bad.stderr.startswith("usage: "), args
    helped = run(scripts, healthy, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ")


def test_a_host_not_set_up_yet_fails_the_fabric_checks_only(shape: Shape, scripts: tuple[Path, Path],
                                                            tmp_path: Path) -> None:
    """Before the NIC/bond script: PCIe, BIOS and drivers pass; what the script sets (MTU, GID, the LAG) fails."""
    root = make_host(tmp_path / "host", shape.ports, shape.lag, rdma=shape.rdma)
    code, doc = report(scripts, root)
    assert code == 1
    failed = {check for check, _, verdict in findings(doc) if verdict == "fail"}
    assert "mtu" in failed and "roce-gid" in failed
    assert failed <= {"mtu", "roce-gid", "rdma-link"}
    assert not failed & {"iommu", "acs", "pcie-link", "bar1", "firmware-match", "nvidia-peermem"}


# --- quoting --------------------------------------------------------------------------------------------------------


def _hostile_host(host: Host, value: str) -> Host:
    """gpu001 with `value` in every name the preflight prints: its bond or NIC netdevs and RDMA devices."""
    if host.bonds:
        bond = host.bonds[0]
        members = tuple(dataclasses.replace(m, netdev=f"{value}{i}") for i, m in enumerate(bond.members))
        bonds = (dataclasses.replace(bond, name=value, rdma_device=value, members=members),)
        return dataclasses.replace(host, bonds=bonds)
    nics = tuple(dataclasses.replace(n, netdev=f"{value}{i}", rdma_device=f"{value}{i}")
                 for i, n in enumerate(host.nics))
    return dataclasses.replace(host, nics=nics)


LINE_BREAKS = ("\n", "\r", "\u2028", "\x85")


def test_hostile_names_stay_names(shape: Shape, healthy: Path, tmp_path: Path) -> None:
    """Names are checked by the intent's patterns before they reach a script; the preflight still quotes each one
    where it is printed, so even a name that slipped through is data: bash parses the script, nothing runs, and
    the JSON gives the name back exactly."""
    marker = tmp_path / "pwned"
    for n, template in enumerate(HOSTILE):
        value = template.format(marker=marker)
        host = _hostile_host(shape.host, value)
        config = preflight.build(shape.plan, host, "gpu001.roce.sh")
        script = tmp_path / f"case{n}.preflight.sh"
        script = place_script(script, preflight.render_preflight(config))
        parsed = subprocess.run(["/bin/bash", "-n", str(script)], capture_output=True, text=True, check=False)
        assert parsed.returncode == 0, (value, parsed.stderr)
        result = run_script(script, healthy, "--json")
        assert result.returncode == 1, (value, result.stdout, result.stderr)  # no such netdev: its MTU fails
        doc = json.loads(result.stdout)
        planned = preflight.planned_netdevs(host)
        assert [c["subject"] for c in doc["checks"] if c["check"] == "mtu"] == [p.name for p in planned], value
        assert [c["subject"] for c in doc["checks"] if c["check"] == "rdma-link"] == list(host.rdma_devices), value
        assert not marker.exists(), value
        if not any(c in value for c in LINE_BREAKS):
            continue  # the table's layout is only at stake for names that could break a line
        table = run_script(script, healthy)
        # one line per row (str.splitlines would also split at U+2028, which bash leaves in the name)
        assert table.returncode == 1 and table.stdout.count("\n") == len(doc["checks"]) + 2, value
    assert not marker.exists()


def test_the_plan_block_quotes_every_name(shape: Shape) -> None:
    config = preflight.build(shape.plan, _hostile_host(shape.host, "$(touch x) y"), "gpu001.roce.sh")
    plan_lines = [line for line in preflight.render_preflight(config).splitlines() if line.startswith("plan ")]
    assert len(plan_lines) == len(config.netdevs)
    assert all(line.startswith("plan '$(touch x) y") for line in plan_lines), plan_lines
