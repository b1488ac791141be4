"""A fake GPU host for running rendered host scripts without root and without touching the machine.

`make_host` builds a freshly booted host under a folder: `<root>/sys` (the fake sysfs plus the stubs' private state,
see stubs/_state.py, and the PCIe hardware below the netdevs, see stubs/_hardware.py), `<root>/proc` (the
kernel command line and loaded modules), an empty `<root>/etc` and `<root>/usr/local/sbin`. `edit_hardware` changes
the hardware behind a script's back (a downgraded PCIe link, ACS left on, a small BAR1). `host_env` is the environment
a script needs to run against it with the stubs first on PATH (`stub_dir`: the stub server's clients, see
stubserver.py, or stubs/ itself); `run_script` runs one; `stub` runs one stub command, to change the host behind
a script's back; `check_stubs` raises if the stub server failed; `snapshot` captures every file, folder and symlink for
before/after comparisons.

The stubs refuse to run unless ROCEFAB_SYSFS_ROOT points at a fake host, so a script run this way can only change
the fake host (and whatever unstubbed program it calls, which is why PATH holds nothing but the stubs and /usr/bin).
"""

from __future__ import annotations

import importlib.util
import marshal
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from rocefab.lab.host import stubserver

STUBS = Path(__file__).resolve().parent / "stubs"
_LOADING = threading.Lock()  # sys.path and sys.modules are the process's: one load at a time
TOOLS = ("ip", "ethtool", "mlnx_qos", "cma_roce_tos", "cma_roce_mode", "lspci", "nvidia-smi", "rdma", "ofed_info")
SYSTEM_PATH = "/usr/bin:/bin"
# what a GPU server with MLNX_OFED boots with: the IOMMU on in passthrough, GPUDirect RDMA's modules loaded
CMDLINE = "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=4f1c2d9e-0b7a-4c55-9a51-2c3e8d1f6a70 ro " \
          "intel_iommu=on iommu=pt"
MODULES = ("nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)",
           "nvidia_uvm 4956160 0 - Live 0x0000000000000000 (OE)",
           "nvidia 54284288 2 nvidia_peermem,nvidia_uvm, Live 0x0000000000000000 (OE)",
           "mlx5_ib 483328 0 - Live 0x0000000000000000 (OE)",
           "ib_uverbs 196608 2 nvidia_peermem,mlx5_ib, Live 0x0000000000000000 (OE)",
           "mlx5_core 2629632 1 mlx5_ib, Live 0x0000000000000000 (OE)",
           "ib_core 507904 3 mlx5_ib,ib_uverbs,mlx5_core, Live 0x0000000000000000 (OE)")


def _stub_module(name: str) -> ModuleType:
    """stubs/<name>.py, loaded by path: the stubs import it, and it its siblings (_common, _routing, ...), as
    top-level modules from their own folder. That folder is on sys.path only while this loads, and the siblings'
    plain names leave sys.modules afterwards, so none of them shadows a module of this process."""
    with _LOADING:
        before = set(sys.modules)
        sys.path.insert(0, str(STUBS))
        try:
            spec = importlib.util.spec_from_file_location(f"rocefab_lab_host{name.strip('_')}", STUBS / f"{name}.py")
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(STUBS))
            for added in set(sys.modules) - before:
                if added.startswith("_") and str(getattr(sys.modules[added], "__file__", "")).startswith(str(STUBS)):
                    del sys.modules[added]
    return module


def _stub_state() -> ModuleType:
    return _stub_module("_state")


def _cards(netdevs: Sequence[str], roce_lag: Mapping[str, tuple[str, str]]) -> list[list[str]]:
    """The NIC cards: a RoCE LAG's two PFs share one (its functions 0 and 1), every other netdev has its own."""
    pairs = {port: list(pair) for pair in roce_lag.values() for port in pair}
    cards: list[list[str]] = []
    for name in netdevs:
        if name not in pairs:
            cards.append([name])
        elif pairs[name][0] == name:
            cards.append(pairs[name])
    return cards


def make_host(root: Path, netdevs: Sequence[str], roce_lag: Mapping[str, tuple[str, str]] | None = None, *,
              rdma: Mapping[str, str] | None = None, mtu: int = 1500, max_mtu: int = 9978, up: bool = True,
              pause: tuple[bool, bool, bool] = (False, True, True), rings: tuple[int, int] = (1024, 1024),
              ring_max: int = 8192, trust: str = "pcp", ecn_enabled: bool = False, cnp_dscp: int = 48,
              cnp_802p_prio: int = 6, speeds: Mapping[str, int] | None = None, ofed: bool = True) -> Path:
    """A pristine host: ConnectX PF netdevs, each with its own RDMA device, no bonds, nothing in etc.

    Each netdev's RDMA device is present from boot under class/infiniband (GID index 3 is its IPv4 "RoCE v2" GID
    while it has an address); it is named by `rdma` (netdev -> RDMA device, e.g. {"enp24s0np0": "mlx5_0",
    "enp64s0np0": "mlx5_3"} for the single-port NICs of a rail-optimized server), else mlx5_0, mlx5_1, ... by the
    netdev's position. roce_lag maps a RoCE LAG RDMA device to the two PF netdevs of its card, e.g.
    {"mlx5_bond_0": ("ens1f0np0", "ens1f1np1")}: it appears, and the two per-port devices go, when both are the
    only ports of one bond. Defaults are what an mlx5 shows after boot: mtu 1500 (max 9978), admin up, 802.3x pause
    autoneg off / rx on / tx on (mlx5 refuses autoneg), rings 1024/1024 of 8192, trust pcp, no PFC, CNP DSCP 48 /
    priority 6, rdma_cm ToS 0 and "RoCE v2"; DCQCN enable flags are 0 here (set ecn_enabled=True for firmware that
    enables DCQCN on every priority). Links come up at 400G unless `speeds` (netdev -> Mb/s) says otherwise.
    `ofed=False` lays sysfs out as the inbox mlx5 driver does: no netdev `ecn/` folder and no RDMA device `tc/`
    folder (both come with MLNX_OFED / DOCA-OFED only; tests/fixtures/devices/host/index.yaml).
    """
    roce_lag = roce_lag or {}
    rdma = rdma or {}
    for pair in roce_lag.values():
        missing = set(pair) - set(netdevs)
        if missing:
            raise ValueError(f"LAG ports {sorted(missing)} are not netdevs of the host")
    speeds = speeds or {}
    unknown = (set(rdma) | set(speeds)) - set(netdevs)
    if unknown:
        raise ValueError(f"RDMA devices or speeds given for {sorted(unknown)}, which are not netdevs of the host")
    names = [rdma.get(name, f"mlx5_{i}") for i, name in enumerate(netdevs)]
    taken = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(roce_lag)))
    if taken:
        raise ValueError(f"RDMA device names {taken} are used more than once")
    (root / "etc").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "proc" / "cmdline").write_text(CMDLINE + "\n")
    (root / "proc" / "modules").write_text("".join(line + "\n" for line in MODULES))
    hardware = _stub_module("_hardware")
    host = _stub_state().Host.create(str(root / "sys"), {dev: list(pair) for dev, pair in roce_lag.items()})
    hw = host.state["hw"] = hardware.default(_cards(netdevs, roce_lag))
    hardware.render(host.root, hw)
    for i, (name, rdma_device) in enumerate(zip(netdevs, names, strict=True)):
        host.add_physical(name, mac=f"0c:42:a1:00:00:{i + 1:02x}", rdma_device=rdma_device, mtu=mtu,
                          max_mtu=max_mtu, up=up, pause=pause, rings=rings, ring_max=ring_max, trust=trust,
                          ecn_enabled=ecn_enabled, cnp_dscp=cnp_dscp, cnp_802p_prio=cnp_802p_prio,
                          speed_mbps=speeds.get(name, 400000), device=hardware.sysfs_path(hw, hw["netdev_pci"][name]))
    host.commit()
    if not ofed:
        for folder in [*(root / "sys/class/net").glob("*/ecn"), *(root / "sys/class/infiniband").glob("*/tc")]:
            shutil.rmtree(folder.resolve())
    return root


def edit_hardware(root: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Change a fake host's hardware (`state(root)["hw"]`: PCI functions with their links, ACS, firmware and GPU
    memory, the driver stack; see stubs/_hardware.py) and render it again, e.g. a link trained at x8:
    edit_hardware(root, lambda hw: hw["pci"]["0000:12:00.0"]["sta"].__setitem__(1, 8))."""
    hardware = _stub_module("_hardware")
    host = _stub_state().Host(str(root / "sys"))
    hw = host.state["hw"]
    change(hw)
    hardware.render(host.root, hw)
    for name, address in hw["netdev_pci"].items():
        if host.exists(name):  # a device that moved in the tree: its netdev follows, its RDMA devices with it
            path = hardware.sysfs_path(hw, address)
            (root / "sys" / path / "infiniband").mkdir(parents=True, exist_ok=True)
            link = root / "sys" / "class" / "net" / name / "device"
            target = Path("..", "..", "..", path)
            if link.readlink() != target:
                link.unlink()
                link.symlink_to(target)
    host.commit()


def stub_dir() -> Path:
    """The folder of the stub executables a script finds on PATH: the stub server's clients while it is enabled
    (stubserver.py), else stubs/ (every call a standalone Python stub)."""
    return stubserver.shared(STUBS, TOOLS).bin if stubserver.enabled() else STUBS


def check_stubs() -> None:
    """Raise `stubserver.StubServerError` if the stub server failed: then tool calls may not have run, whatever a
    script printed about them."""
    if stubserver.enabled():
        stubserver.shared(STUBS, TOOLS).check()


def host_env(root: Path, path: str | None = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A clean environment (nothing inherited) that points the stubs and the rendered scripts at the fake host;
    PATH is `path`, by default the stubs' folder (`stub_dir`) and then /usr/bin:/bin."""
    return {"PATH": path or f"{stub_dir()}:{SYSTEM_PATH}", "LC_ALL": "C", "ROCEFAB_SYSFS_ROOT": str(root / "sys"),
            "ROCEFAB_ETC_ROOT": str(root / "etc"), "ROCEFAB_SBIN_ROOT": str(root / "usr" / "local" / "sbin"),
            "ROCEFAB_PROC_ROOT": str(root / "proc"),
            **(env or {})}


def run_script(script: Path, root: Path, *args: str, env: Mapping[str, str] | None = None,
               stubs: Path = STUBS) -> subprocess.CompletedProcess[str]:
    """`bash script args` against the fake host; `stubs` (another folder of stubs, e.g. one lacking a tool) runs
    them standalone."""
    folder = stub_dir() if stubs == STUBS else stubs
    result = subprocess.run(["/bin/bash", str(script), *args], env=host_env(root, f"{folder}:{SYSTEM_PATH}", env),
                            capture_output=True, text=True, timeout=60, check=False)
    check_stubs()
    return result


def stub(root: Path, tool: str, *args: str, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """One stub command against the fake host, e.g. stub(root, "ip", "link", "set", "dev", "bond0", "down")."""
    if tool not in TOOLS:
        raise ValueError(f"{tool} is not a host stub")
    result = subprocess.run([str(stub_dir() / tool), *args], env=host_env(root, env=env),
                            capture_output=True, text=True, timeout=30, check=False)
    check_stubs()
    if check and result.returncode != 0:
        raise AssertionError(f"{tool} {' '.join(args)}: exit {result.returncode}\n{result.stderr}")
    return result


def state(root: Path) -> dict[str, Any]:
    """The stubs' private kernel state of a fake host (admin state, pause, rings, DCB, addresses, routes of every
    table, policy rules, rdma_cm, and under "hw" the hardware)."""
    loaded: dict[str, Any] = marshal.loads((root / "sys" / ".stubstate" / "state.marshal").read_bytes())
    return loaded


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file (content), symlink (target) and folder under root, keyed by relative path."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        key = path.relative_to(root).as_posix()
        if path.is_symlink():
            out[key] = b"-> " + str(path.readlink()).encode()
        elif path.is_dir():
            out[key] = b"<dir>"
        else:
            out[key] = path.read_bytes()
    return out


def diff(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """What changed between two snapshots, for assertion messages."""
    return [f"{'+' if k not in before else '-' if k not in after else '~'} {k}"
            for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
