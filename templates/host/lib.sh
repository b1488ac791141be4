# --- rocefab host library: every ensure_* reads first, changes only what differs, and in --check mode
# --- only reports. Exit status: 0 in sync, 1 drift found (--check), 2 usage, 3 prerequisite missing.

SYS="${ROCEFAB_SYSFS_ROOT:-/sys}"
ETC="${ROCEFAB_ETC_ROOT:-/etc}"
MODE=apply
DRIFT=0
CHANGED=0

case "${1:-}" in
  --check) MODE=check ;;
  "") ;;
  -h|--help) echo "usage: $0 [--check]   (--check reports drift and changes nothing)"; exit 0 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

fatal() { echo "ERROR $*" >&2; exit 3; }

# converge LABEL WANT READER... -- WRITER...
# Reads the current value with READER; when it differs from WANT, reports it (--check) or runs WRITER (its
# report on stdout discarded, its errors shown) and reads again, so a write the kernel or a tool silently
# ignored is reported instead of assumed.
converge() {
  local label=$1 want=$2 have after
  shift 2
  local reader=()
  while [[ $1 != -- ]]; do reader+=("$1"); shift; done
  shift
  # A failing reader or writer (a device not there yet, a tool error) must not end the run under `set -e` with the
  # tool's own status (ip exits 2, the usage code) or half-way through a writer (a port left down): the value read
  # back decides, and the run goes on to the other settings.
  have=$("${reader[@]}") || true
  if [[ "$have" == "$want" ]]; then
    echo "ok      $label = $want"
  elif [[ $MODE == check ]]; then
    echo "DRIFT   $label: is '$have', want '$want'"
    DRIFT=$((DRIFT + 1))
  else
    "$@" >/dev/null || true
    after=$("${reader[@]}") || true
    if [[ "$after" == "$want" ]]; then
      echo "changed $label: '$have' -> '$want'"
      CHANGED=$((CHANGED + 1))
    else
      echo "FAILED  $label: still '$after' after setting '$want'"
      DRIFT=$((DRIFT + 1))
    fi
  fi
}

require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 || fatal "required tool '$tool' is not installed"
  done
}

require_netdev() {
  [[ -e "$SYS/class/net/$1" ]] || fatal "network interface '$1' does not exist on $(hostname)"
}

require_path() {  # PATH WHAT
  [[ -e "$1" ]] || fatal "$2 not found at $1"
}

rdma_presence() { if [[ -e "$SYS/class/infiniband/$1" ]]; then echo present; else echo absent; fi; }

ensure_rdma_device() {  # RDMA_DEVICE: must exist; a bond's appears once its ports form the RoCE LAG
  converge "$1 RDMA device" present rdma_presence "$1" -- true
}

# An attribute that exists can still fail to read (an empty GID table entry): say so instead of failing.
read_file() { if [[ -e "$1" ]]; then tr -d '\n' <"$1" 2>/dev/null || echo "<unreadable>"; else echo "<missing>"; fi; }

write_file() { printf '%s\n' "$2" >"$1"; }

ensure_sysfs() {  # LABEL PATH WANT
  converge "$1" "$3" read_file "$2" -- write_file "$2" "$3"
}

# Readers consume their whole input (no `grep -q`, no early `exit` in awk): with pipefail, a writer killed
# by SIGPIPE would fail the script.
admin_state() { if ip -o link show dev "$1" | grep '<[^>]*\bUP\b' >/dev/null; then echo up; else echo down; fi; }

ensure_up() {  # NETDEV
  converge "$1 admin state" up admin_state "$1" -- ip link set dev "$1" up
}

pause_state() {  # the 802.3x pause settings as "autoneg/rx/tx"
  ethtool -a "$1" | awk -F':' '
    /^Autonegotiate/ {gsub(/[ \t]/, "", $2); a=$2}
    /^RX:/ {gsub(/[ \t]/, "", $2); r=$2}
    /^TX:/ {gsub(/[ \t]/, "", $2); t=$2}
    END {print a "/" r "/" t}'
}

set_pause_off() {
  # PFC and 802.3x pause exclude each other; ethtool exits 78 (ioctl path) when nothing changed.
  ethtool -A "$1" autoneg off rx off tx off || [[ $? -eq 78 ]]
}

ensure_pause_off() {  # NETDEV
  converge "$1 global pause" "off/off/off" pause_state "$1" -- set_pause_off "$1"
}

ring_sizes() {  # current "rx/tx" ring sizes
  ethtool -g "$1" | awk '
    /^Current hardware settings/ {cur=1}
    cur && $1 == "RX:" {rx=$2}
    cur && $1 == "TX:" {tx=$2}
    END {print rx "/" tx}'
}

set_rings() {
  ethtool -G "$1" rx "$2" tx "$3" || [[ $? -eq 80 ]]
}

ensure_rings() {  # NETDEV RX TX
  converge "$1 rings" "$2/$3" ring_sizes "$1" -- set_rings "$1" "$2" "$3"
}

qos_trust() {
  mlnx_qos -i "$1" | awk -F': *' '!found && tolower($0) ~ /^priority trust state:/ {print $2; found=1}'
}

qos_dscp_map() {  # the NIC's DSCP -> priority map as "dscp:prio" pairs in DSCP order (empty unless trusting DSCP)
  mlnx_qos -i "$1" | awk '
    $1 ~ /^prio:[0-7]$/ && $2 ~ /^dscp:/ {
      p = substr($1, 6); n = split(substr($2, 6), d, ",")
      for (i = 1; i <= n; i++) if (d[i] != "") map[d[i] + 0] = p
    }
    END { out = ""; for (i = 0; i < 64; i++) if (i in map) out = out (out == "" ? "" : ",") i ":" map[i]; print out }'
}

set_dscp_map() {  # NETDEV "d:p,...": set the entries that differ, in one mlnx_qos call (not with --trust: it refuses)
  local have entry entries args=()
  have=",$(qos_dscp_map "$1"),"
  IFS=, read -r -a entries <<<"$2"
  for entry in "${entries[@]}"; do
    [[ $have == *",$entry,"* ]] || args+=(--dscp2prio "set,${entry%%:*},${entry##*:}")
  done
  [[ -z "${args[*]:-}" ]] || mlnx_qos -i "$1" "${args[@]}"
}

qos_pfc() {  # PFC enable flags for priorities 0-7, comma separated
  mlnx_qos -i "$1" | awk '!found && $1 == "enabled" {out=$2; for (i = 3; i <= 9; i++) out = out "," $i; print out; found=1}'
}

bond_settings() {  # "mode/lacp_rate/xmit_hash_policy/miimon" of an existing bond, else "<absent>"
  local b="$SYS/class/net/$1/bonding"
  if [[ ! -d "$b" ]]; then echo "<absent>"; return; fi
  echo "$(cut -d' ' -f1 <"$b/mode")/$(cut -d' ' -f1 <"$b/lacp_rate")/$(cut -d' ' -f1 <"$b/xmit_hash_policy")/$(tr -d '\n' <"$b/miimon")"
}

create_bond() {
  # The kernel only changes a bond's mode while it has no ports, so a wrong bond is rebuilt.
  if [[ -e "$SYS/class/net/$1" ]]; then ip link del dev "$1"; fi
  ip link add "$1" type bond mode 802.3ad miimon 100 lacp_rate fast xmit_hash_policy layer3+4
}

ensure_bond() {  # BOND
  converge "$1 bond" "802.3ad/fast/layer3+4/100" bond_settings "$1" -- create_bond "$1"
}

master_of() {
  if [[ -L "$SYS/class/net/$1/master" ]]; then basename "$(readlink "$SYS/class/net/$1/master")"; else echo "<none>"; fi
}

enslave() {
  # A port must be down to join a bond.
  ip link set dev "$1" down
  ip link set dev "$1" master "$2"
  ip link set dev "$1" up
}

ensure_member() {  # NETDEV BOND
  converge "$1 bond master" "$2" master_of "$1" -- enslave "$1" "$2"
}

ipv4_addresses() {
  ip -4 -o addr show dev "$1" | awk '{print $4}' | sort | paste -sd, -
}

set_address() {  # IPv4 only: addresses of other families (IPv6 link-local) are not ours to remove
  ip -4 addr flush dev "$1"
  ip addr add "$2" dev "$1"
}

ensure_address() {  # NETDEV ADDRESS/LEN
  converge "$1 ipv4 address" "$2" ipv4_addresses "$1" -- set_address "$1" "$2"
}

route_via() {  # PREFIX: "gateway dev" of the route, if any
  ip -4 route show "$1" | awk '{for (i = 1; i < NF; i++) {if ($i == "via") g=$(i+1); if ($i == "dev") d=$(i+1)}} END {print g " " d}'
}

ensure_route() {  # PREFIX GATEWAY NETDEV
  converge "route $1" "$2 $3" route_via "$1" -- ip route replace "$1" via "$2" dev "$3"
}

rule_table() {  # SOURCE: the tables of every `from SOURCE lookup N` rule, comma-joined in kernel order
  # Every rule counts: a stray rule placed before ours would take the traffic while ours looked right.
  ip -4 rule show | awk -v src="$1" '$2 == "from" && $3 == src {t = ""; for (i = 4; i < NF; i++) if ($i == "lookup") t = $(i + 1); print t}' | paste -sd, -
}

set_rule() {  # one rule per source: drop any other first
  while ip -4 rule del from "$1" 2>/dev/null; do :; done
  ip -4 rule add from "$1" lookup "$2"
}

ensure_rule() {  # SOURCE TABLE
  converge "rule from $1" "$2" rule_table "$1" -- set_rule "$1" "$2"
}

table_route_via() {  # PREFIX TABLE: "gateway dev" of the route in that table, if any
  ip -4 route show table "$2" "$1" | awk '{for (i = 1; i < NF; i++) {if ($i == "via") g=$(i+1); if ($i == "dev") d=$(i+1)}} END {print g " " d}'
}

ensure_table_route() {  # PREFIX GATEWAY NETDEV TABLE
  converge "route $1 table $4" "$2 $3" table_route_via "$1" "$4" -- ip route replace "$1" via "$2" dev "$3" table "$4"
}

# cma_roce_tos / cma_roce_mode print the current value when called without -t / -m. They create and remove
# a transient configfs entry to read it; the value itself is left untouched.
roce_tos() { cma_roce_tos -d "$1" -p 1 | tail -n 1; }
roce_mode() { cma_roce_mode -d "$1" -p 1 | tail -n 1; }

verify_gid() {  # RDMA_DEVICE INDEX: the GID NCCL is told to use must be a RoCE v2 GID
  local have
  have=$(read_file "$SYS/class/infiniband/$1/ports/1/gid_attrs/types/$2")
  if [[ "$have" == "RoCE v2" ]]; then
    echo "ok      $1 GID index $2 is RoCE v2"
  else
    echo "DRIFT   $1 GID index $2 is '$have', want 'RoCE v2' (NCCL_IB_GID_INDEX would pick the wrong GID)"
    DRIFT=$((DRIFT + 1))
  fi
}

verify_speed() {  # NETDEV GBPS: a link up at another speed than planned (wrong optic or cable, badly seated)
  local have want=$(($2 * 1000))
  if [[ $(read_file "$SYS/class/net/$1/operstate") != up ]]; then
    echo "note    $1 link is down: its speed is checked once it is up"
    return
  fi
  have=$(read_file "$SYS/class/net/$1/speed")
  if [[ "$have" == "$want" ]]; then
    echo "ok      $1 link speed = $want Mb/s"
  else
    echo "DRIFT   $1 link speed is '$have' Mb/s, want '$want' (check the optic or cable and its seating)"
    DRIFT=$((DRIFT + 1))
  fi
}

digest() { printf '%s\n' "$1" | sha256sum | cut -c1-16; }
file_digest() { if [[ -r "$1" ]]; then sha256sum <"$1" | cut -c1-16; else echo "<missing>"; fi; }

ensure_file() {  # PATH CONTENT: the whole file, compared by digest
  converge "$1" "$(digest "$2")" file_digest "$1" -- write_file "$1" "$2"
}

finish() {
  if [[ $MODE == check ]]; then
    if (( DRIFT > 0 )); then echo "$DRIFT setting(s) drifted"; exit 1; fi
    echo "in sync"
  else
    echo "$CHANGED setting(s) changed"
    if (( DRIFT > 0 )); then exit 1; fi
  fi
}
