"""The RDMA side of the fake host (see _state.py): which RDMA devices exist (a PF's own, or a card's RoCE LAG
device while its two PFs are the only ports of one bond in mode 1, 2 or 4), their GID tables, default traffic
class and firmware attributes; a mixin of `_state.Host`."""

# ruff: noqa: PTH103, PTH120, PTH123, PTH208

from __future__ import annotations

import os

from _common import join, make_unreadable, remove, write_atomic  # type: ignore[import-not-found]

# Not `from typing import TYPE_CHECKING`: typing pulls in re, collections, enum and contextlib, 8 ms of every
# standalone stub call (mypy treats any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

LAG_MODES = (1, 2, 4)  # mlx5 RoCE LAG: active-backup, balance-xor, 802.3ad
GID_TABLE = 8  # entries shown per port (a real mlx5 port has 255)
ZERO_GID = ":".join(["0000"] * 8)


class Rdma:
    """RDMA devices, GIDs, traffic class, firmware; `Host` gives the state, netdevs and folders."""

    state: dict[str, Any]
    net: str
    ib: str

    if TYPE_CHECKING:  # what Host provides
        @property
        def netdevs(self) -> dict[str, dict[str, Any]]: ...

        @property
        def lag(self) -> dict[str, list[str]]: ...

        def exists(self, name: str) -> bool: ...

        def names_by_index(self) -> list[str]: ...

        def carrier(self, name: str) -> bool: ...

    # --- RDMA -----------------------------------------------------------------------------------------------------

    def lag_active(self, ports: list[str]) -> str | None:
        """The bond a card's RoCE LAG is active on: both PFs, and only them, are ports of one bond in mode 1/2/4."""
        if not all(self.exists(p) for p in ports):
            return None
        masters = {self.netdevs[p]["master"] for p in ports}
        if len(masters) != 1 or None in masters:
            return None
        bond = masters.pop()
        dev = self.netdevs[bond]
        return bond if sorted(dev["slaves"]) == sorted(ports) and dev["mode"] in LAG_MODES else None

    def sync_rdma(self) -> None:
        want: dict[str, tuple[str, str]] = {}  # RDMA device -> (netdev of its GIDs, PF whose device/ lists it)
        lagged: set[str] = set()
        for rdma, ports in sorted(self.lag.items()):
            bond = self.lag_active(ports)
            if bond is not None:
                want[rdma] = (bond, ports[0])
                lagged.update(ports)
        for name in self.names_by_index():
            dev = self.netdevs[name]
            if dev["kind"] == "physical" and name not in lagged:
                want[dev["rdma_device"]] = (name, name)
        cm = self.state["rdma_cm"]
        for rdma in sorted(set(cm) | set(os.listdir(self.ib))):
            if rdma not in want or cm.get(rdma, {}).get("ndev") != want[rdma][0]:
                remove(join(self.ib, rdma))  # unregistered: its rdma_cm defaults go with it
                cm.pop(rdma, None)
        for name in self.names_by_index():
            if self.netdevs[name]["kind"] == "physical":
                listed = {r for r, (_, pf) in want.items() if pf == name}
                folder = join(self.net, name, "device", "infiniband")
                for entry in os.listdir(folder):
                    if entry not in listed:
                        remove(join(folder, entry))
                for rdma in listed:
                    os.makedirs(join(folder, rdma), exist_ok=True)
        for rdma, (ndev, _) in sorted(want.items()):
            cm.setdefault(rdma, {"ndev": ndev, "tos": 0, "mode": "RoCE v2"})
            self.render_gids(rdma, ndev)
            self.render_tclass(rdma)
            self.render_firmware(rdma, want[rdma][1])

    def render_firmware(self, rdma: str, pf: str) -> None:
        """fw_ver and board_id as mlx5_ib shows them ("%d.%d.%04d" and the PSID): the firmware of the card whose
        PF lists the device (see _hardware.py; a host built without hardware has neither file)."""
        hw = self.state.get("hw")
        address = hw["netdev_pci"].get(pf) if hw is not None else None
        if hw is None or address is None:
            return
        nic = hw["pci"][address]
        write_atomic(join(self.ib, rdma, "fw_ver"), f"{nic['fw']}\n")
        write_atomic(join(self.ib, rdma, "board_id"), f"{nic['psid']}\n")

    def render_tclass(self, rdma: str) -> None:
        """mlx5's tc/1/traffic_class: empty until set (a new RDMA device starts unset)."""
        path = join(self.ib, rdma, "tc", "1", "traffic_class")
        if not os.access(path, os.F_OK):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            write_atomic(path, "")

    def show_tclasses(self) -> None:
        """A ToS written to tc/1/traffic_class reads back as mlx5 prints it, "Global tclass=N", from the next tool
        call on (every stub call, reading or writing: a plain file cannot change its text at the write itself)."""
        for rdma in os.listdir(self.ib):
            path = join(self.ib, rdma, "tc", "1", "traffic_class")
            try:
                with open(path) as f:
                    text = f.read().strip()
            except OSError:
                continue
            if text.isdigit():
                write_atomic(path, f"Global tclass={int(text)}\n")

    def render_gids(self, rdma: str, ndev: str) -> None:
        port = join(self.ib, rdma, "ports", "1")
        write_atomic(join(port, "link_layer"), "Ethernet\n")
        write_atomic(join(port, "state"), "4: ACTIVE\n" if self.carrier(ndev) else "1: DOWN\n")
        mac = [int(x, 16) for x in self.netdevs[ndev]["mac"].split(":")]
        eui = [mac[0] ^ 2, mac[1], mac[2], 0xFF, 0xFE, mac[3], mac[4], mac[5]]
        link_local = "fe80:0000:0000:0000:" + ":".join(f"{eui[i]:02x}{eui[i + 1]:02x}" for i in range(0, 8, 2))
        entries = [(link_local, "IB/RoCE v1"), (link_local, "RoCE v2")]
        for a in self.netdevs[ndev]["addrs"]:  # IPv4-mapped: ::ffff:a.b.c.d
            b = [int(x) for x in a.split("/")[0].split(".")]
            gid = f"0000:0000:0000:0000:0000:ffff:{b[0]:02x}{b[1]:02x}:{b[2]:02x}{b[3]:02x}"
            entries += [(gid, "IB/RoCE v1"), (gid, "RoCE v2")]
        for i in range(GID_TABLE):
            gid, types, ndevs = (join(port, "gids", str(i)), join(port, "gid_attrs", "types", str(i)),
                                 join(port, "gid_attrs", "ndevs", str(i)))
            if i < len(entries):
                write_atomic(gid, entries[i][0] + "\n")
                write_atomic(types, entries[i][1] + "\n")
                write_atomic(ndevs, ndev + "\n")
            else:  # an empty entry: a zero GID, and its attributes cannot be read
                write_atomic(gid, ZERO_GID + "\n")
                make_unreadable(types)
                make_unreadable(ndevs)
