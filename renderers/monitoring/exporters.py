"""The metric names the alert rules and dashboards are written against, as the exporters that produce them name them.

Switches: gNMI subscriptions collected by gnmic and exposed by its Prometheus output. gnmic names a metric
`<metric-prefix>_<path without keys>` with every non-alphanumeric as '_' and turns each path key into a label
`<element>_<key>` (openconfig/gnmic, pkg/outputs/prometheus_output/prometheus_common.go and
pkg/formatters/event.go; docs/user_guide/outputs/prometheus_output.md "Metric Naming"). String leaves are dropped
by that output, so the gnmic config turns the three rocefab reads (oper-status, port-speed, session-state) into
numbers first (collection.py).

Hosts: node_exporter (prometheus/node_exporter). The infiniband collector (on by default) exports
`node_infiniband_<counter>` with labels device (the RDMA device) and port, and since v1.11.0 the RDMA hardware
counters of /sys/class/infiniband/<dev>/ports/<port>/hw_counters (collector/infiniband_linux.go). The ethtool
collector (off by default: `--collector.ethtool`) exports every `ethtool -S` statistic as
`node_ethtool_<stat>` with rx/tx spelt received/transmitted and label device (the netdev)
(collector/ethtool_linux.go, buildEthtoolFQName); mlx5 names its per-priority PFC counters rx_prio<p>_pause and
tx_prio<p>_pause and its stall-watchdog events tx_pause_storm_error_events (kernel documentation,
networking/device_drivers/ethernet/mellanox/mlx5/counters.rst).

The scrape config (collection.py) relabels both to the same two labels, `device` (the plan's device name) and
`port` (switch port, host netdev or RDMA device), so every rule joins the plan's own series (plan_series.py) on
(device, port).
"""

from __future__ import annotations

import re

from rocefab.platforms import switch_specs, unit
from rocefab.platforms.telemetry import QUEUES, SwitchTelemetry

GNMIC_PREFIX = "gnmic"


def gnmic_metric(path: str) -> str:
    """The gnmic Prometheus output's name for a gNMI leaf path (keys, if any, are dropped first)."""
    bare = re.sub(r"\[[^\]]*\]", "", path)
    return f"{GNMIC_PREFIX}_" + re.sub(r"[^a-zA-Z0-9_]+", "_", bare).strip("_")


# OpenConfig leaves every platform rocefab renders serves over gNMI (openconfig-interfaces, openconfig-if-ethernet,
# openconfig-network-instance's BGP): Arista's OpenConfig YANG for EOS 4.3x, Cisco's OpenConfig guide for NX-OS
# 10.x, NVIDIA's "gNMI Streaming" metric list for Cumulus Linux 5.13+ (the first with SAMPLE subscriptions).
IF_COUNTERS = "/interfaces/interface/state/counters"
OPER_PATH = "/interfaces/interface/state/oper-status"
SPEED_PATH = "/interfaces/interface/ethernet/state/port-speed"
BGP_PATH = "/network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/session-state"
IN_PKTS = gnmic_metric(f"{IF_COUNTERS}/in-pkts")
OUT_PKTS = gnmic_metric(f"{IF_COUNTERS}/out-pkts")
IN_ERRORS = gnmic_metric(f"{IF_COUNTERS}/in-errors")
OUT_ERRORS = gnmic_metric(f"{IF_COUNTERS}/out-errors")
OUT_OCTETS = gnmic_metric(f"{IF_COUNTERS}/out-octets")
# String leaves, turned into numbers by the gnmic config's processors (collection.py): 1 up / 0 not; the speed in
# Gb/s; the BGP FSM state numbered as in RFC 4271 (6 = ESTABLISHED).
OPER_STATUS = gnmic_metric(OPER_PATH)
PORT_SPEED = gnmic_metric(SPEED_PATH)
BGP_STATE = gnmic_metric(BGP_PATH)
BGP_ESTABLISHED = 6
BGP_FSM = ("IDLE", "CONNECT", "ACTIVE", "OPENSENT", "OPENCONFIRM", "ESTABLISHED")

COMMON_PATHS = (
    f"{IF_COUNTERS}/in-pkts", f"{IF_COUNTERS}/out-pkts", f"{IF_COUNTERS}/in-errors", f"{IF_COUNTERS}/out-errors",
    f"{IF_COUNTERS}/out-octets", OPER_PATH, SPEED_PATH,
    "/network-instances/network-instance[name=default]/protocols/protocol/bgp/neighbors/neighbor/state/session-state",
)

def telemetry(platform: str) -> SwitchTelemetry:
    spec = unit(platform).spec
    if spec is None or spec.telemetry is None:
        raise KeyError(f"{platform} declares no gNMI telemetry")
    return spec.telemetry


def oc_queue_name(platform: str, traffic_class: int) -> str:
    t = telemetry(platform)
    if traffic_class == 0 and t.class_default_queue:
        return t.class_default_queue
    return t.queue_name.format(n=traffic_class)


def queue_metric(leaf: str) -> str:
    return gnmic_metric(f"{QUEUES}/{leaf}")


def summed(func: str, metrics: set[str] | tuple[str, ...], window: str, by: str, **matchers: str) -> str:
    """`sum by (by)` of func(metric[window]) over several metrics (sorted, so the rule text is stable).

    Each rate is tagged with its counter's name first: rate() drops the metric name, and two counters of one port
    (Cumulus's WRED and no-buffer drops, a NIC's retransmission causes) would otherwise collide as one labelset,
    which Prometheus refuses ("vector cannot contain metrics with the same labelset")."""
    selector = "{" + ", ".join(f'{k}="{v}"' for k, v in matchers.items()) + "}" if matchers else ""
    parts = [f'label_replace({func}({m}{selector}[{window}]), "counter", "{m}", "", "")' for m in sorted(metrics)]
    return f"sum by ({by}) ({' or '.join(parts)})"


# Every platform's name for each signal: the rules select them all at once, so one rule covers a mixed fabric.
_ALL = [s.telemetry for s in switch_specs().values() if s.telemetry is not None]
QUEUE_TRANSMIT = queue_metric("transmit-pkts")
QUEUE_DROPS = {queue_metric(leaf) for t in _ALL for leaf in t.queue_drops}
QUEUE_ECN = {queue_metric(t.queue_ecn_marked) for t in _ALL if t.queue_ecn_marked}
PFC_RX = {gnmic_metric(t.pfc[0]) for t in _ALL if t.pfc}
PFC_TX = {gnmic_metric(t.pfc[1]) for t in _ALL if t.pfc}
WATCHDOG = {gnmic_metric(t.watchdog) for t in _ALL if t.watchdog}

# Labels gnmic makes of the path keys, which the scrape config renames to rocefab's own.
GNMIC_RENAMES = (
    ("interface_name", "port"), ("interface_interface_id", "port"),
    ("neighbor_neighbor_address", "neighbor"),
    ("queue_name", "queue"), ("tx_queue_index", "queue"),
    ("priority_index", "priority"), ("switch_priority_priority", "priority"),
)



# node_exporter, infiniband collector (labels device = RDMA device, port)
IB = "node_infiniband"
IB_STATE = f"{IB}_state_id"  # 4 = ACTIVE
IB_RATE = f"{IB}_rate_bytes_per_second"
IB_RX_PKTS = f"{IB}_port_packets_received_total"
IB_TX_PKTS = f"{IB}_port_packets_transmitted_total"
IB_RX_ERRORS = f"{IB}_port_errors_received_total"
IB_RX_BYTES = f"{IB}_port_data_received_bytes_total"
IB_TX_BYTES = f"{IB}_port_data_transmitted_bytes_total"
IB_ECN_MARKED = f"{IB}_np_ecn_marked_roce_packets_received_total"
IB_CNP_SENT = f"{IB}_np_cnp_packets_sent_total"
IB_CNP_HANDLED = f"{IB}_rp_cnp_packets_handled_total"
# What a RoCE sender retransmits for: the receiver saw a gap (out of sequence), the sender got a sequence-error
# NAK, its ACK timer expired, or adaptive retransmission fired.
IB_RETRANSMIT_CAUSES = (
    "out_of_sequence_packets_received_total",
    "packet_sequence_errors_total",
    "local_ack_timeout_errors_total",
    "roce_adp_retransmits_total",
)
IB_ACTIVE = 4

# node_exporter, ethtool collector (label device = netdev), mlx5's statistics
ETHTOOL = "node_ethtool"


def nic_pause_rx(priority: int) -> str:
    """PFC pause frames the NIC received on a priority: the switch holding the host back."""
    return f"{ETHTOOL}_received_prio{priority}_pause"


def nic_pause_tx(priority: int) -> str:
    """PFC pause frames the NIC sent on a priority: the host unable to take what the switch sends."""
    return f"{ETHTOOL}_transmitted_prio{priority}_pause"


NIC_STORM_EVENTS = f"{ETHTOOL}_transmitted_pause_storm_error_events"
