"""What a host script's changes disturb, by the setting each drift line names (platforms/disruption.py).

No NVIDIA page states these effects for each setting; they are rocefab's reading of what each writer does, and
say so: `mlnx_qos` re-programs the NIC's priority buffers and queues (the port's lossless traffic); a ring, MTU,
pause, bond or address change makes the driver or the kernel take the port (or the bond) down and up, or moves
the RoCE GID a running job is bound to; NCCL settings, rdma_cm defaults and routes are read when a job or a
connection starts, so a running one keeps what it began with.
"""

from __future__ import annotations

from rocefab.platforms.disruption import Disruption, DisruptionRule, DisruptionTable

READING = "rocefab's reading of the writer (no vendor statement found)"

TABLE = DisruptionTable((
    DisruptionRule(r"^NCCL_\w+=", Disruption.HITLESS, "read by NCCL when a job starts"),
    DisruptionRule(r" (rdma_cm RoCE mode|rdma_cm default ToS|default traffic class) = ", Disruption.HITLESS,
                   "rdma_cm defaults apply to connections made afterwards; " + READING),
    DisruptionRule(r"^(route|rule from) ", Disruption.HITLESS,
                   "routes are resolved when a RoCE connection is made; " + READING),
    DisruptionRule(r" enabled at boot = |^/\S+ = ", Disruption.HITLESS, "a file or unit installed for later runs"),
    DisruptionRule(r" (qos trust|dscp map|pfc priorities|cable length) = ", Disruption.QOS_REPROGRAM,
                   "mlnx_qos re-programs the NIC's priority buffers and queues; " + READING),
    DisruptionRule(r" (rings|mtu|global pause|admin state|bond|bond master|ipv4 address) = ", Disruption.PORT_FLAP,
                   "the driver reopens the port's queues, or the kernel takes the port or bond down and up, or the "
                   "RoCE GID moves; " + READING),
), unknown=Disruption.QOS_REPROGRAM)
