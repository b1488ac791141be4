"""plan/: the whole plan as JSON Lines, one file per pod, read a record at a time and re-rendered a pod at a time.

A 98,304-GPU plan is some 300 MB of JSON. As one document, a reader must parse all of it before the first switch
(`json.load`), and any change to any device writes all of it again. Here `plan/index.json` holds what is
fabric-wide (source, QoS, VLANs, host profile, operations, services) and lists the parts; each part,
`plan/pod-NN.jsonl` for pod NN and `plan/no-pod.jsonl` for what stands outside any pod (everything in a two-tier
fabric, the super-spines in a three-tier one), holds one object per line: `{"switch": {...}}` for each of its
switches, then `{"host": {...}}` for each host, then `{"link": {...}}` for each link whose first end is its own.
The records are those of `rocefab plan --json`, field for field. A host belongs to the pod of the switch of its
first port; a link to the pod of its first end (a leaf for fabric links, the switch for host links).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from rocefab.renderers.jsontext import dumps_outline, encode_compact
from rocefab.renderers.plan import FabricPlan, Host, Link, Switch

INDEX = "plan/index.json"
KIND = "plan-part"


def part_path(pod: int | None) -> str:
    return "plan/no-pod.jsonl" if pod is None else f"plan/pod-{pod:02d}.jsonl"


@dataclass
class PlanPart:
    pod: int | None
    switches: list[Switch] = field(default_factory=list)
    hosts: list[Host] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)

    @property
    def path(self) -> str:
        return part_path(self.pod)

    @property
    def size(self) -> int:
        """About how many lines of JSON the part's records print: its links, and its devices' ports and NICs."""
        return (len(self.links) + sum(len(sw.ports) for sw in self.switches)
                + sum(len(host.nics) + len(host.bonds) for host in self.hosts))

    @property
    def devices(self) -> list[Switch | Host]:
        return [*self.switches, *self.hosts]

    def write(self, emit: Callable[[str], None]) -> None:
        """The part's lines, given to `emit` a few hundred at a time."""
        lines: list[str] = []
        for kind, records in (("switch", self.switches), ("host", self.hosts), ("link", self.links)):
            for item in records:
                lines.append(f'{{"{kind}":{encode_compact(item)}}}\n')
                if len(lines) >= 512:
                    emit("".join(lines))
                    lines.clear()
        emit("".join(lines))

    def key(self, code: str, device_keys: dict[str, str], links: str) -> str:
        """What the part is made from: the code, its devices' keys (input_keys.py; each covers the device's whole
        record) and its links' digest (input_keys.links_digest of `self.links`)."""
        digest = hashlib.sha256(f"{code}\0{self.path}\0{links}\0".encode())
        for device in self.devices:
            digest.update(f"{device.name}\0{device_keys[device.name]}\0".encode())
        return digest.hexdigest()


def plan_parts(plan: FabricPlan) -> list[PlanPart]:
    """The parts of `plan`, pods in order and the part outside any pod last; each device in exactly one."""
    pod_of: dict[str, int | None] = {sw.name: sw.pod for sw in plan.switches}
    parts: dict[int | None, PlanPart] = {}

    def part(pod: int | None) -> PlanPart:
        found = parts.get(pod)
        if found is None:
            found = parts[pod] = PlanPart(pod)
        return found

    for sw in plan.switches:
        part(sw.pod).switches.append(sw)
    for host in plan.hosts:
        pod = host.pod if host.pod is not None else pod_of.get(_first_switch(host) or "")
        pod_of[host.name] = pod
        part(pod).hosts.append(host)
    for link in plan.links:
        part(pod_of.get(link.a.device, pod_of.get(link.b.device))).links.append(link)
    return sorted(parts.values(), key=lambda p: (p.pod is None, p.pod or 0))


def _first_switch(host: Host) -> str | None:
    if host.bonds and host.bonds[0].members:
        return host.bonds[0].members[0].switch
    return host.nics[0].switch if host.nics else None


def index_text(plan: FabricPlan, parts: list[PlanPart]) -> str:
    listed = [{"path": p.path, "pod": p.pod, "switches": len(p.switches), "hosts": len(p.hosts),
               "links": len(p.links)} for p in parts]
    return dumps_outline({
        "source": plan.source, "qos": plan.qos, "vlans": plan.vlans, "host_profile": plan.host_profile,
        "operations": plan.operations, "services": plan.services, "parts": listed,
    })
