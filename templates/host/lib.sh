# --- rocefab host library: every ensure_* reads first, changes only what differs, and in --check mode
# --- only reports. Exit status: 0 in sync, 1 drift found (--check), 2 usage, 3 prerequisite missing.

SYS="${ROCEFAB_SYSFS_ROOT:-/sys}"
ETC="${ROCEFAB_ETC_ROOT:-/etc}"
SBIN="${ROCEFAB_SBIN_ROOT:-/usr/local/sbin}"
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

ipv4_gid() {  # A.B.C.D: its RoCE v2 GID as sysfs prints it, the IPv4-mapped IPv6 address ::ffff:A.B.C.D
  local octets
  IFS=. read -r -a octets <<<"$1"
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "${octets[@]}"
}

roce_v2_gid_indexes() {  # RDMA_DEVICE GID NETDEV: the GID table indexes holding GID as a RoCE v2 GID of NETDEV
  local port="$SYS/class/infiniband/$1/ports/1" entry index gid type ndev found=()
  for entry in "$port"/gids/*; do
    [[ -e $entry ]] || continue
    index=${entry##*/}
    # builtin reads: a GID table has up to 255 entries, one process each would be slow; empty entries have
    # unreadable attributes
    read -r gid <"$entry" 2>/dev/null || continue
    [[ $gid == "$2" ]] || continue
    read -r type <"$port/gid_attrs/types/$index" 2>/dev/null || continue
    read -r ndev <"$port/gid_attrs/ndevs/$index" 2>/dev/null || continue
    [[ $type == "RoCE v2" && $ndev == "$3" ]] && found+=("$index")
  done
  if [[ -n ${found[*]:-} ]]; then printf '%s\n' "${found[@]}" | sort -n | paste -sd, -; else echo "<none>"; fi
}

verify_gid() {  # RDMA_DEVICE NETDEV IPV4 [INDEX]: a RoCE v2 GID for the address exists (at INDEX, if NCCL is told one)
  local gid found tries=0
  gid=$(ipv4_gid "$3")
  found=$(roce_v2_gid_indexes "$1" "$gid" "$2")
  # the kernel fills the GID table from a work queue after an address is added: give it a moment
  while [[ $found == "<none>" && $MODE == apply && $tries -lt 10 ]]; do
    sleep 0.2
    tries=$((tries + 1))
    found=$(roce_v2_gid_indexes "$1" "$gid" "$2")
  done
  if [[ $found == "<none>" ]]; then
    echo "DRIFT   $1 has no RoCE v2 GID for $3 on $2 (RoCE peers cannot reach this address)"
    DRIFT=$((DRIFT + 1))
  elif [[ -z ${4:-} ]]; then
    echo "ok      $1 RoCE v2 GID of $3 on $2 at index $found (NCCL selects it)"
  elif [[ ",$found," == *",$4,"* ]]; then
    echo "ok      $1 GID index $4 = RoCE v2 GID of $3 on $2"
  else
    echo "DRIFT   $1 GID index $4 is not the RoCE v2 GID of $3 on $2 (that is at index $found): NCCL_IB_GID_INDEX=$4 picks the wrong GID"
    DRIFT=$((DRIFT + 1))
  fi
}

# The default traffic class of the device's queue pairs that set none (verbs tools, perftest without -R;
# RDMA-CM ones take cma_roce_tos): MLNX_OFED reads back "Global tclass=N", empty when unset.
device_tclass() {
  local line
  if [[ ! -e $1 ]]; then echo "<missing>"; return; fi
  while IFS= read -r line; do
    # the plain number is what a write leaves in a file that is not mlx5's attribute (a test root)
    if [[ $line =~ ^(Global\ tclass=)?([0-9]+)$ ]]; then echo "${BASH_REMATCH[2]}"; return; fi
  done <"$1"
  echo "<unset>"
}

ensure_tclass() {  # RDMA_DEVICE TOS
  local path="$SYS/class/infiniband/$1/tc/1/traffic_class"
  converge "$1 default traffic class" "$2" device_tclass "$path" -- write_file "$path" "$2"
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

install_file() { mkdir -p "$(dirname "$1")" && write_file "$1" "$2"; }

ensure_installed() {  # PATH CONTENT: the whole file, compared by digest, its folder made if need be
  converge "$1" "$(digest "$2")" file_digest "$1" -- install_file "$1" "$2"
}

unit_state() { systemctl is-enabled "$1" 2>/dev/null || true; }

enable_unit() { systemctl daemon-reload && systemctl enable "$1"; }

ensure_enabled() {  # UNIT: enabled, where this is the running system's own /etc and systemd runs it
  if [[ $ETC != /etc || ! -d /run/systemd/system ]] || ! command -v systemctl >/dev/null 2>&1; then
    echo "note    $1 not enabled: $ETC is not the /etc of a running systemd (enable it there to re-apply at boot)"
    return
  fi
  converge "$1 enabled at boot" enabled unit_state "$1" -- enable_unit "$1"
}

# /etc/nccl.conf is the site's file too: rocefab owns one marked block at its top. NCCL reads KEY=VALUE lines
# and keeps the first value of a key (and the job's environment over both), so a block at the top wins over the
# site's later lines. The markers hold no '=': NCCL versions that do not skip comments ignore such lines.
BLOCK_BEGIN="# >>> rocefab: the lines up to the end marker are managed by rocefab, edits there are replaced"
BLOCK_END="# <<< rocefab"

conf_block() {  # PATH: rocefab's block, when it opens the file; else <missing>, <absent> or <not at the top>
  if [[ ! -r $1 ]]; then echo "<missing>"; return; fi
  awk -v b="$BLOCK_BEGIN" -v e="$BLOCK_END" '
    $0 == b { if (NR != 1) top = "no"; inside = 1; seen = 1; next }
    $0 == e { inside = 0; next }
    inside { body = body $0 "\n" }
    END { if (!seen) print "<absent>"; else if (top == "no") print "<not at the top>"; else printf "%s", body }' "$1"
}

conf_drift() {  # PATH HAVE WANT: one DRIFT line per setting that differs; prints how many at the end
  awk -v path="$1" -v q="'" '
    FNR == 1 { part++ }
    part == 1 && /=/ { k = substr($0, 1, index($0, "=") - 1); have[k] = substr($0, index($0, "=") + 1) }
    part == 2 && /=/ { k = substr($0, 1, index($0, "=") - 1); want[k] = substr($0, index($0, "=") + 1); order[++n] = k }
    END {
      for (i = 1; i <= n; i++) {
        k = order[i]
        if (!(k in have)) { print "DRIFT   " path " " k ": missing, want " q want[k] q; c++ }
        else if (have[k] != want[k]) { print "DRIFT   " path " " k ": is " q have[k] q ", want " q want[k] q; c++ }
      }
      for (k in have) if (!(k in want)) { print "DRIFT   " path " " k ": is " q have[k] q " in rocefab" q "s block, want it gone"; c++ }
      print c + 0
    }' <(printf '%s\n' "$2") <(printf '%s\n' "$3")
}

write_block() {  # PATH CONTENT: rocefab's block first, then the site's lines as they were
  local rest=""
  if [[ -e $1 ]]; then
    rest=$(awk -v b="$BLOCK_BEGIN" -v e="$BLOCK_END" '$0 == b {inside = 1; next} $0 == e {inside = 0; next} !inside' "$1")
  fi
  { printf '%s\n%s\n%s\n' "$BLOCK_BEGIN" "$2" "$BLOCK_END"; if [[ -n $rest ]]; then printf '%s\n' "$rest"; fi; } >"$1.rocefab-new"
  mv "$1.rocefab-new" "$1"
}

conf_shadowed() {  # PATH: the site's lines after rocefab's block that set one of its keys, which NCCL ignores
  awk -v b="$BLOCK_BEGIN" -v e="$BLOCK_END" '
    $0 == b { inside = 1; next }
    $0 == e { inside = 0; done = 1; next }
    /=/ { k = substr($0, 1, index($0, "=") - 1); if (inside) ours[k] = 1; else if (done && k in ours) print "note    " FILENAME " line " FNR " (" $0 ") is ignored by NCCL: the block above sets " k }' "$1"
}

ensure_conf_block() {  # PATH CONTENT
  local have after report count
  have=$(conf_block "$1")
  if [[ "$have" == "$2" ]]; then
    echo "ok      $1 rocefab block"
    conf_shadowed "$1"
    return
  fi
  case $have in
    "<"*">") report="DRIFT   $1 rocefab block: is '$have'"; count=1 ;;
    *) report=$(conf_drift "$1" "$have" "$2"); count=${report##*$'\n'}; report=${report%$'\n'*} ;;
  esac
  if (( count == 0 )); then  # the same settings, in another order or with other lines between them
    report="DRIFT   $1 rocefab block: the same settings, written otherwise"
    count=1
  fi
  if [[ $MODE == check ]]; then
    printf '%s\n' "$report"
    DRIFT=$((DRIFT + count))
    return
  fi
  write_block "$1" "$2" || true
  after=$(conf_block "$1")
  if [[ "$after" == "$2" ]]; then
    printf '%s\n' "${report//DRIFT   /changed }"
    CHANGED=$((CHANGED + count))
    conf_shadowed "$1"
  else
    echo "FAILED  $1 rocefab block: still '$after' after writing it"
    DRIFT=$((DRIFT + 1))
  fi
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
