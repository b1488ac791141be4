"""NX-OS graceful insertion and removal (GIR) as rocefab drives it, and its state as `show system mode` prints it.

Sources: Cisco Nexus 9000 NX-OS System Management Configuration Guide, 10.5(x)/10.6(x), "Configuring Graceful
Insertion and Removal": `system mode maintenance` (configuration mode) enters maintenance mode with the profile NX-OS
generates (every enabled protocol isolated; in BGP, `isolate`), `no system mode maintenance` restores normal mode,
and both ask for confirmation first; "Directly connected routes are not withdrawn or modified" while isolated.
`terminal dont-ask` before them answers the question, as Ansible's cisco.nxos `nxos_gir` module sends them
(tested there against NX-OSv 7.3).

While in maintenance mode the prompt carries `(maint-mode)`, which is why the drain goes over NX-API only (below).

`show system mode` is the guide's command to verify the mode. No verbatim capture of its output was found; the
reader takes the form `System Mode: Normal` / `System Mode: Maintenance` (the words the guide uses for the two
modes; Ansible's module only looks for "normal" in the text) and reports anything else as not understood, never as
normal.
"""

from __future__ import annotations

import re

from rocefab.platforms.maintenance import Maintenance

SHOW_SYSTEM_MODE = "show system mode"
_MODE = re.compile(r"^\s*System Mode\s*:\s*(Normal|Maintenance)\b", re.IGNORECASE | re.MULTILINE)

GIR = Maintenance(
    "terminal dont-ask\nsystem mode maintenance\n",
    "terminal dont-ask\nno system mode maintenance\n",
    "Cisco Nexus 9000 NX-OS System Management Configuration Guide 10.5(x), Configuring Graceful Insertion and "
    "Removal (https://www.cisco.com/c/en/us/td/docs/switches/datacenter/nexus9000/sw/105x/config-guides/"
    "cisco-nexus-9000-series-nx-os-system-management-configuration-guide-release-105x/"
    "m-configuring-graceful-insertion-and-removal-10x.html)",
    keeps_own_routes="GIR isolates BGP but keeps what the switch originates advertised (directly connected routes "
                     "are not withdrawn), so its own prefixes would still draw traffic",
    # In maintenance mode the prompt reads `switch(maint-mode)#` (the guide's examples); netmiko's NX-OS driver
    # (4.x) takes any prompt ending in `)#` for configuration mode, so over SSH it never enters configuration mode
    # to send `no system mode maintenance` and fails to leave it after `system mode maintenance`; NX-API has no
    # prompt. The lab's emulator shows the prompt, and the nxos-ssh drain failing on it is a test.
    transports=("nxapi",),
    transports_note="over SSH, netmiko reads GIR's `(maint-mode)#` prompt as configuration mode and cannot leave "
                    "it: reach the switch over NX-API (transport: nxapi) to drain it",
)


def in_maintenance(text: str) -> bool | None:
    """True in maintenance mode, False in normal mode, None when the answer says neither.

    >>> in_maintenance("System Mode: Maintenance\\n"), in_maintenance("System Mode: Normal\\n"), in_maintenance("")
    (True, False, None)
    """
    found = _MODE.search(text)
    return None if found is None else found.group(1).lower() == "maintenance"
