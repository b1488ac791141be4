"""NVIDIA Cumulus Linux 5.14 (NVUE): the intent's services section as part of the NVUE document, and the raw
`nv set` / `nv unset` lines applied to it.

Paths, as Cumulus 5.14 spells them (NVUE command reference, which names the 5.15 renames):
- NTP `service ntp <vrf> server <host> iburst on` ("In Cumulus Linux 5.14 and earlier, this command is nv set
  service ntp <vrf-id>"; 5.15 moves it to `system ntp`),
- DNS `service dns <vrf> server <address>` and `service dns <vrf> search <domain>` (5.15: `system dns`). The
  switch's own domain (`system dns domain`) is documented from 5.15 only, so 5.14 gets the search list alone.
- syslog `system syslog server <host> vrf <vrf>` (5.13 moved remote syslog from `service syslog <vrf>` to
  `system syslog`; the Cumulus 5.13 Syslog page lists VRF as a per-server setting).
  TODO(confirm on 5.14): the name `vrf` of that per-server setting.
- the banner `system message pre-login "<text>"` (NVUE's `system message pre-login` / `post-login`, as the NVOS
  25.02 user manual documents them; TODO(confirm on Cumulus 5.14): the same object). The lines are joined by
  spaces into one value: no NVUE reference gives a line-break form for it, and a quoted value spanning lines
  would break the one-command-per-line nv-set file (rocefab's YAML printer refuses multi-line strings too).
The VRF is `mgmt` when eth0 has a management address, else `default`.

Not rendered on Cumulus, on purpose:
- SNMP location and contact: NVUE keeps them in `service snmp-server` beside the communities, and a replace
  takes that object whole from the candidate; rendering the location would drop the device's communities.
- TACACS+ and RADIUS: NVUE holds the servers under `system aaa` with their secrets, and `system aaa` is also the
  login accounts, which the deploy carries from the device whole; a candidate with `system aaa` would replace
  the accounts, and a server without its secret is refused.

Raw lines go last: each `nv set <path> <value>` sets the leaf at <path>, each `nv unset <path>` removes it, in
order, after everything rocefab sets. The last word of an `nv set` line is taken as a value; an identifier
(an address, an interface) is written with a setting after it (`nv set service ntp mgmt server 192.0.2.1 iburst
on`), as NVUE's schema is not known here.
"""

from __future__ import annotations

import shlex
from typing import Any

from rocefab.renderers.services import SiteServices

Tree = dict[str, Any]
ON = "on"


def services_tree(services: SiteServices | None, vrf: str) -> tuple[Tree, Tree]:
    """The `service` and `system` subtrees the services add: ({} , {}) without a services section."""
    if services is None:
        return {}, {}
    service: Tree = {}
    if services.ntp_servers:
        service["ntp"] = {vrf: {"server": {h: {"iburst": ON} for h in services.ntp_servers}}}
    dns: Tree = {}
    if services.dns_search:
        dns["search"] = {d: {} for d in services.dns_search}
    if services.dns_servers:
        dns["server"] = {a: {} for a in services.dns_servers}
    if dns:
        service["dns"] = {vrf: dns}
    system: Tree = {}
    if services.banner:
        system["message"] = {"pre-login": " ".join(line for line in services.banner if line)}
    if services.syslog_servers:
        system["syslog"] = {"server": {h: {"vrf": vrf} for h in services.syslog_servers}}
    return service, system


def apply_raw(doc: Tree, lines: tuple[str, ...]) -> Tree:
    """`doc` with the raw lines applied in order (a copy where they change it; `doc` itself is not changed)."""
    if not lines:
        return doc
    result: Tree = _copy(doc)
    for line in lines:
        words = shlex.split(line)
        verb, path = words[1], words[2:]
        if verb == "set":
            *keys, value = path
            node = result
            for key in keys[:-1]:
                child = node.get(key)
                node[key] = child = child if isinstance(child, dict) else {}
                node = child
            node[keys[-1]] = value
        else:
            _unset(result, path)
    return result


def _unset(tree: Tree, path: list[str]) -> None:
    node = tree
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            return
        node = child
    node.pop(path[-1], None)


def _copy(tree: Tree) -> Tree:
    return {k: _copy(v) if isinstance(v, dict) else v for k, v in tree.items()}
