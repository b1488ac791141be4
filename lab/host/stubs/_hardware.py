"""The fake host's hardware below the netdevs, for the read-only stubs `lspci`, `nvidia-smi`, `ofed_info` and
`ethtool -i`: a PCIe tree (root ports, PCIe switches, ConnectX functions, GPUs), each GPU's memory and BAR1, the
NIC firmware and the driver stack. It lives in the stubs' private state (`state["hw"]`, see _state.py) and is
rendered into the fake sysfs by `render`:

    devices/pci0000:00/<root port>/<switch up>/<switch down>/<device>    one folder per PCI function
    bus/pci/devices/<address> -> ../../../devices/...                      as the kernel links them
    class/net/<netdev>/device -> ../../../devices/.../<address>             the NIC function of a netdev
    kernel/iommu_groups/<n>/{type,devices/<address>}                       one group per function

`default` builds the tree a healthy GPU server has: every NIC card behind its own PCIe switch, with one GPU on a
second downstream port of that switch (nvidia-smi: PIX), links trained at their capability, ACS redirect off on the
switch ports (on at the root ports, where the kernel enables it and where it does no harm), BAR1 larger than the
GPU's memory, MLNX_OFED installed and the IOMMU in passthrough.

Like _state.py this module keeps to builtins: every stub call is a fresh interpreter.
"""

# ruff: noqa: PTH103, PTH108, PTH112, PTH114, PTH115, PTH120, PTH123, PTH211

from __future__ import annotations

import os

TYPE_CHECKING = False  # not typing's: importing typing costs every stub call 8 ms (see _state.py)
if TYPE_CHECKING:
    from typing import Any

join = os.path.join
ACS_FLAGS = ("SrcValid", "TransBlk", "ReqRedir", "CmpltRedir", "UpstreamFwd", "EgressCtrl", "DirectTrans")
# what Linux enables on an ACS-capable port when an IOMMU is active (pci_std_enable_acs)
KERNEL_ACS = {"SrcValid": True, "ReqRedir": True, "CmpltRedir": True, "UpstreamFwd": True}
OFED = "MLNX_OFED_LINUX-24.10-1.1.4.0"
FIRMWARE = "28.43.1014"
PSID = "MT_0000000838"
GPU_NAME = "GH100 [H100 SXM5 80GB]"
FB_MIB, BAR1_MIB = 81559, 131072
KERNEL = "6.8.0-45-generic"
ROOT_COMPLEX = "pci0000:00"
# nvidia-smi's levels, nearest first
LEVELS = ("PIX", "PXB", "PHB", "NODE", "SYS")


def acs(**enabled: bool) -> dict[str, bool]:
    return {flag: enabled.get(flag, False) for flag in ACS_FLAGS}


def default(cards: list[list[str]]) -> dict[str, Any]:
    """A healthy server: card k (its netdevs, one per PCI function) behind PCIe switch k, with GPU k beside it."""
    pci: dict[str, dict[str, Any]] = {}
    netdev_pci: dict[str, str] = {}
    for k, netdevs in enumerate(cards):
        bus = 0x10 * (k + 1)
        root, up = f"0000:00:{k + 1:02x}.0", f"0000:{bus:02x}:00.0"
        down_nic, down_gpu = f"0000:{bus + 1:02x}:00.0", f"0000:{bus + 1:02x}:01.0"
        pci[root] = {"kind": "root", "parent": None, "complex": ROOT_COMPLEX, "acs": acs(**KERNEL_ACS),
                     "cap": ["32GT/s", 16], "sta": ["32GT/s", 16]}
        pci[up] = {"kind": "upstream", "parent": root, "acs": None, "cap": ["32GT/s", 16], "sta": ["32GT/s", 16]}
        for down in (down_nic, down_gpu):
            pci[down] = {"kind": "downstream", "parent": up, "acs": acs(), "cap": ["32GT/s", 16],
                         "sta": ["32GT/s", 16]}
        for function, netdev in enumerate(netdevs):
            address = f"0000:{bus + 2:02x}:00.{function}"
            pci[address] = {"kind": "nic", "parent": down_nic, "acs": None, "cap": ["32GT/s", 16],
                            "sta": ["32GT/s", 16], "fw": FIRMWARE, "psid": PSID, "netdev": netdev}
            netdev_pci[netdev] = address
        pci[f"0000:{bus + 3:02x}:00.0"] = {"kind": "gpu", "parent": down_gpu, "acs": None, "cap": ["32GT/s", 16],
                                           "sta": ["32GT/s", 16], "fb_mib": FB_MIB, "bar1_mib": BAR1_MIB}
    return {"pci": pci, "netdev_pci": netdev_pci, "complexes": {ROOT_COMPLEX: 0}, "ofed": OFED,
            "iommu": "identity"}


def chain(hw: dict[str, Any], address: str) -> list[str]:
    """The device and every bridge above it, from its root port down to itself."""
    out = [address]
    while hw["pci"][out[0]]["parent"] is not None:
        out.insert(0, hw["pci"][out[0]]["parent"])
    return out


def complex_of(hw: dict[str, Any], address: str) -> str:
    complex_: str = hw["pci"][chain(hw, address)[0]]["complex"]
    return complex_


def sysfs_path(hw: dict[str, Any], address: str) -> str:
    """devices/pci0000:00/<root port>/.../<address>, relative to the sysfs root."""
    return join("devices", complex_of(hw, address), *chain(hw, address))


def level(hw: dict[str, Any], a: str, b: str) -> str:
    """nvidia-smi's word for the path between two PCI functions (NVML's topology levels)."""
    if a[:-1] == b[:-1]:  # functions of one device
        return "PIX"
    above_a, above_b = chain(hw, a)[:-1], chain(hw, b)[:-1]
    shared = [x for x, y in zip(above_a, above_b, strict=False) if x == y]
    if shared and hw["pci"][shared[-1]]["kind"] != "root":
        # below one switch: PIX when both hang off its downstream ports directly, PXB through more switches
        return "PIX" if len(above_a) == len(above_b) == len(shared) + 1 else "PXB"
    if shared:
        return "PHB"
    ca, cb = complex_of(hw, a), complex_of(hw, b)
    if ca == cb:
        return "PHB"
    return "NODE" if hw["complexes"][ca] == hw["complexes"][cb] else "SYS"


def gpus(hw: dict[str, Any]) -> list[str]:
    return sorted(a for a, d in hw["pci"].items() if d["kind"] == "gpu")


# --- sysfs ----------------------------------------------------------------------------------------------------------


def _symlink(path: str, target: str) -> None:
    if os.path.islink(path):
        if os.readlink(path) == target:
            return
        os.unlink(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def render(root: str, hw: dict[str, Any]) -> None:
    """The PCI folders, their bus links and the IOMMU groups (netdevs link themselves, see Host.add_physical)."""
    import shutil

    groups = join(root, "kernel", "iommu_groups")
    if os.path.isdir(groups):
        shutil.rmtree(groups)
    os.makedirs(groups)
    for index, address in enumerate(sorted(hw["pci"])):
        path = sysfs_path(hw, address)
        os.makedirs(join(root, path), exist_ok=True)
        _symlink(join(root, "bus", "pci", "devices", address), join("..", "..", "..", path))
        if hw["iommu"] is not None:
            group = join(groups, str(index))
            _write(join(group, "type"), f"{hw['iommu']}\n")
            _symlink(join(group, "devices", address), join("..", "..", "..", "..", path))


# --- lspci -vvv -----------------------------------------------------------------------------------------------------

_TITLES = {
    "root": "PCI bridge: Intel Corporation Device 352a (rev 04)",
    "upstream": "PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)",
    "downstream": "PCI bridge: Broadcom / LSI PEX890xx PCIe Gen 5 Switch (rev b0)",
    "nic": "Ethernet controller: Mellanox Technologies MT2910 Family [ConnectX-7]",
    "gpu": f"3D controller: NVIDIA Corporation {GPU_NAME} (rev a1)",
}
_PORT_TYPES = {"root": "Root Port (Slot+)", "upstream": "Upstream Port", "downstream": "Downstream Port (Slot+)",
               "nic": "Endpoint", "gpu": "Endpoint"}
_DRIVERS = {"root": "pcieport", "upstream": "pcieport", "downstream": "pcieport", "nic": "mlx5_core",
            "gpu": "nvidia"}


def _gts(text: str) -> float:
    return float(text.removesuffix("GT/s"))


def _compare(kind: str, have: float, cap: float) -> str:
    """pciutils 3.8+: nothing when equal, "(downgraded)" below capability except on ports that face a slot (root
    and downstream ports), where a slower link is the far end's doing."""
    if have > cap:
        return " (overdriven)"
    if have == cap or kind in ("root", "downstream"):
        return ""
    return " (downgraded)"


def lspci_block(hw: dict[str, Any], address: str, *, domain: bool, verbose: int, privileged: bool) -> str:
    dev = hw["pci"][address]
    kind = dev["kind"]
    shown = address if domain else address[5:]
    lines = [f"{shown} {_TITLES[kind]}"]
    if verbose:
        lines.append("\tSubsystem: Device 0000")
        lines.append("\tControl: I/O- Mem+ BusMaster+ SpecCycle- MemWINV- VGASnoop- ParErr+ Stepping- SERR+ "
                     "FastB2B- DisINTx+")
        if kind == "gpu":
            lines.append("\tRegion 0: Memory at 6a000000000 (64-bit, prefetchable) [size=64M]")
            lines.append(f"\tRegion 1: Memory at 68000000000 (64-bit, prefetchable) [size={dev['bar1_mib'] // 1024}G]"
                         if dev["bar1_mib"] >= 1024 else
                         f"\tRegion 1: Memory at d0000000 (64-bit, prefetchable) [size={dev['bar1_mib']}M]")
        if not privileged:
            lines.append("\tCapabilities: <access denied>")
        elif verbose >= 2:
            cap_speed, cap_width = dev["cap"]
            sta_speed, sta_width = dev["sta"]
            lines += [
                f"\tCapabilities: [60] Express (v2) {_PORT_TYPES[kind]}, MSI 00",
                "\t\tDevCap:\tMaxPayload 512 bytes, PhantFunc 0, Latency L0s unlimited, L1 unlimited",
                f"\t\tLnkCap:\tPort #0, Speed {cap_speed}, Width x{cap_width}, ASPM not supported",
                "\t\t\tClockPM- Surprise- LLActRep- BwNot- ASPMOptComp+",
                "\t\tLnkCtl:\tASPM Disabled; RCB 64 bytes, Disabled- CommClk+",
                "\t\t\tExtSynch- ClockPM- AutWidDis- BWInt- AutBWInt-",
                f"\t\tLnkSta:\tSpeed {sta_speed}{_compare(kind, _gts(sta_speed), _gts(cap_speed))}, "
                f"Width x{sta_width}{_compare(kind, sta_width, cap_width)}",
                "\t\t\tTrErr- Train- SlotClk+ DLActive+ BWMgmt- ABWMgmt-",
                f"\t\tLnkCap2: Supported Link Speeds: 2.5-{cap_speed}, Crosslink- Retimer+ 2Retimers+ DRS-",
                "\t\tLnkSta2: Current De-emphasis Level: -6dB, EqualizationComplete+ EqualizationPhase1+",
            ]
            if dev["acs"] is not None:
                cap = " ".join(f"{flag}+" for flag in ACS_FLAGS)
                ctl = " ".join(f"{flag}{'+' if dev['acs'][flag] else '-'}" for flag in ACS_FLAGS)
                lines += ["\tCapabilities: [1c0 v1] Access Control Services", f"\t\tACSCap:\t{cap}",
                          f"\t\tACSCtl:\t{ctl}"]
        lines.append(f"\tKernel driver in use: {_DRIVERS[kind]}")
    return "\n".join(lines) + "\n"
