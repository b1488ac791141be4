"""A fake GPU host for running rendered host scripts without root and without touching the machine.

`make_host` builds a freshly booted host under a folder: `<root>/sys` (the fake sysfs plus the stubs' private
state, see hoststubs/_state.py) and an empty `<root>/etc`. `run_script` runs a script against it with the stubs in
hoststubs/ first on PATH; `stub` runs one stub command, to change the host behind a script's back; `snapshot`
captures every file, folder and symlink for before/after comparisons.
"""

from __future__ import annotations

import marshal
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

STUBS = Path(__file__).resolve().parent / "hoststubs"
TOOLS = ("ip", "ethtool", "mlnx_qos", "cma_roce_tos", "cma_roce_mode")
SYSTEM_PATH = "/usr/bin:/bin"

sys.path.insert(0, str(STUBS))
from _state import Host  # noqa: E402


def make_host(root: Path, netdevs: Sequence[str], roce_lag: Mapping[str, tuple[str, str]], *,
              mtu: int = 1500, max_mtu: int = 9978, up: bool = True,
              pause: tuple[bool, bool, bool] = (False, True, True), rings: tuple[int, int] = (1024, 1024),
              ring_max: int = 8192, trust: str = "pcp", ecn_enabled: bool = False, cnp_dscp: int = 48,
              cnp_802p_prio: int = 6) -> Path:
    """A pristine host: ConnectX PF netdevs (RDMA devices mlx5_0, mlx5_1, ... in order), no bonds, nothing in etc.

    roce_lag maps a RoCE LAG RDMA device to the two PF netdevs of its card, e.g. {"mlx5_bond_0": ("ens1f0np0",
    "ens1f1np1")}: it appears when both are the only ports of one bond. Defaults are what an mlx5 shows after boot:
    mtu 1500 (max 9978), admin up, 802.3x pause autoneg off / rx on / tx on (mlx5 refuses autoneg), rings 1024/1024
    of 8192, trust pcp, no PFC, CNP DSCP 48 / priority 6, rdma_cm ToS 0 and "RoCE v2"; DCQCN enable flags are 0 here
    (set ecn_enabled=True for firmware that enables DCQCN on every priority).
    """
    for pair in roce_lag.values():
        missing = set(pair) - set(netdevs)
        assert not missing, f"LAG ports {missing} are not netdevs of the host"
    (root / "etc").mkdir(parents=True)
    host = Host.create(str(root / "sys"), {dev: list(pair) for dev, pair in roce_lag.items()})
    for i, name in enumerate(netdevs):
        host.add_physical(name, mac=f"0c:42:a1:00:00:{i + 1:02x}", rdma_device=f"mlx5_{i}", mtu=mtu, max_mtu=max_mtu,
                          up=up, pause=pause, rings=rings, ring_max=ring_max, trust=trust, ecn_enabled=ecn_enabled,
                          cnp_dscp=cnp_dscp, cnp_802p_prio=cnp_802p_prio)
    host.commit()
    return root


def host_env(root: Path, path: str, env: Mapping[str, str] | None) -> dict[str, str]:
    return {"PATH": path, "LC_ALL": "C", "ROCEFAB_SYSFS_ROOT": str(root / "sys"),
            "ROCEFAB_ETC_ROOT": str(root / "etc"), **(env or {})}


def run_script(script: Path, root: Path, *args: str, env: Mapping[str, str] | None = None,
               stubs: Path = STUBS) -> subprocess.CompletedProcess[str]:
    """`bash script args` against the fake host (a clean environment: no inherited variables)."""
    return subprocess.run(["/bin/bash", str(script), *args], env=host_env(root, f"{stubs}:{SYSTEM_PATH}", env),
                          capture_output=True, text=True, timeout=60, check=False)


def stub(root: Path, tool: str, *args: str, env: Mapping[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    """One stub command against the fake host, e.g. stub(root, "ip", "link", "set", "dev", "bond0", "down")."""
    assert tool in TOOLS, tool
    result = subprocess.run([str(STUBS / tool), *args], env=host_env(root, f"{STUBS}:{SYSTEM_PATH}", env),
                            capture_output=True, text=True, timeout=30, check=False)
    if check:
        assert result.returncode == 0, f"{tool} {' '.join(args)}: exit {result.returncode}\n{result.stderr}"
    return result


def stubs_without(folder: Path, *missing: str) -> Path:
    """A stub folder lacking some tools (symlinks to the others), for 'tool not installed' runs."""
    folder.mkdir(parents=True)
    for tool in TOOLS:
        if tool not in missing:
            (folder / tool).symlink_to(STUBS / tool)
    for tool in missing:
        assert shutil.which(tool, path=SYSTEM_PATH) is None, f"{tool} is installed in {SYSTEM_PATH}"
    return folder


def remove_netdev(root: Path, name: str) -> None:
    """Make a netdev disappear, as if its driver never bound (firmware, PCI slot, renamed interface)."""
    shutil.rmtree(root / "sys" / "class" / "net" / name)


def state(root: Path) -> dict:
    """The stubs' private kernel state of a fake host (admin state, pause, rings, DCB, addresses, routes, rdma_cm)."""
    return marshal.loads((root / "sys" / ".stubstate" / "state.marshal").read_bytes())


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
