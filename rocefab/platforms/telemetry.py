"""What a network operating system streams over gNMI beyond the OpenConfig leaves every platform serves, as data
its platform unit declares and the monitoring renderers read (renderers/monitoring/exporters.py)."""

from __future__ import annotations

from rocefab.renderers.record import record

# openconfig-qos egress queue counters: /qos/interfaces/interface[interface-id]/output/queues/queue[name]/state
QUEUES = "/qos/interfaces/interface/output/queues/queue/state"


@record
class SwitchTelemetry:
    """One NOS's queue, PFC and watchdog counters (None: it has no gNMI path for that signal rocefab knows of,
    and the NIC counters of the hosts attached to it are what watches it)."""

    paths: tuple[str, ...]  # what the collector subscribes to for this NOS, beyond the common leaves
    queue_name: str  # the openconfig-qos name of traffic class {n}'s queue (the `queue` label)
    queue_drops: tuple[str, ...]  # leaves under QUEUES whose sum is the queue's drops
    queue_ecn_marked: str | None  # leaf under QUEUES counting ECN-marked packets
    pfc: tuple[str, str] | None  # paths of pause frames received and sent, keyed by priority
    watchdog: str | None  # path of the PFC watchdog's storm count per queue
    source: str
    class_default_queue: str = ""  # traffic class 0's queue name, where it is not queue_name's
    gnmi_auth_scheme: str = ""  # gnmic's auth-scheme where credentials must travel as an HTTP Basic header
