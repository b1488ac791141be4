"""The fake Linux host behind the tool stubs in this folder (`ip`, `ethtool`, `mlnx_qos`, `cma_roce_tos`,
`cma_roce_mode`): a small model of the kernel state the rendered host script reads and changes.

Everything lives under the fake sysfs root given by $ROCEFAB_SYSFS_ROOT, so a script's direct file reads see
exactly what the stubs changed:

    class/net/<if>/{mtu,ifindex,address,operstate,flags}    kept current by the stubs
    class/net/<if>/speed     Mb/s while the link is up; a failing read while it is down, as the kernel's EINVAL
    class/net/<if>/master -> ../<bond>, upper_<bond>; class/net/<bond>/lower_<if>
    class/net/<bond>/bonding/{mode,lacp_rate,xmit_hash_policy,miimon,slaves,mii_status}   real formats
    class/net/<if>/ecn/roce_{np,rp}/enable/<0-7>, roce_np/{cnp_dscp,cnp_802p_prio}        plain files
    class/net/<if>/device/infiniband/<rdma device>           device -> the PCI function (hardware: _hardware.py)
    class/infiniband/<dev>/ports/1/{gids,gid_attrs/types,gid_attrs/ndevs}/<index>, link_layer, state
    class/infiniband/<dev>/tc/1/traffic_class   mlx5's: empty until written, then "Global tclass=N" from the next
                                stub call on (a script reading straight after its own write sees the plain number)
    .stubstate/state.marshal    private kernel state (admin state, carrier, pause, rings, DCB, addresses, routes
                                of every table, policy rules, rdma_cm defaults); only the stubs touch it, atomically,
                                under .stubstate/lock.
                                `fakehost.state(root)` loads it for a look.
    .stubstate/roce_lag.json    fixture: {"mlx5_bond_0": ["ens1f0np0", "ens1f1np1"]}, the two PF netdevs of a
                                dual-port card and the RDMA device its RoCE LAG registers

Kernel behaviours modelled (bond_main.c, rtnetlink, fib, mlx5 lag): a port that is up cannot be enslaved; enslaving
sets the port's MTU to the bond's and opens it; releasing closes it and restores its MTU; a bond's MTU change goes to
its ports; a device that goes down, or loses its last IPv4 address, loses its routes (in every table); a route's
gateway must be on a connected subnet of an up device; policy rules (fib_rules.c) start as the three defaults, keep
the kernel's order (by preference, a new rule after those of equal preference), take the kernel's default preference
when added without one, and stay when addresses or devices go; every PF has its own RDMA device (mlx5_N) from boot,
but when both PFs of a declared card are the only ports of one bond in mode 1, 2 or 4 the per-port RDMA devices go
away and the LAG device appears (fresh rdma_cm defaults), and the reverse.

The model is split by subject: _common.py (errors, files), _routing.py (IPv4), _rdma.py (RDMA devices), and
here the netdevs, their sysfs, the locked session and the cma tools; _state re-exports what the stubs use.

Speed: every stub call is a fresh interpreter, and the scripts make a few dozen calls per run, so this module keeps
the read path to builtins (os, marshal): pathlib and json would pull in re/enum and double a call's start-up time.
"""

# ruff: noqa: PTH103, PTH105, PTH108, PTH112, PTH113, PTH114, PTH119, PTH123, PTH208

from __future__ import annotations

import fcntl
import marshal
import os
import sys

# F401: the stubs import Fail, not_modelled, read, run and the routing tables' names from here
from _common import (  # type: ignore[import-not-found]  # noqa: F401
    Fail,
    canonical,
    join,
    make_unreadable,
    not_modelled,
    read,
    remove,
    run,
    symlink_atomic,
    sysfs_root,
    write_atomic,
)
from _rdma import Rdma  # type: ignore[import-not-found]
from _routing import RT_TABLE_MAIN, TABLE_NAMES, Routing, default_rules, table_name  # type: ignore[import-not-found]  # noqa: F401

# Not `from typing import TYPE_CHECKING`: typing pulls in re, collections, enum and contextlib, 8 ms of every
# standalone stub call (mypy treats any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

BOND_MODES = ["balance-rr", "active-backup", "balance-xor", "broadcast", "802.3ad", "balance-tlb", "balance-alb"]
XMIT_HASH_POLICIES = ["layer2", "layer3+4", "layer2+3", "encap2+3", "encap3+4", "vlan+srcmac"]
LACP_RATES = ["slow", "fast"]
BOND_MAX_MTU = 65535
MIN_MTU = 68
# IFF_* bits as in /sys/class/net/<if>/flags
IFF_UP, IFF_BROADCAST, IFF_MASTER, IFF_SLAVE, IFF_MULTICAST = 0x1, 0x2, 0x400, 0x800, 0x1000


# --- the host -------------------------------------------------------------------------------------------------------


# mypy sees the siblings as untyped top-level imports (the stubs' folder is their sys.path[0], not mypy's); it
# checks _routing.py and _rdma.py on their own.
class Host(Routing, Rdma):  # type: ignore[misc]
    def __init__(self, root: str) -> None:
        self.root = root
        self.net = join(root, "class", "net")
        self.ib = join(root, "class", "infiniband")
        self.stub = join(root, ".stubstate")
        with open(join(self.stub, "state.marshal"), "rb") as f:
            self._saved = f.read()
        self.state: dict[str, Any] = marshal.loads(self._saved)
        self._lag: dict[str, list[str]] | None = None

    @property
    def lag(self) -> dict[str, list[str]]:
        """The fixture's roce_lag.json, parsed again only when the file changed (json costs start-up time)."""
        if self._lag is None:
            path = join(self.stub, "roce_lag.json")
            text = read(path) if os.path.isfile(path) else "{}"
            cached = self.state.get("roce_lag_cache")
            if cached is not None and cached[0] == text:
                self._lag = cached[1]
            else:
                import json  # here: only when roce_lag.json is new or changed

                self._lag = json.loads(text)
                self.state["roce_lag_cache"] = [text, self._lag]
        return self._lag

    @classmethod
    def open(cls, *, write: bool) -> _Session:
        """The host of $ROCEFAB_SYSFS_ROOT, locked; with write=True derived files and state are saved at the end,
        also after a failure: whatever was applied before it stays applied, as in the kernel."""
        return _Session(cls, sysfs_root(), write)

    @classmethod
    def create(cls, root: str, lag: dict[str, list[str]]) -> Host:
        import json

        for folder in (".stubstate", join("class", "net"), join("class", "infiniband")):
            os.makedirs(join(root, folder))
        state = {"next_ifindex": 2, "netdevs": {}, "routes": [], "rules": default_rules(), "rdma_cm": {}}
        with open(join(root, ".stubstate", "state.marshal"), "wb") as f:
            f.write(canonical(state))
        write_atomic(join(root, ".stubstate", "lock"), "")
        write_atomic(join(root, ".stubstate", "roce_lag.json"), json.dumps(lag, indent=1, sort_keys=True) + "\n")
        return cls(root)

    def commit(self) -> None:
        self.prune_routes()
        for name in list(self.netdevs):
            if self.exists(name):
                self.render(name)
        self.sync_rdma()
        data = canonical(self.state)
        if data != self._saved:
            tmp = join(self.stub, f".state.{os.getpid()}.tmp")
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, join(self.stub, "state.marshal"))
            self._saved = data

    # --- netdevs --------------------------------------------------------------------------------------------------

    @property
    def netdevs(self) -> dict[str, dict[str, Any]]:
        netdevs: dict[str, dict[str, Any]] = self.state["netdevs"]
        return netdevs

    def exists(self, name: str) -> bool:
        return name in self.netdevs and os.path.isdir(join(self.net, name))

    def dev(self, name: str) -> dict[str, Any]:
        if not self.exists(name):
            raise KeyError(name)
        return self.netdevs[name]

    def names_by_index(self) -> list[str]:
        return sorted((n for n in self.netdevs if self.exists(n)), key=lambda n: self.netdevs[n]["ifindex"])

    def _new_ifindex(self) -> int:
        index: int = self.state["next_ifindex"]
        self.state["next_ifindex"] = index + 1
        return index

    def add_physical(self, name: str, *, mac: str, rdma_device: str, mtu: int = 1500, max_mtu: int = 9978,
                     up: bool = True, pause: tuple[bool, bool, bool] = (False, True, True),
                     rings: tuple[int, int] = (1024, 1024), ring_max: int = 8192, trust: str = "pcp",
                     ecn_enabled: bool = False, cnp_dscp: int = 48, cnp_802p_prio: int = 6,
                     speed_mbps: int = 400000, device: str | None = None) -> None:
        """A ConnectX PF netdev with the MLNX_OFED/DOCA ECN sysfs, as a freshly booted host shows it; its link
        comes up at `speed_mbps` (what the cable and the far end negotiate). `device` is the folder of its PCI
        function (devices/pci.../<address>, see _hardware.py), which `device` links to as in the kernel; without
        one, `device` is a plain folder."""
        self.netdevs[name] = {
            "kind": "physical", "ifindex": self._new_ifindex(), "mac": mac, "up": up, "cable": True,
            "speed": speed_mbps,
            "max_mtu": max_mtu, "master": None, "orig_mtu": None, "addrs": [], "rdma_device": rdma_device,
            "pause": {"autoneg": pause[0], "rx": pause[1], "tx": pause[2]},
            "rings": {"rx": rings[0], "tx": rings[1], "rx_max": ring_max, "tx_max": ring_max},
            "dcb": {"trust": trust, "pfc": [0] * 8, "os_controlled": False, "cable_len": 7,
                    "prio_tc": [1, 0, 2, 3, 4, 5, 6, 7],
                    # the IEEE DCB app table's DSCP entries, newest first, as the kernel lists them
                    "dscp_apps": [[d, d >> 3] for d in range(63, -1, -1)] if trust == "dscp" else []},
        }
        d = join(self.net, name)
        write_atomic(join(d, "mtu"), f"{mtu}\n")
        for point in ("roce_np", "roce_rp"):
            for prio in range(8):
                write_atomic(join(d, "ecn", point, "enable", str(prio)), f"{int(ecn_enabled)}\n")
        write_atomic(join(d, "ecn", "roce_np", "cnp_dscp"), f"{cnp_dscp}\n")
        write_atomic(join(d, "ecn", "roce_np", "cnp_802p_prio"), f"{cnp_802p_prio}\n")
        if device is None:
            os.makedirs(join(d, "device", "infiniband"), exist_ok=True)
        else:
            os.makedirs(join(self.root, device, "infiniband"), exist_ok=True)
            symlink_atomic(join(d, "device"), join("..", "..", "..", device))

    def add_bond(self, name: str, *, mode: int, miimon: int, lacp_rate: int, xmit_hash_policy: int) -> None:
        if name in self.netdevs or os.path.lexists(join(self.net, name)):
            raise Fail("RTNETLINK answers: File exists", 2)
        index = self._new_ifindex()
        self.netdevs[name] = {
            "kind": "bond", "ifindex": index, "mac": f"be:ef:00:00:{index >> 8 & 0xFF:02x}:{index & 0xFF:02x}",
            "up": False, "master": None, "addrs": [], "slaves": [], "mode": mode, "miimon": miimon,
            "lacp_rate": lacp_rate, "xmit_hash_policy": xmit_hash_policy,
        }
        write_atomic(join(self.net, name, "mtu"), "1500\n")

    def delete(self, name: str) -> None:
        dev = self.dev(name)
        if dev["kind"] != "bond":
            raise Fail("RTNETLINK answers: Operation not supported", 2)
        for port in list(dev["slaves"]):
            self.release(port)
        del self.netdevs[name]
        remove(join(self.net, name))

    def mtu(self, name: str) -> int:
        return int(read(join(self.net, name, "mtu")))

    def set_mtu(self, name: str, mtu: int) -> None:
        dev = self.dev(name)
        if mtu < MIN_MTU:
            raise Fail("Error: mtu less than device minimum.", 2)
        ports = dev["slaves"] if dev["kind"] == "bond" else []
        limit = BOND_MAX_MTU if dev["kind"] == "bond" else dev["max_mtu"]
        if mtu > min([limit] + [self.netdevs[p]["max_mtu"] for p in ports]):
            raise Fail("Error: mtu greater than device maximum.", 2)
        for port in ports:  # bond_change_mtu: every port follows the bond
            write_atomic(join(self.net, port, "mtu"), f"{mtu}\n")
        write_atomic(join(self.net, name, "mtu"), f"{mtu}\n")

    def set_up(self, name: str, up: bool) -> None:
        self.dev(name)["up"] = up

    def carrier(self, name: str) -> bool:
        dev = self.dev(name)
        if not dev["up"]:
            return False
        if dev["kind"] == "bond":
            return any(self.carrier(p) for p in dev["slaves"])
        return bool(dev["cable"])

    def enslave(self, port: str, bond: str) -> None:
        dev, master = self.dev(port), self.dev(bond)
        if master["kind"] != "bond":
            raise Fail("RTNETLINK answers: Operation not supported", 2)
        if dev["master"] == bond:
            return  # do_set_master: already the upper device
        if dev["master"] is not None:
            self.release(port)
        if dev["kind"] == "bond":
            raise not_modelled("ip", ["nested bonds"])
        if dev["up"]:
            raise Fail("Error: Device can not be enslaved while up.", 2)
        bond_mtu = self.mtu(bond)
        if bond_mtu > dev["max_mtu"]:  # bond_enslave: dev_set_mtu failed, no extack message
            raise Fail("RTNETLINK answers: Invalid argument", 2)
        dev["orig_mtu"] = self.mtu(port)
        write_atomic(join(self.net, port, "mtu"), f"{bond_mtu}\n")
        if not master["slaves"]:
            master["mac"] = dev["mac"]  # a bond takes the address of its first port
        master["slaves"].append(port)
        dev["master"] = bond
        dev["up"] = True  # bond_enslave opens the port

    def release(self, port: str) -> None:
        dev = self.dev(port)
        bond = dev["master"]
        if bond is None:
            return
        self.netdevs[bond]["slaves"].remove(port)
        dev["master"] = None
        dev["up"] = False  # __bond_release_one closes the port ...
        if dev["orig_mtu"] is not None:  # ... and gives it its MTU back
            write_atomic(join(self.net, port, "mtu"), f"{dev['orig_mtu']}\n")
        dev["orig_mtu"] = None

    # --- derived sysfs --------------------------------------------------------------------------------------------

    def flags(self, name: str) -> int:
        dev = self.netdevs[name]
        flags = IFF_BROADCAST | IFF_MULTICAST
        flags |= IFF_UP if dev["up"] else 0
        flags |= IFF_MASTER if dev["kind"] == "bond" else 0
        flags |= IFF_SLAVE if dev["master"] else 0
        return flags

    def render(self, name: str) -> None:
        dev, d = self.netdevs[name], join(self.net, name)
        write_atomic(join(d, "ifindex"), f"{dev['ifindex']}\n")
        write_atomic(join(d, "address"), f"{dev['mac']}\n")
        write_atomic(join(d, "flags"), f"0x{self.flags(name):x}\n")
        write_atomic(join(d, "operstate"), "up\n" if self.carrier(name) else "down\n")
        if dev["kind"] == "physical":
            speed = join(d, "speed")
            if self.carrier(name):
                if os.path.isdir(speed):
                    remove(speed)
                write_atomic(speed, f"{dev['speed']}\n")
            else:
                make_unreadable(speed)
        links = {}
        if dev["master"]:
            links["master"] = links[f"upper_{dev['master']}"] = f"../{dev['master']}"
        for port in dev.get("slaves", []):
            links[f"lower_{port}"] = f"../{port}"
        for entry in os.listdir(d):
            if os.path.islink(join(d, entry)) and entry not in links and entry != "device":  # device: its PCI function
                os.unlink(join(d, entry))
        for link, target in links.items():
            symlink_atomic(join(d, link), target)
        if dev["kind"] == "bond":
            b = join(d, "bonding")
            write_atomic(join(b, "mode"), f"{BOND_MODES[dev['mode']]} {dev['mode']}\n")
            write_atomic(join(b, "lacp_rate"), f"{LACP_RATES[dev['lacp_rate']]} {dev['lacp_rate']}\n")
            policy = dev["xmit_hash_policy"]
            write_atomic(join(b, "xmit_hash_policy"), f"{XMIT_HASH_POLICIES[policy]} {policy}\n")
            write_atomic(join(b, "miimon"), f"{dev['miimon']}\n")
            write_atomic(join(b, "slaves"), " ".join(dev["slaves"]) + "\n" if dev["slaves"] else "")
            write_atomic(join(b, "mii_status"), "up\n" if self.carrier(name) else "down\n")


class _Session:
    """`with Host.open(write=...) as host:` (a class, not contextlib: one import less per stub call)."""

    def __init__(self, cls: type[Host], root: str, write: bool) -> None:
        self.cls, self.root, self.write = cls, root, write

    def __enter__(self) -> Host:
        self.lock = open(join(self.root, ".stubstate", "lock"))  # held until __exit__
        fcntl.flock(self.lock, fcntl.LOCK_EX if self.write else fcntl.LOCK_SH)
        self.host = self.cls(self.root)
        return self.host

    def __exit__(self, *exc: object) -> None:
        try:
            if self.write:
                self.host.commit()
            self.host.show_tclasses()
        finally:
            self.lock.close()


# --- mlnx-tools cma_roce_tos / cma_roce_mode ------------------------------------------------------------------------


def bash_int(text: str) -> int | None:
    """What `[ X -ge 0 ]` accepts in bash (decimal, optional sign), else None with bash's complaint on stderr."""
    body = text[1:] if text[:1] in "+-" else text
    if body.isdigit():
        return int(text)
    tool = os.path.basename(sys.argv[0])
    print(f"/usr/sbin/{tool}: line 104: [: {text}: integer expression expected", file=sys.stderr)
    return None


def cma_tool(argv: list[str], letter: str, usage: str, change: object) -> dict[str, Any] | None:
    """The shared shape of cma_roce_tos / cma_roce_mode: `getopts "d:<letter>:hp:"`, then mkdir of the configfs
    device entry (fails for a name that is no RDMA device), then an optional write, then `cat` of the value.
    `change(entry, value_text)` applies the -<letter> value (or ignores it). Returns the device's rdma_cm entry to
    print, or None after -h."""
    tool = os.path.basename(sys.argv[0])
    device, port, value = "mlx5_0", "1", None
    args = list(argv)
    while args and args[0].startswith("-") and len(args[0]) >= 2:
        opt = args.pop(0)
        flag, attached = opt[1], opt[2:]
        if flag == "h":
            print(usage)
            return None
        if flag in ("d", "p", letter):
            if not attached and not args:
                print(f"{tool}: option requires an argument -- {flag}", file=sys.stderr)
                continue
            arg = attached or args.pop(0)
            if flag == "d":
                device = arg
            elif flag == "p":
                port = arg
            else:
                value = arg
        else:
            print(f"{tool}: illegal option -- {flag}", file=sys.stderr)
    if os.environ.get("ROCEFAB_LAB_UID", "0") != "0":  # the fake host's login user (lab/host/linux_host.py)
        raise Fail("You must be root to run this", 1, stdout=True)  # mlnx-tools 5.2 on; older: "you must ..."
    with Host.open(write=value is not None) as host:
        entry: dict[str, Any] | None = host.state["rdma_cm"].get(device)
        if entry is None or not os.path.isdir(join(host.ib, device)):
            print(f"mkdir: cannot create directory '{device}': No such device", file=sys.stderr)
            raise Fail(f"Failed to create configuration for {device}", 1, stdout=True)
        if port != "1":
            raise Fail(f"Device {device} port {port} does not exist", 1, stdout=True)
        if value is not None:
            change(entry, value)  # type: ignore[operator]
        return entry
