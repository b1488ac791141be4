"""A fake GPU host for running rendered host scripts without root and without touching the machine.

`make_host` builds a freshly booted host under a folder: `<root>/sys` (the fake sysfs plus the stubs' private state,
see hoststubs/_state.py), an empty `<root>/etc` and `<root>/usr/local/sbin`. `host_env` is the environment a script
needs to run against it with the stubs in hoststubs/ first on PATH; `run_script` runs one; `stub` runs one stub
command, to change the host behind a script's back; `snapshot` captures every file, folder and symlink for
before/after comparisons.

The stubs refuse to run unless ROCEFAB_SYSFS_ROOT points at a fake host, so a script run this way can only change
the fake host (and whatever unstubbed program it calls, which is why PATH holds nothing but the stubs and /usr/bin).
"""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

STUBS = Path(__file__).resolve().parent / "hoststubs"
TOOLS = ("ip", "ethtool", "mlnx_qos", "cma_roce_tos", "cma_roce_mode")
SYSTEM_PATH = "/usr/bin:/bin"


def _stub_state() -> ModuleType:
    """hoststubs/_state.py, loaded by path: the stubs import it as a top-level module from their own folder,
    and putting that folder on sys.path here would shadow names for the whole process."""
    spec = importlib.util.spec_from_file_location("rocefab_lab_hoststate", STUBS / "_state.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_host(root: Path, netdevs: Sequence[str], roce_lag: Mapping[str, tuple[str, str]] | None = None, *,
              rdma: Mapping[str, str] | None = None, mtu: int = 1500, max_mtu: int = 9978, up: bool = True,
              pause: tuple[bool, bool, bool] = (False, True, True), rings: tuple[int, int] = (1024, 1024),
              ring_max: int = 8192, trust: str = "pcp", ecn_enabled: bool = False, cnp_dscp: int = 48,
              cnp_802p_prio: int = 6, speeds: Mapping[str, int] | None = None) -> Path:
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
    host = _stub_state().Host.create(str(root / "sys"), {dev: list(pair) for dev, pair in roce_lag.items()})
    for i, (name, rdma_device) in enumerate(zip(netdevs, names, strict=True)):
        host.add_physical(name, mac=f"0c:42:a1:00:00:{i + 1:02x}", rdma_device=rdma_device, mtu=mtu,
                          max_mtu=max_mtu, up=up, pause=pause, rings=rings, ring_max=ring_max, trust=trust,
                          ecn_enabled=ecn_enabled, cnp_dscp=cnp_dscp, cnp_802p_prio=cnp_802p_prio,
                          speed_mbps=speeds.get(name, 400000))
    host.commit()
    return root


def host_env(root: Path, path: str = f"{STUBS}:{SYSTEM_PATH}", env: Mapping[str, str] | None = None
             ) -> dict[str, str]:
    """A clean environment (nothing inherited) that points the stubs and the rendered scripts at the fake host."""
    return {"PATH": path, "LC_ALL": "C", "ROCEFAB_SYSFS_ROOT": str(root / "sys"),
            "ROCEFAB_ETC_ROOT": str(root / "etc"), "ROCEFAB_SBIN_ROOT": str(root / "usr" / "local" / "sbin"),
            **(env or {})}


def run_script(script: Path, root: Path, *args: str, env: Mapping[str, str] | None = None,
               stubs: Path = STUBS) -> subprocess.CompletedProcess[str]:
    """`bash script args` against the fake host."""
    return subprocess.run(["/bin/bash", str(script), *args], env=host_env(root, f"{stubs}:{SYSTEM_PATH}", env),
                          capture_output=True, text=True, timeout=60, check=False)


def stub(root: Path, tool: str, *args: str, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """One stub command against the fake host, e.g. stub(root, "ip", "link", "set", "dev", "bond0", "down")."""
    if tool not in TOOLS:
        raise ValueError(f"{tool} is not a host stub")
    result = subprocess.run([str(STUBS / tool), *args], env=host_env(root, env=env),
                            capture_output=True, text=True, timeout=30, check=False)
    if check and result.returncode != 0:
        raise AssertionError(f"{tool} {' '.join(args)}: exit {result.returncode}\n{result.stderr}")
    return result


def state(root: Path) -> dict[str, Any]:
    """The stubs' private kernel state of a fake host (admin state, pause, rings, DCB, addresses, routes of every
    table, policy rules, rdma_cm)."""
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
