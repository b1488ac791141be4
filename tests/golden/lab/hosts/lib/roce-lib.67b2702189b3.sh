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

# Readers run in this shell, not in a $(...) subshell, and leave what they read in VALUE: a --check reads ~40
# settings, and a process per read (subshell, tr, awk) cost more than the reads themselves. They read with bash
# builtins, and a NIC tool's report is read once and parsed for every setting it shows (one `mlnx_qos -i` gives
# trust, DSCP map and PFC) until anything is written.
VALUE=""
declare -A TOOL_OUT=()

tool_output() {  # COMMAND...: its stdout (trailing newlines dropped, as $(...) does) in OUT, asked once until a write
  local key="$*"
  if [[ -n ${TOOL_OUT[$key]+set} ]]; then OUT=${TOOL_OUT[$key]}; return; fi
  OUT=$("$@") || true  # a failing tool: what it printed is what was read, as before
  TOOL_OUT[$key]=$OUT
}

forget_reads() { TOOL_OUT=(); }

drop_newlines() {  # VAR: without its trailing newlines, as $(...) would leave it
  local -n text=$1
  while [[ $text == *$'\n' ]]; do text=${text%$'\n'}; done
}

slurp() {  # VAR: standard input as $(cat) would give it, without a process
  local whole=""
  IFS= read -r -d '' whole || true
  drop_newlines whole
  printf -v "$1" '%s' "$whole"
}

# A script run from the render folder loads this library from lib/ beside it (ROCEFAB_LIB); what it installs
# carries the library's text in place of the block that loaded it, as `rocefab apply` stages it, so the installed
# script needs nothing beside it. The markers are spelled in two parts so this text never holds them whole.
LIB_BEGIN="# >>> rocefab"" host library"
LIB_END="# <<< rocefab"" host library"

self_text() {  # VAR: this script as it is installed (see above)
  local whole="" lib=""
  IFS= read -r -d '' whole <"$0" || true
  if [[ -n ${ROCEFAB_LIB:-} && $whole == *"$LIB_BEGIN"*"$LIB_END"* ]]; then
    IFS= read -r -d '' lib <"$ROCEFAB_LIB" || true
    whole=${whole%%"$LIB_BEGIN"*}${lib%$'\n'}${whole#*"$LIB_END"}
  fi
  drop_newlines whole
  printf -v "$1" '%s' "$whole"
}

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
  VALUE=""
  "${reader[@]}" || true
  have=$VALUE
  if [[ "$have" == "$want" ]]; then
    echo "ok      $label = $want"
  elif [[ $MODE == check ]]; then
    echo "DRIFT   $label: is '$have', want '$want'"
    DRIFT=$((DRIFT + 1))
  else
    forget_reads
    "$@" >/dev/null || true
    forget_reads
    VALUE=""
    "${reader[@]}" || true
    after=$VALUE
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

require_port() {  # NETDEV: a fabric port, with the mlx5 driver's ECN/DCQCN attributes
  require_netdev "$1"
  require_path "$SYS/class/net/$1/ecn" "ECN/DCQCN sysfs of $1 (MLNX_OFED/DOCA mlx5 driver)"
}

rdma_present() { [[ -e "$SYS/class/infiniband/$1" ]]; }

rdma_presence() { if rdma_present "$1"; then VALUE=present; else VALUE=absent; fi; }

ensure_rdma_device() {  # RDMA_DEVICE: must exist; a bond's appears once its ports form the RoCE LAG
  converge "$1 RDMA device" present rdma_presence "$1" -- true
}

# An attribute that exists can still fail to read (an empty GID table entry, the speed of a link that is down):
# say so instead of failing. The read builtin cannot tell a read error from an empty file, so an empty answer is
# read again with tr, which can.
read_file() {
  if [[ ! -e "$1" ]]; then VALUE="<missing>"; return; fi
  VALUE=""
  { IFS= read -r -d '' VALUE; } 2>/dev/null <"$1" || true
  if [[ -z $VALUE ]]; then VALUE=$(tr -d '\n' <"$1" 2>/dev/null) || VALUE="<unreadable>"; fi
  VALUE=${VALUE//$'\n'/}
}

write_file() { printf '%s\n' "$2" >"$1"; }

ensure_sysfs() {  # LABEL PATH WANT
  converge "$1" "$3" read_file "$2" -- write_file "$2" "$3"
}

# Readers parse a tool's whole report (tool_output) rather than pipe it into grep or awk: no pipeline, so no
# process per read, and no writer killed by SIGPIPE under pipefail.

# LINE: its blank-separated fields in FIELDS, as awk splits them. (This file is a Jinja2 include, where a dollar,
# brace and hash would open a comment: array lengths are not taken, `"${!FIELDS[@]}"` lists the indexes instead.)
fields() { read -r -a FIELDS <<<"$1"; }

# up when the netdev's flags hold IFF_UP (0x1): the kernel's administrative state, the UP that `ip link show`
# prints among its <FLAGS> from the same flags (not LOWER_UP, the carrier). Read from sysfs with the read
# builtin: an `ip` process per netdev cost more than the rest of the read. (The kernel's flags: include/uapi/linux/if.h,
# IFF_UP 0x1; the sysfs file: Documentation/ABI/testing/sysfs-class-net.)
admin_state() {
  read_file "$SYS/class/net/$1/flags"
  if [[ $VALUE =~ ^0x[0-9a-fA-F]+$ ]] && ((VALUE & 0x1)); then VALUE=up; else VALUE=down; fi
}

ensure_up() {  # NETDEV
  converge "$1 admin state" up admin_state "$1" -- ip link set dev "$1" up
}

pause_state() {  # the 802.3x pause settings as "autoneg/rx/tx"
  local line value a="" r="" t=""
  tool_output ethtool -a "$1"
  while IFS= read -r line; do
    value=""
    if [[ $line == *:* ]]; then value=${line#*:}; value=${value%%:*}; value=${value//[$' \t']/}; fi
    case $line in
      Autonegotiate*) a=$value ;;
      RX:*) r=$value ;;
      TX:*) t=$value ;;
    esac
  done <<<"$OUT"
  VALUE="$a/$r/$t"
}

set_pause_off() {
  # PFC and 802.3x pause exclude each other; ethtool exits 78 (ioctl path) when nothing changed.
  ethtool -A "$1" autoneg off rx off tx off || [[ $? -eq 78 ]]
}

ensure_pause_off() {  # NETDEV
  converge "$1 global pause" "off/off/off" pause_state "$1" -- set_pause_off "$1"
}

ring_sizes() {  # current "rx/tx" ring sizes
  local line current="" rx="" tx=""
  tool_output ethtool -g "$1"
  while IFS= read -r line; do
    [[ $line == "Current hardware settings"* ]] && current=1
    [[ -n $current ]] || continue
    fields "$line"
    case ${FIELDS[0]:-} in
      RX:) rx=${FIELDS[1]:-} ;;
      TX:) tx=${FIELDS[1]:-} ;;
    esac
  done <<<"$OUT"
  VALUE="$rx/$tx"
}

set_rings() {
  ethtool -G "$1" rx "$2" tx "$3" || [[ $? -eq 80 ]]
}

ensure_rings() {  # NETDEV RX TX
  converge "$1 rings" "$2/$3" ring_sizes "$1" -- set_rings "$1" "$2" "$3"
}

# `mlnx_qos -i NETDEV` reports trust, the DSCP map, PFC and ETS at once: each reader below parses its part.
qos_trust() {  # the first "Priority trust state: X" line's X (any case of the label)
  local line
  VALUE=""
  tool_output mlnx_qos -i "$1"
  while IFS= read -r line; do
    if [[ ${line,,} == "priority trust state:"* ]]; then
      VALUE=${line#*:}
      VALUE=${VALUE#"${VALUE%%[! ]*}"}
      VALUE=${VALUE%%:*}
      return
    fi
  done <<<"$OUT"
}

qos_dscp_map() {  # the NIC's DSCP -> priority map as "dscp:prio" pairs in DSCP order (empty unless trusting DSCP)
  local line prio dscp entries=() map=() out=""
  tool_output mlnx_qos -i "$1"
  while IFS= read -r line; do
    fields "$line"
    [[ ${FIELDS[0]:-} =~ ^prio:[0-7]$ && ${FIELDS[1]:-} == dscp:* ]] || continue
    prio=${FIELDS[0]#prio:}
    IFS=, read -r -a entries <<<"${FIELDS[1]#dscp:}"
    for dscp in "${entries[@]}"; do
      # decimal, whatever the leading zeros ("09"); what is not a number counts as 0, as awk takes it
      if [[ $dscp =~ ^[[:space:]]*([0-9]+) ]]; then map[10#${BASH_REMATCH[1]}]=$prio
      elif [[ -n $dscp ]]; then map[0]=$prio; fi
    done
  done <<<"$OUT"
  for dscp in "${!map[@]}"; do  # an indexed array lists its indexes in ascending order
    if ((dscp < 64)); then out+="${out:+,}$dscp:${map[dscp]}"; fi
  done
  VALUE=$out
}

set_dscp_map() {  # NETDEV "d:p,...": set the entries that differ, in one mlnx_qos call (not with --trust: it refuses)
  local have entry entries args=()
  qos_dscp_map "$1"
  have=",$VALUE,"
  IFS=, read -r -a entries <<<"$2"
  for entry in "${entries[@]}"; do
    [[ $have == *",$entry,"* ]] || args+=(--dscp2prio "set,${entry%%:*},${entry##*:}")
  done
  [[ -z "${args[*]:-}" ]] || mlnx_qos -i "$1" "${args[@]}"
}

qos_pfc() {  # PFC enable flags for priorities 0-7, comma separated (the first "enabled" line's 8 fields)
  local line i
  VALUE=""
  tool_output mlnx_qos -i "$1"
  while IFS= read -r line; do
    fields "$line"
    [[ ${FIELDS[0]:-} == enabled ]] || continue
    VALUE=${FIELDS[1]:-}
    for ((i = 2; i <= 8; i++)); do VALUE+=",${FIELDS[i]:-}"; done
    return
  done <<<"$OUT"
}

qos_cable_len() {  # the "Cable len: N" line's N: the length the driver sizes the lossless buffer's xoff from
  local line
  VALUE=""
  tool_output mlnx_qos -i "$1"
  while IFS= read -r line; do
    if [[ $line == "Cable len:"* ]]; then
      fields "${line#*:}"
      VALUE=${FIELDS[0]:-}
      return
    fi
  done <<<"$OUT"
}

first_words() {  # FILE: the first space-separated word of each of its lines (as `cut -d' ' -f1`), in VALUE
  local line words=""
  VALUE=""
  [[ -r $1 ]] || return 0
  while IFS= read -r line || [[ -n $line ]]; do words+="${line%% *}"$'\n'; done <"$1"
  drop_newlines words
  VALUE=$words
}

bond_settings() {  # "mode/lacp_rate/xmit_hash_policy/miimon" of an existing bond, else "<absent>"
  local b="$SYS/class/net/$1/bonding" mode rate policy miimon=""
  if [[ ! -d "$b" ]]; then VALUE="<absent>"; return; fi
  first_words "$b/mode"; mode=$VALUE
  first_words "$b/lacp_rate"; rate=$VALUE
  first_words "$b/xmit_hash_policy"; policy=$VALUE
  { IFS= read -r -d '' miimon; } 2>/dev/null <"$b/miimon" || true
  VALUE="$mode/$rate/$policy/${miimon//$'\n'/}"
}

create_bond() {
  # The kernel only changes a bond's mode while it has no ports, so a wrong bond is rebuilt.
  if [[ -e "$SYS/class/net/$1" ]]; then ip link del dev "$1"; fi
  ip link add "$1" type bond mode 802.3ad miimon 100 lacp_rate fast xmit_hash_policy layer3+4
}

ensure_bond() {  # BOND
  converge "$1 bond" "802.3ad/fast/layer3+4/100" bond_settings "$1" -- create_bond "$1"
}

master_of() {  # the netdev the master link points to: the last part of its target
  local target
  if [[ ! -L "$SYS/class/net/$1/master" ]]; then VALUE="<none>"; return; fi
  target=$(readlink "$SYS/class/net/$1/master") || true
  while [[ $target == ?*/ ]]; do target=${target%/}; done
  VALUE=${target##*/}
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

ipv4_addresses() {  # the 4th field of each line, sorted (in the locale's order, as sort does), comma-joined
  local line address i n=0 sorted=()
  tool_output ip -4 -o addr show dev "$1"
  while IFS= read -r line; do
    fields "$line"
    [[ -n ${FIELDS[0]+set} ]] || continue
    address=${FIELDS[3]:-}
    for ((i = n++; i > 0; i--)); do
      [[ ${sorted[i - 1]} > $address ]] || break
      sorted[i]=${sorted[i - 1]}
    done
    sorted[i]=$address
  done <<<"$OUT"
  local IFS=,
  VALUE="${sorted[*]}"
}

set_address() {  # IPv4 only: addresses of other families (IPv6 link-local) are not ours to remove
  ip -4 addr flush dev "$1"
  ip addr add "$2" dev "$1"
}

ensure_address() {  # NETDEV ADDRESS/LEN
  converge "$1 ipv4 address" "$2" ipv4_addresses "$1" -- set_address "$1" "$2"
}

route_fields() {  # the last "via G", "dev D" and "src S" of OUT's lines, in GATEWAY, DEV and SRC
  local line i
  GATEWAY="" DEV="" SRC=""
  while IFS= read -r line; do
    fields "$line"
    for i in "${!FIELDS[@]}"; do
      [[ -n ${FIELDS[i + 1]+set} ]] || continue  # a last field has no value after it
      case ${FIELDS[i]} in
        via) GATEWAY=${FIELDS[i + 1]} ;;
        dev) DEV=${FIELDS[i + 1]} ;;
        src) SRC=${FIELDS[i + 1]} ;;
      esac
    done
  done <<<"$OUT"
}

gateway_dev() { route_fields; VALUE="$GATEWAY $DEV"; }  # of OUT's route lines: "G D"

route_via() {  # PREFIX: "gateway dev" of the route, if any
  tool_output ip -4 route show "$1"
  gateway_dev
}

ensure_route() {  # PREFIX GATEWAY NETDEV
  converge "route $1" "$2 $3" route_via "$1" -- ip route replace "$1" via "$2" dev "$3"
}

rule_table() {  # SOURCE: the tables of every `from SOURCE lookup N` rule, comma-joined in kernel order
  # Every rule counts: a stray rule placed before ours would take the traffic while ours looked right.
  local line i table tables=()
  tool_output ip -4 rule show
  while IFS= read -r line; do
    fields "$line"
    [[ ${FIELDS[1]:-} == from && ${FIELDS[2]:-} == "$1" ]] || continue
    table=""
    for i in "${!FIELDS[@]}"; do
      if ((i >= 3)) && [[ ${FIELDS[i]} == lookup && -n ${FIELDS[i + 1]+set} ]]; then table=${FIELDS[i + 1]}; fi
    done
    tables+=("$table")
  done <<<"$OUT"
  local IFS=,
  VALUE="${tables[*]}"
}

set_rule() {  # one rule per source: drop any other first
  while ip -4 rule del from "$1" 2>/dev/null; do :; done
  ip -4 rule add from "$1" lookup "$2"
}

ensure_rule() {  # SOURCE TABLE
  converge "rule from $1" "$2" rule_table "$1" -- set_rule "$1" "$2"
}

table_route_via() {  # PREFIX TABLE: "gateway dev" of the route in that table, if any
  tool_output ip -4 route show table "$2" "$1"
  gateway_dev
}

table_link_route() {  # PREFIX TABLE: "dev src" of the on-link route in that table, "via G dev src" if not on-link
  tool_output ip -4 route show table "$2" "$1"
  route_fields
  VALUE="${GATEWAY:+via $GATEWAY }$DEV $SRC"
}

ensure_table_link() {  # PREFIX NETDEV SOURCE TABLE: the interface's own subnet, on-link, from its own address
  converge "route $1 table $4" "$2 $3" table_link_route "$1" "$4" -- ip route replace "$1" dev "$2" src "$3" table "$4"
}

ensure_table_route() {  # PREFIX GATEWAY NETDEV TABLE
  converge "route $1 table $4" "$2 $3" table_route_via "$1" "$4" -- ip route replace "$1" via "$2" dev "$3" table "$4"
}

# cma_roce_tos / cma_roce_mode print the current value when called without -t / -m. They create and remove
# a transient configfs entry to read it; the value itself is left untouched.
roce_tos() { tool_output cma_roce_tos -d "$1" -p 1; VALUE=${OUT##*$'\n'}; }  # the last line
roce_mode() { tool_output cma_roce_mode -d "$1" -p 1; VALUE=${OUT##*$'\n'}; }

ipv4_gid() {  # A.B.C.D: its RoCE v2 GID as sysfs prints it, the IPv4-mapped IPv6 address ::ffff:A.B.C.D
  local octets
  IFS=. read -r -a octets <<<"$1"
  printf -v VALUE '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${octets[@]}"
}

roce_v2_gid_indexes() {  # RDMA_DEVICE GID NETDEV: the GID table indexes holding GID as a RoCE v2 GID of NETDEV
  local port="$SYS/class/infiniband/$1/ports/1" entry index gid type ndev found=()  # found[index]: in index order
  for entry in "$port"/gids/*; do
    [[ -e $entry ]] || continue
    index=${entry##*/}
    # builtin reads: a GID table has up to 255 entries, one process each would be slow; empty entries have
    # unreadable attributes
    read -r gid <"$entry" 2>/dev/null || continue
    [[ $gid == "$2" ]] || continue
    read -r type <"$port/gid_attrs/types/$index" 2>/dev/null || continue
    read -r ndev <"$port/gid_attrs/ndevs/$index" 2>/dev/null || continue
    [[ $type == "RoCE v2" && $ndev == "$3" && $index =~ ^[0-9]+$ ]] && found[10#$index]=$index
  done
  local IFS=,
  if [[ -n ${found[*]+set} ]]; then VALUE="${found[*]}"; else VALUE="<none>"; fi
}

verify_gid() {  # RDMA_DEVICE NETDEV IPV4 [INDEX]: a RoCE v2 GID for the address exists (at INDEX, if NCCL is told one)
  local gid found tries=0
  ipv4_gid "$3"
  gid=$VALUE
  roce_v2_gid_indexes "$1" "$gid" "$2"
  found=$VALUE
  # the kernel fills the GID table from a work queue after an address is added: give it a moment
  while [[ $found == "<none>" && $MODE == apply && $tries -lt 10 ]]; do
    sleep 0.2
    tries=$((tries + 1))
    roce_v2_gid_indexes "$1" "$gid" "$2"
    found=$VALUE
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
  if [[ ! -e $1 ]]; then VALUE="<missing>"; return; fi
  while IFS= read -r line; do
    # the plain number is what a write leaves in a file that is not mlx5's attribute (a test root)
    if [[ $line =~ ^(Global\ tclass=)?([0-9]+)$ ]]; then VALUE=${BASH_REMATCH[2]}; return; fi
  done <"$1"
  VALUE="<unset>"
}

ensure_tclass() {  # RDMA_DEVICE TOS
  local path="$SYS/class/infiniband/$1/tc/1/traffic_class"
  converge "$1 default traffic class" "$2" device_tclass "$path" -- write_file "$path" "$2"
}

verify_speed() {  # NETDEV GBPS: a link up at another speed than planned (wrong optic or cable, badly seated)
  local have want=$(($2 * 1000))
  read_file "$SYS/class/net/$1/operstate"
  if [[ $VALUE != up ]]; then
    echo "note    $1 link is down: its speed is checked once it is up"
    return
  fi
  read_file "$SYS/class/net/$1/speed"
  have=$VALUE
  if [[ "$have" == "$want" ]]; then
    echo "ok      $1 link speed = $want Mb/s"
  else
    echo "DRIFT   $1 link speed is '$have' Mb/s, want '$want' (check the optic or cable and its seating)"
    DRIFT=$((DRIFT + 1))
  fi
}

digest() { VALUE=$(sha256sum <<<"$1") || true; VALUE=${VALUE:0:16}; }  # of the text and a newline, as written
file_digest() { if [[ -r "$1" ]]; then VALUE=$(sha256sum <"$1") || true; VALUE=${VALUE:0:16}; else VALUE="<missing>"; fi; }

install_file() { mkdir -p "$(dirname "$1")" && write_file "$1" "$2"; }

ensure_installed() {  # PATH CONTENT: the whole file, compared by digest, its folder made if need be
  digest "$2"
  converge "$1" "$VALUE" file_digest "$1" -- install_file "$1" "$2"
}

unit_state() { VALUE=$(systemctl is-enabled "$1" 2>/dev/null) || true; }

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
  local line number=0 inside="" seen="" top=yes body=""
  if [[ ! -r $1 ]]; then VALUE="<missing>"; return; fi
  while IFS= read -r line || [[ -n $line ]]; do
    number=$((number + 1))
    if [[ $line == "$BLOCK_BEGIN" ]]; then
      ((number == 1)) || top=no
      inside=1 seen=1
    elif [[ $line == "$BLOCK_END" ]]; then
      inside=""
    elif [[ -n $inside ]]; then
      body+="$line"$'\n'
    fi
  done <"$1"
  if [[ -z $seen ]]; then VALUE="<absent>"; elif [[ $top == no ]]; then VALUE="<not at the top>"; else
    drop_newlines body
    VALUE=$body
  fi
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
  local line key number=0 inside="" done=""
  local -A ours=()
  while IFS= read -r line || [[ -n $line ]]; do
    number=$((number + 1))
    if [[ $line == "$BLOCK_BEGIN" ]]; then inside=1; continue; fi
    if [[ $line == "$BLOCK_END" ]]; then inside="" done=1; continue; fi
    [[ $line == *=* ]] || continue
    key=${line%%=*}
    if [[ -n $inside ]]; then ours[$key]=1
    elif [[ -n $done && -n ${ours[$key]+set} ]]; then
      echo "note    $1 line $number ($line) is ignored by NCCL: the block above sets $key"
    fi
  done <"$1"
}

ensure_conf_block() {  # PATH CONTENT
  local have after report count
  conf_block "$1"
  have=$VALUE
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
  conf_block "$1"
  after=$VALUE
  if [[ "$after" == "$2" ]]; then
    printf '%s\n' "${report//DRIFT   /changed }"
    CHANGED=$((CHANGED + count))
    conf_shadowed "$1"
  else
    echo "FAILED  $1 rocefab block: still '$after' after writing it"
    DRIFT=$((DRIFT + 1))
  fi
}

# --- A port's and an RDMA device's settings, the same steps for every one of them: the script says which ports
# and devices, with what differs between them (the cable), and the fabric's values once, in FABRIC_* variables:
# FABRIC_DSCP_MAP ("d:p" for all 64 DSCPs), FABRIC_PFC (enable flags of priorities 0-7), FABRIC_ECN_PRIORITIES
# (space separated), FABRIC_CNP_DSCP, FABRIC_CNP_PRIORITY, FABRIC_RX_RING, FABRIC_TX_RING, FABRIC_MTU and
# FABRIC_ROCE_TOS.

ensure_port_qos() {  # NETDEV CABLE_M: no 802.3x pause, rings, DSCP trust and map, PFC, cable length, DCQCN, CNPs
  local netdev=$1 cable=$2 prio
  ensure_pause_off "$netdev"
  ensure_rings "$netdev" "$FABRIC_RX_RING" "$FABRIC_TX_RING"
  converge "$netdev qos trust" dscp qos_trust "$netdev" -- mlnx_qos -i "$netdev" --trust dscp
  # The NIC's own DSCP map sends d to priority d >> 3; the fabric's differs wherever RoCE or CNP use another
  # priority and for DSCPs no one named (priority 0, away from the lossless and CNP queues).
  converge "$netdev dscp map" "$FABRIC_DSCP_MAP" qos_dscp_map "$netdev" -- set_dscp_map "$netdev" "$FABRIC_DSCP_MAP"
  converge "$netdev pfc priorities" "$FABRIC_PFC" qos_pfc "$netdev" -- mlnx_qos -i "$netdev" --pfc "$FABRIC_PFC"
  # The receive buffer's pause threshold grows with the cable (the driver assumes 7 m): the planned length, as the
  # switch end's headroom was sized for.
  converge "$netdev cable length" "$cable" qos_cable_len "$netdev" -- mlnx_qos -i "$netdev" --cable_len "$cable"
  for prio in $FABRIC_ECN_PRIORITIES; do
    ensure_sysfs "$netdev DCQCN notification point, priority $prio" "$SYS/class/net/$netdev/ecn/roce_np/enable/$prio" 1
    ensure_sysfs "$netdev DCQCN reaction point, priority $prio" "$SYS/class/net/$netdev/ecn/roce_rp/enable/$prio" 1
  done
  ensure_sysfs "$netdev CNP DSCP" "$SYS/class/net/$netdev/ecn/roce_np/cnp_dscp" "$FABRIC_CNP_DSCP"
  ensure_sysfs "$netdev CNP priority" "$SYS/class/net/$netdev/ecn/roce_np/cnp_802p_prio" "$FABRIC_CNP_PRIORITY"
}

ensure_mtu() {  # NETDEV: the fabric's MTU
  converge "$1 mtu" "$FABRIC_MTU" read_file "$SYS/class/net/$1/mtu" -- ip link set dev "$1" mtu "$FABRIC_MTU"
}

ensure_roce() {  # RDMA_DEVICE NETDEV IPV4 [GID_INDEX]: RoCE v2 and the fabric's ToS for rdma_cm and verbs, the GID
  ensure_rdma_device "$1"
  if rdma_present "$1"; then
    ensure_tclass "$1" "$FABRIC_ROCE_TOS"
    converge "$1 rdma_cm RoCE mode" "RoCE v2" roce_mode "$1" -- cma_roce_mode -d "$1" -p 1 -m 2
    converge "$1 rdma_cm default ToS" "$FABRIC_ROCE_TOS" roce_tos "$1" -- cma_roce_tos -d "$1" -p 1 -t "$FABRIC_ROCE_TOS"
    verify_gid "$@"
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
