"""What verify reads from a GPU host, in the shared words of deploy/verify/observation.py.

One read-only shell script per host, over the deploy session's SSH: sysfs for link state, speed, MTU, bonding and
the mlx5 ECN enables; `mlnx_qos -i` for trust, the DSCP map and PFC; `ethtool -a` for 802.3x pause; the RDMA
device's port state, RoCE v2 GIDs and default traffic class in sysfs and `cma_roce_tos` for rdma_cm's ToS; the
NIC's firmware release and board (PSID) from the RDMA device's sysfs `fw_ver` and `board_id` (the same two values
`ethtool -i` prints as "firmware-version: 28.39.1002 (MT_0000000834)", read here without a process per NIC);
whether GPUDirect RDMA's nvidia_peermem (or its predecessor nv_peer_mem) is in /proc/modules; and
/etc/nccl.conf. Sysfs, /proc and /etc honour ROCEFAB_SYSFS_ROOT / ROCEFAB_PROC_ROOT / ROCEFAB_ETC_ROOT as the
host scripts do. Names reach the script only as quoted words, and each section starts with a marker line, so one
missing tool or file costs that section alone.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from rocefab.deploy.verify.observation import HostNetdev, HostObservation, RdmaDevice

MARK = "@@rocefab"
NO_TC = "no tc/1/traffic_class in sysfs (MLNX_OFED only; the inbox driver has no default traffic class)"
NEEDS_ROOT = ("cma_roce_tos needs root: give this host `sudo: true` in the inventory (verify runs its read script with "
              "`sudo -n`), or have the boot script leave rdma_cm's configfs entry so it can be read without root")
_SCRIPT = r"""
S="${ROCEFAB_SYSFS_ROOT:-/sys}"; E="${ROCEFAB_ETC_ROOT:-/etc}"; P="${ROCEFAB_PROC_ROOT:-/proc}"
# rd FILE: a one-line attribute in REPLY as $(cat FILE) gives it, without a process (a fork and exec of cat per
# attribute, some 60 per host, were most of this script's time); empty, status 1, when it cannot be read
rd() { REPLY=""; IFS= read -r REPLY <"$1" || [[ -n $REPLY ]]; } 2>/dev/null
for nd in __NETDEVS__; do
  d="$S/class/net/$nd"
  echo "@@rocefab netdev $nd"
  [[ -d $d ]] || { echo "missing"; continue; }
  for a in operstate mtu speed; do
    rd "$d/$a"; printf '%s\t%s\n' "$a" "$REPLY"
  done
  if [[ -d $d/bonding ]]; then
    rd "$d/bonding/slaves"; printf 'slaves\t%s\n' "$REPLY"
    rd "$d/bonding/mii_status"; printf 'mii\t%s\n' "$REPLY"
    continue  # a bond has no DCB of its own: its ports are listed too
  fi
  if [[ -d $d/ecn ]]; then  # MLNX_OFED's per-priority DCQCN enables
    for p in 0 1 2 3 4 5 6 7; do
      rd "$d/ecn/roce_np/enable/$p"; np=$REPLY
      rd "$d/ecn/roce_rp/enable/$p"; printf 'ecn\t%s\t%s\t%s\n' "$p" "$np" "$REPLY"
    done
  fi
  echo "@@rocefab qos $nd"; mlnx_qos -i "$nd" 2>&1 || true
  echo "@@rocefab pause $nd"; ethtool -a "$nd" 2>&1 || true
done
for dev in __RDMA__; do
  r="$S/class/infiniband/$dev"
  echo "@@rocefab rdma $dev"
  [[ -d $r ]] || { echo "missing"; continue; }
  rd "$r/ports/1/state"; printf 'state\t%s\n' "$REPLY"
  if [[ -e $r/tc/1/traffic_class ]]; then  # MLNX_OFED's tc/ folder; the inbox driver has none
    printf 'tclass'; while IFS= read -r line; do printf '\t%s' "$line"; done 2>/dev/null <"$r/tc/1/traffic_class"
    printf '\n'
  else
    printf 'tclass-absent\n'
  fi
  for t in "$r"/ports/1/gid_attrs/types/*; do
    i=${t##*/}
    rd "$t" || continue  # an empty entry: its type cannot be read
    type=$REPLY
    rd "$r/ports/1/gids/$i"; gid=$REPLY
    rd "$r/ports/1/gid_attrs/ndevs/$i"; printf 'gid\t%s\t%s\t%s\t%s\n' "$i" "$gid" "$type" "$REPLY"
  done
  # rdma_cm's ToS: configfs holds it world-readable once rdma_cm/<dev> exists (mkdir needs root), else the tool,
  # which refuses without root ("You must be root to run this", on stdout)
  if rd "$S/kernel/config/rdma_cm/$dev/ports/1/default_roce_tos" && [[ -n $REPLY ]]; then
    printf 'tos\t%s\n' "$REPLY"
  else
    tos=$(cma_roce_tos -d "$dev" -p 1 2>/dev/null)
    printf 'tos\t%s\n' "${tos##*$'\n'}"  # its last line
  fi
  rd "$r/fw_ver"; fw=$REPLY
  rd "$r/board_id"; printf 'fw\t%s\nboard\t%s\n' "$fw" "$REPLY"
done
echo "@@rocefab modules"
if [[ -r $P/modules ]]; then
  while read -r m _; do
    case $m in nvidia_peermem | nv_peer_mem) printf 'loaded\t%s\n' "$m" ;; esac
  done <"$P/modules"
else
  echo "unreadable"
fi
echo "@@rocefab nccl"
cat "$E/nccl.conf" 2>/dev/null || echo "@@rocefab absent"
"""


def script(netdevs: Iterable[str], rdma_devices: Iterable[str]) -> str:
    return (_SCRIPT.replace("__NETDEVS__", " ".join(shlex.quote(n) for n in netdevs) or "''")
            .replace("__RDMA__", " ".join(shlex.quote(r) for r in rdma_devices) or "''"))


def _sections(output: str) -> list[tuple[list[str], list[str]]]:
    sections: list[tuple[list[str], list[str]]] = []
    for line in output.splitlines():
        if line.startswith(MARK + " "):
            sections.append((line.split()[1:], []))
        elif sections:
            sections[-1][1].append(line)
    return sections


def _int(text: str) -> int | None:
    text = text.strip()
    return int(text) if re.fullmatch(r"-?\d+", text) else None


def _enables(rows: list[list[str]], column: int) -> frozenset[int] | None:
    """Priorities whose ecn/roce_np|roce_rp/enable/<p> reads 1; None without the folder (the inbox driver) or when
    one of the files reads empty (the firmware query failed: unknown, not off)."""
    values = [(int(r[1]), r[column] if len(r) > column else "") for r in rows]
    if not values or any(v not in ("0", "1") for _, v in values):
        return None
    return frozenset(p for p, v in values if v == "1")


def _fields(lines: list[str]) -> dict[str, str]:
    return {k: v for k, _, v in (line.partition("\t") for line in lines) if k not in ("ecn", "gid")}


def parse_mlnx_qos(lines: list[str]) -> tuple[str | None, tuple[int, ...] | None, tuple[int, ...] | None]:
    """(trust, PFC enable flags, DSCP -> priority under DSCP trust) from `mlnx_qos -i` output."""
    trust = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("Priority trust state:")), None)
    trust = None if trust in ("", "none") else trust  # "none": mlnx_qos could not read it
    pfc = None
    dscp = [0] * 64  # a DSCP without an entry goes to the default priority, 0
    for line in lines:
        if line.strip().startswith("enabled") and "priority" not in line:
            flags = [int(x) for x in line.split()[1:9] if x.isdigit()]
            pfc = tuple(flags) if len(flags) == 8 else None
        elif m := re.match(r"\s*prio:(\d) dscp:([\d,]+)", line):
            for d in m.group(2).strip(",").split(","):
                if d.isdigit() and int(d) < 64:
                    dscp[int(d)] = int(m.group(1))
    return trust, pfc, tuple(dscp) if trust == "dscp" else None


def cable_len(lines: list[str]) -> int | None:
    """`Cable len: N` of `mlnx_qos -i` (every mlnx-tools release in the corpus prints it), None when absent."""
    for line in lines:
        if m := re.fullmatch(r"Cable len:\s*(\d+)\s*", line):
            return int(m.group(1))
    return None


def traffic_class(lines: list[str]) -> int | None:
    """The global value of tc/1/traffic_class (the script prints the file's lines after `tclass`, tab-separated):
    "Global tclass=106" from MLNX_OFED 4.4 on, a bare number in 4.2-4.3 (-1: unset). A per-destination rule
    ("dst_ip=10.1.0.0/16,tclass=96") is not the global value; an empty file is unset."""
    found = next((line.split("\t")[1:] for line in lines if line.split("\t", 1)[0] == "tclass"), [])
    for text in (t.strip() for t in found):
        if m := re.fullmatch(r"Global tclass=(\d+)", text):
            return int(m.group(1))
        if text.isdigit():
            return int(text)
    return None


def parse_pause(lines: list[str]) -> tuple[bool | None, bool | None]:
    found = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in lines) if k.strip() in ("RX", "TX")}
    return (found["RX"] == "on") if "RX" in found else None, (found["TX"] == "on") if "TX" in found else None


def parse(output: str, name: str) -> HostObservation:
    netdevs: dict[str, HostNetdev] = {}
    rdma: dict[str, RdmaDevice] = {}
    nccl: str | None = None
    modules: frozenset[str] | None = None
    qos: dict[str, tuple[str | None, tuple[int, ...] | None, tuple[int, ...] | None]] = {}
    cables: dict[str, int | None] = {}
    pause: dict[str, tuple[bool | None, bool | None]] = {}
    for head, lines in _sections(output):
        kind, target = head[0], (head[1] if len(head) > 1 else "")
        if kind == "netdev" and lines[:1] != ["missing"]:
            f = _fields(lines)
            speed = _int(f.get("speed", ""))
            ecn = [line.split("\t") for line in lines if line.startswith("ecn\t")]
            netdevs[target] = HostNetdev(
                target, f.get("operstate") == "up", speed / 1000 if speed and speed > 0 else None,
                _int(f.get("mtu", "")),
                ecn_np=_enables(ecn, 2), ecn_rp=_enables(ecn, 3),
                bond_slaves=tuple(f["slaves"].split()) if "slaves" in f else None,
                bond_mii_up=(f["mii"] == "up") if "mii" in f else None)
        elif kind == "qos":
            qos[target] = parse_mlnx_qos(lines)
            cables[target] = cable_len(lines)
        elif kind == "pause":
            pause[target] = parse_pause(lines)
        elif kind == "rdma" and lines[:1] != ["missing"]:
            f = _fields(lines)
            gids = tuple((int(g[1]), g[2], g[4] if len(g) > 4 else "") for g in
                         (line.split("\t") for line in lines if line.startswith("gid\t")) if g[3] == "RoCE v2")
            tos_text = f.get("tos", "").strip()
            why = {}
            if "tclass-absent" in lines:
                why["traffic_class"] = NO_TC
            if _int(tos_text) is None and tos_text:
                why["cma_tos"] = NEEDS_ROOT if "must be root" in tos_text.lower() else f"cma_roce_tos: {tos_text}"
            rdma[target] = RdmaDevice(target, f.get("state", ""), gids, traffic_class(lines),
                                      _int(tos_text), f.get("fw", "").strip() or None,
                                      f.get("board", "").strip() or None, why)
        elif kind == "modules":
            modules = None if lines[:1] == ["unreadable"] else \
                frozenset(line.split("\t", 1)[1] for line in lines if line.startswith("loaded\t"))
        elif kind == "nccl":
            nccl = "".join(f"{line}\n" for line in lines)
        elif kind == "absent":
            nccl = None
    for nd, (trust, pfc, dscp) in qos.items():
        if nd in netdevs:
            rx, tx = pause.get(nd, (None, None))
            old = netdevs[nd]
            netdevs[nd] = HostNetdev(old.name, old.up, old.speed_gbps, old.mtu, trust, pfc, dscp, rx, tx, old.ecn_np,
                                     old.ecn_rp, old.bond_slaves, old.bond_mii_up, cables.get(nd))
    return HostObservation(name, netdevs, rdma, nccl, modules)
