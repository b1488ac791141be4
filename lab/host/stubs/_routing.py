"""IPv4 of the fake host (see _state.py): addresses, the static routes of every table, and policy rules, as
the kernel keeps them (fib, fib_rules.c); a mixin of `_state.Host`."""

from __future__ import annotations

from _common import Fail  # type: ignore[import-not-found]

# Not `from typing import TYPE_CHECKING`: typing pulls in re, collections, enum and contextlib, 8 ms of every
# standalone stub call (mypy treats any name TYPE_CHECKING as true).
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import Any

# routing tables by name, as iproute2 names them without an /etc/iproute2/rt_tables of its own
RT_TABLE_DEFAULT, RT_TABLE_MAIN, RT_TABLE_LOCAL = 253, 254, 255
TABLE_NAMES = {RT_TABLE_DEFAULT: "default", RT_TABLE_MAIN: "main", RT_TABLE_LOCAL: "local"}


def ip_interface(text: str) -> object:
    import ipaddress  # here: only the commands that need it pay for it

    return ipaddress.IPv4Interface(text)


def default_rules() -> list[dict[str, Any]]:
    """fib4_rules_init: `0: from all lookup local`, `32766: from all lookup main`, `32767: from all lookup default`."""
    return [{"pref": pref, "src": None, "src_len": 0, "table": table}
            for pref, table in ((0, RT_TABLE_LOCAL), (32766, RT_TABLE_MAIN), (32767, RT_TABLE_DEFAULT))]


def table_name(table: int) -> str:
    """rtnl_rttable_n2a"""
    return TABLE_NAMES.get(table, str(table))


class Routing:
    """Addresses, routes and rules; `Host` gives the state and the netdevs."""

    state: dict[str, Any]

    if TYPE_CHECKING:  # what Host provides
        @property
        def netdevs(self) -> dict[str, dict[str, Any]]: ...

        def exists(self, name: str) -> bool: ...

        def dev(self, name: str) -> dict[str, Any]: ...

        def names_by_index(self) -> list[str]: ...

    # --- IPv4 -----------------------------------------------------------------------------------------------------

    def add_address(self, name: str, cidr: str) -> None:
        iface = ip_interface(cidr)
        addrs = self.dev(name)["addrs"]
        if any(ip_interface(a).ip == iface.ip for a in addrs):  # type: ignore[attr-defined]
            raise Fail("Error: ipv4: Address already assigned.", 2)
        addrs.append(iface.with_prefixlen)  # type: ignore[attr-defined]

    def flush_addresses(self, name: str) -> None:
        self.dev(name)["addrs"] = []

    def delete_address(self, name: str, cidr: str) -> None:
        cidr = ip_interface(cidr).with_prefixlen  # type: ignore[attr-defined]
        addrs = self.dev(name)["addrs"]
        if cidr not in addrs:
            raise Fail("RTNETLINK answers: Cannot assign requested address", 2)
        addrs.remove(cidr)

    def connected(self) -> list[dict[str, Any]]:
        """Kernel prefix routes: one per address of an up device."""
        out = []
        for name in self.names_by_index():
            dev = self.netdevs[name]
            if dev["up"]:
                for a in dev["addrs"]:
                    iface = ip_interface(a)
                    out.append({"dst": str(iface.network), "dev": name, "src": str(iface.ip)})  # type: ignore[attr-defined]
        return out

    def routes(self, table: int) -> list[dict[str, Any]]:
        """The static routes of one table (routes saved before tables were modelled are main-table routes)."""
        return [r for r in self.state["routes"] if r.get("table", RT_TABLE_MAIN) == table]

    def replace_route(self, dst: str, via: str | None, dev: str, *, replace: bool,
                      table: int = RT_TABLE_MAIN, src: str | None = None) -> None:
        """`ip route add/replace`; the gateway check is the same in every table (fib_check_nh_v4_gw falls back to a
        full lookup, which finds the connected route of the main table)."""
        import ipaddress

        try:
            net = ipaddress.IPv4Network(dst)
        except ValueError:
            raise Fail("Error: Invalid prefix for given prefix length.", 2) from None
        if via is not None:
            gw = ipaddress.IPv4Address(via)
            if not any(c["dev"] == dev and gw in ipaddress.IPv4Network(c["dst"]) for c in self.connected()):
                raise Fail("Error: Nexthop has invalid gateway.", 2)
        elif not self.dev(dev)["up"]:
            raise Fail("Error: Nexthop device is not up.", 2)
        if src is not None and not any(c["src"] == src for c in self.connected()):
            raise Fail("Error: Invalid prefsrc address.", 2)  # fib_create_info: a preferred source must be local
        routes = self.state["routes"]
        same = [r for r in self.routes(table) if r["dst"] == str(net)]
        if same and not replace:
            raise Fail("RTNETLINK answers: File exists", 2)
        for r in same:
            routes.remove(r)
        routes.append({"dst": str(net), "via": via, "dev": dev, "table": table, "src": src})

    def delete_route(self, dst: str, table: int = RT_TABLE_MAIN) -> None:
        import ipaddress

        routes = self.state["routes"]
        net = str(ipaddress.IPv4Network(dst, strict=False))
        same = [r for r in self.routes(table) if r["dst"] == net]
        if not same:
            raise Fail("RTNETLINK answers: No such process", 2)
        routes.remove(same[0])

    def prune_routes(self) -> None:
        """fib_disable_ip: routes through a device that is gone, down, or has no IPv4 address left are flushed, in
        every table (fib_sync_down_dev walks them all)."""
        self.state["routes"] = [
            r for r in self.state["routes"]
            if self.exists(r["dev"]) and self.netdevs[r["dev"]]["up"] and self.netdevs[r["dev"]]["addrs"]
        ]

    # --- policy routing (fib_rules.c, fib4_rules) ---------------------------------------------------------------

    @property
    def rules(self) -> list[dict[str, Any]]:
        """The IPv4 rules in the kernel's order: {"pref", "src" (None for all), "src_len", "table"}."""
        rules: list[dict[str, Any]] = self.state.setdefault("rules", default_rules())
        return rules

    def default_pref(self) -> int:
        """fib_default_rule_pref: one below the preference of the second rule (the first is `0: ... lookup local`),
        so 32765, 32764, ... while the defaults are in place; 0 when that rule has preference 0 or is missing."""
        rules = self.rules
        if len(rules) >= 2 and rules[1]["pref"]:
            return int(rules[1]["pref"]) - 1
        return 0

    def add_rule(self, src: str | None, src_len: int, table: int, pref: int | None) -> None:
        """fib_nl_newrule with NLM_F_EXCL (as `ip rule add` sends it): an identical rule at the same preference
        exists already -> EEXIST; without a preference the new rule gets the default one, so adding the same
        rule twice makes two rules."""
        rule = {"pref": self.default_pref() if pref is None else pref, "src": src, "src_len": src_len,
                "table": table}
        rules = self.rules
        if rule in rules:
            raise Fail("RTNETLINK answers: File exists", 2)
        at = 0
        for i, r in enumerate(rules):  # after every rule of lower or equal preference
            if r["pref"] > rule["pref"]:
                break
            at = i + 1
        rules.insert(at, rule)

    def delete_rule(self, src: str | None, src_len: int, table: int | None, pref: int | None) -> None:
        """fib_nl_delrule: the first rule (in order) that matches what was given; a source of length 0 (`from all`,
        or none) matches any source, no table any table, no preference any preference."""
        rules = self.rules
        for r in rules:
            if ((pref is None or r["pref"] == pref) and (table is None or r["table"] == table)
                    and (src_len == 0 or (r["src_len"] == src_len and r["src"] == src))):
                rules.remove(r)
                return
        raise Fail("RTNETLINK answers: No such file or directory", 2)
