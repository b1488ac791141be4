"""What `verify --sample-s` reads from a GPU host, twice: the RDMA ports' retransmission and congestion counters
and the NIC ports' PFC pause frames per priority, in the shared words of deploy/verify/observation.py.

The counter names are mlx5's:

- `/sys/class/infiniband/<dev>/ports/1/counters/port_xmit_packets`: the packets the port sent (the IB port
  counters, which node_exporter's infiniband collector exports as port_packets_transmitted_total).
- `/sys/class/infiniband/<dev>/ports/1/hw_counters/`: the Q counters `out_of_sequence` (the responder saw a PSN
  gap), `packet_seq_err` (the requester got a NAK-sequence-error), `local_ack_timeout_err` (its ACK timer
  expired), the RoCE accelerator counter `roce_adp_retrans` (adaptive retransmissions), and the congestion
  counters `np_ecn_marked_roce_packets`, `np_cnp_sent` and `rp_cnp_handled` (Linux
  drivers/infiniband/hw/mlx5/counters.c: out_of_seq_q_cnts, retrans_q_cnts, roce_accl_cnts, cong_cnts; kernel
  commits "IB/mlx5: Add port protocol stats" and "IB/mlx5: Expose RoCE accelerator counters"). The four
  retransmission causes are the ones the rendered RocefabRoceRetransmits alert sums
  (renderers/monitoring/exporters.py IB_RETRANSMIT_CAUSES). A counter the firmware does not offer is absent
  (roce_adp_retrans needs adaptive retransmission, the congestion counters the cc_query capability).
- `ethtool -S <netdev>`: `rx_prio<p>_pause` / `tx_prio<p>_pause`, PFC pause frames received and sent on
  priority p (Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst, "Priority
  Port Counters"; net/mlx5e "Add per priority group to PPort counters").

Sysfs is read with bash's own `read`, so the only processes are one `ethtool -S` per NIC port.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from rocefab.deploy.verify.observation import HostCounters, NetdevPause, RdmaCounters
from rocefab.platforms.host.observe import MARK

RETRANSMITS = ("out_of_sequence", "packet_seq_err", "local_ack_timeout_err", "roce_adp_retrans")
CONGESTION = ("np_ecn_marked_roce_packets", "np_cnp_sent", "rp_cnp_handled")
_FILES = ("counters/port_xmit_packets", *(f"hw_counters/{name}" for name in RETRANSMITS + CONGESTION))
_SCRIPT = r"""
S="${ROCEFAB_SYSFS_ROOT:-/sys}"
for dev in __RDMA__; do
  p="$S/class/infiniband/$dev/ports/1"
  echo "@@rocefab rdma $dev"
  for f in __FILES__; do
    v=""
    read -r v 2>/dev/null <"$p/$f" && printf '%s\t%s\n' "${f#*/}" "$v"
  done
done
for nd in __NETDEVS__; do
  echo "@@rocefab pause $nd"
  while read -r k v; do
    case $k in [rt]x_prio[0-7]_pause:) printf '%s\t%s\n' "${k%:}" "$v" ;; esac
  done < <(ethtool -S "$nd" 2>/dev/null)
done
"""
_PAUSE = re.compile(r"([rt]x)_prio([0-7])_pause")


def script(netdevs: Iterable[str], rdma_devices: Iterable[str]) -> str:
    """`netdevs`: the NIC ports (a bond has no priority counters of its own)."""
    return (_SCRIPT.replace("__FILES__", " ".join(_FILES))
            .replace("__RDMA__", " ".join(shlex.quote(r) for r in rdma_devices) or "''")
            .replace("__NETDEVS__", " ".join(shlex.quote(n) for n in netdevs) or "''"))


def _values(lines: list[str]) -> dict[str, int]:
    out = {}
    for line in lines:
        key, _, value = line.partition("\t")
        if value.strip().isdigit():
            out[key] = int(value)
    return out


def parse(output: str) -> HostCounters:
    rdma: dict[str, RdmaCounters] = {}
    pause: dict[str, NetdevPause] = {}
    head: list[str] = []
    lines: list[str] = []
    for line in [*output.splitlines(), MARK + " end"]:
        if not line.startswith(MARK + " "):
            lines.append(line)
            continue
        if len(head) == 2 and head[0] == "rdma":
            v = _values(lines)
            if v:  # nothing at all: no such device, or no counters
                rdma[head[1]] = RdmaCounters(v.get("port_xmit_packets"),
                                             {k: v[k] for k in RETRANSMITS if k in v},
                                             v.get("np_ecn_marked_roce_packets"), v.get("np_cnp_sent"),
                                             v.get("rp_cnp_handled"))
        elif len(head) == 2 and head[0] == "pause":
            found: dict[str, dict[int, int]] = {"rx": {}, "tx": {}}
            for key, value in _values(lines).items():
                if m := _PAUSE.fullmatch(key):
                    found[m.group(1)][int(m.group(2))] = value
            if found["rx"] or found["tx"]:
                pause[head[1]] = NetdevPause(found["rx"], found["tx"])
        head, lines = line.split()[1:], []
    return HostCounters(rdma, pause)
