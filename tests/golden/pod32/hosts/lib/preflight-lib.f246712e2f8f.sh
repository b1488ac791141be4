
# --- rows: check, subject, verdict (pass / warn / fail), observed, expected, hint ------------------------------------
R_CHECK=() R_SUBJECT=() R_VERDICT=() R_OBSERVED=() R_EXPECTED=() R_HINT=()
PASS=0 WARN=0 FAIL=0
row() {  # a hint only where there is something to do
  R_CHECK+=("$1"); R_SUBJECT+=("$2"); R_VERDICT+=("$3"); R_OBSERVED+=("$4"); R_EXPECTED+=("$5")
  if [[ $3 == pass ]]; then R_HINT+=(""); else R_HINT+=("${6:-}"); fi
  case $3 in
    pass) PASS=$((PASS + 1)) ;;
    warn) WARN=$((WARN + 1)) ;;
    *) FAIL=$((FAIL + 1)) ;;
  esac
}

have() { command -v "$1" >/dev/null 2>&1; }
PCI_RE='^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'

# Readers consume their whole input (no `grep -q`, no early `exit` in awk): under pipefail a writer killed by
# SIGPIPE would turn a finding into a failed read. Names reach awk through ENVIRON, which, unlike -v, keeps
# backslashes as they are.
pci_chain() {  # SYSFS_PATH: the PCI functions in it, root port first, one a line
  printf '%s\n' "$1" | tr '/' '\n' | grep -E "$PCI_RE" || true
}

pci_path() {  # ADDRESS: its folder under devices/, or the bare address when sysfs does not list it
  local path
  path=$(readlink -f "$SYS/bus/pci/devices/$1" 2>/dev/null) || path=""
  if [[ -n $path && ${path##*/} == "$1" ]]; then echo "$path"; else echo "$1"; fi
}

netdev_pci_path() {  # NETDEV: the folder of its PCI function, from its device link or else from ethtool's bus-info
  local path bus
  path=$(readlink -f "$SYS/class/net/$1/device" 2>/dev/null) || path=""
  if [[ ${path##*/} =~ $PCI_RE ]]; then echo "$path"; return; fi
  if have ethtool; then
    bus=$(ethtool -i "$1" 2>/dev/null | awk -F': ' '$1 == "bus-info" {print $2}')
    if [[ $bus =~ $PCI_RE ]]; then pci_path "$bus"; fi
  fi
}

pci_block() {  # ADDRESS: its paragraph of `lspci -D -vvv`
  printf '%s\n' "$LSPCI" | A="$1" awk '/^[^ \t]/ {on = ($1 == ENVIRON["A"])} on'
}

clean() {  # TEXT: one printable line for the table (a name from the plan is shown, never interpreted)
  local s=${1//[[:cntrl:]]/?}
  printf '%s' "$s"
}

json_str() {  # TEXT: a JSON string
  local s=$1 out="" c i
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\r'/\\r}; s=${s//$'\t'/\\t}
  if [[ $s == *[[:cntrl:]]* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      if [[ $c == [[:cntrl:]] ]]; then printf -v c '\\u%04x' "'$c"; fi
      out+=$c
    done
    s=$out
  fi
  printf '"%s"' "$s"
}

# --- what the tools say, read once ------------------------------------------------------------------------------------
LSPCI="" NVSMI_MEM="" NVSMI_TOPO="" RDMA_LINKS=""
if have lspci; then LSPCI=$(lspci -D -vvv 2>/dev/null); fi
if have nvidia-smi; then
  NVSMI_MEM=$(nvidia-smi -q -d MEMORY 2>&1) || NVSMI_MEM="!${NVSMI_MEM}"
  NVSMI_TOPO=$(nvidia-smi topo -m 2>/dev/null) || NVSMI_TOPO=""
fi
if have rdma; then RDMA_LINKS=$(rdma link show 2>/dev/null) || RDMA_LINKS=""; fi

# GPUs: "GPU 00000000:18:00.0" per GPU in nvidia-smi -q (NVML's 8-digit domain, upper case); without nvidia-smi,
# lspci's NVIDIA display and 3D controllers
GPUS=()
if [[ -n $NVSMI_MEM && $NVSMI_MEM != '!'* ]]; then
  mapfile -t GPUS < <(printf '%s\n' "$NVSMI_MEM" | awk '/^GPU [0-9A-Fa-f]+:/ {g = tolower($2); print substr(g, length(g) - 11)}')
elif [[ -n $LSPCI ]]; then
  mapfile -t GPUS < <(printf '%s\n' "$LSPCI" | awk '/^[0-9a-f]/ && /(3D|VGA compatible) controller: NVIDIA/ {print $1}')
fi
PORT_PATH=()  # the PCI function folder of each plan entry (ports only)
for i in "${!PLAN_NAME[@]}"; do
  PORT_PATH[i]=""
  if [[ ${PLAN_KIND[i]} == port ]]; then PORT_PATH[i]=$(netdev_pci_path "${PLAN_NAME[i]}"); fi
done

# --- IOMMU: passthrough or off is what GPUDirect RDMA wants --------------------------------------------------------
check_iommu() {
  local words="" word args=() groups=0 types="" type group verdict observed
  if [[ -r $PROC/cmdline ]]; then read -r -a args <"$PROC/cmdline" || true; fi
  for word in "${args[@]}"; do
    case $word in iommu=* | intel_iommu=* | amd_iommu=*) words+="${words:+ }$word" ;; esac
  done
  for group in "$SYS"/kernel/iommu_groups/*; do
    [[ -d $group ]] || continue
    groups=$((groups + 1))
    # the group's default domain (Linux 5.11+): identity is passthrough, DMA or DMA-FQ translates
    if [[ -r $group/type ]] && read -r type <"$group/type" && [[ " $types " != *" $type "* ]]; then
      types+="${types:+ }$type"
    fi
  done
  if (( groups == 0 )); then
    verdict=pass observed="off (no IOMMU groups)"
  elif [[ $types == identity ]]; then
    verdict=pass observed="passthrough ($groups groups, domain identity)"
  elif [[ -n $types ]]; then
    verdict=warn observed="translated ($groups groups, domain ${types// /, })"
  elif [[ " $words " == *" iommu=pt "* ]]; then
    verdict=pass observed="passthrough ($groups groups, iommu=pt)"
  else
    verdict=warn observed="on, mode unknown ($groups groups)"
  fi
  row iommu kernel "$verdict" "$observed; cmdline: ${words:-no IOMMU option}" "passthrough (iommu=pt) or off" \
    "add iommu=pt to the kernel command line and reboot: a translating IOMMU slows GPUDirect RDMA or breaks it"
}

# --- ACS on the PCIe switch ports above the GPUs and the NIC ports -------------------------------------------------
# Below the root port only: peer-to-peer between devices under one switch never reaches it, and Linux enables ACS
# there on its own. A switch port with ReqRedir+ or CmpltRedir+ sends every GPU<->NIC transfer up to the root
# complex.
check_acs() {
  if [[ -z $LSPCI ]]; then
    row acs "PCIe switch ports" warn "lspci not installed or printed nothing" "ReqRedir- CmpltRedir-" \
      "install pciutils and run this as root"
    return
  fi
  local -A above=()
  local order=() labels=() paths=() chain=() i j bridge block ctl flags
  for i in "${!GPUS[@]}"; do labels+=("GPU ${GPUS[i]}"); paths+=("$(pci_path "${GPUS[i]}")"); done
  for i in "${!PLAN_NAME[@]}"; do
    if [[ -n ${PORT_PATH[i]} ]]; then labels+=("${PLAN_NAME[i]}"); paths+=("${PORT_PATH[i]}"); fi
  done
  for i in "${!paths[@]}"; do
    mapfile -t chain < <(pci_chain "${paths[i]}")
    for ((j = 1; j < ${#chain[@]} - 1; j++)); do
      bridge=${chain[j]}
      if [[ -z ${above[$bridge]:-} ]]; then order+=("$bridge"); above[$bridge]=${labels[i]}; fi
    done
  done
  if (( ${#order[@]} == 0 )); then
    row acs "PCIe switch ports" pass "no switch port above the GPUs and NICs" "ReqRedir- CmpltRedir-"
    return
  fi
  for bridge in "${order[@]}"; do
    block=$(pci_block "$bridge")
    ctl=$(printf '%s\n' "$block" | awk '$1 == "ACSCtl:" && !done {$1 = ""; print substr($0, 2); done = 1}')
    if [[ -z $block ]]; then
      row acs "$bridge (above ${above[$bridge]})" warn "not listed by lspci" "ReqRedir- CmpltRedir-" \
        "run this as root"
    elif [[ -z $ctl && $block == *"<access denied>"* ]]; then
      row acs "$bridge (above ${above[$bridge]})" warn "capabilities not readable" "ReqRedir- CmpltRedir-" \
        "run this as root: lspci shows capabilities to root only"
    elif [[ -z $ctl ]]; then
      row acs "$bridge (above ${above[$bridge]})" pass "no ACS capability" "ReqRedir- CmpltRedir-"
    else
      flags=$(printf '%s\n' "$ctl" | tr ' ' '\n' | grep -E '^(ReqRedir|CmpltRedir)[+-]$' | paste -sd' ' -)
      if [[ " $flags " == *"+ "* ]]; then
        row acs "$bridge (above ${above[$bridge]})" fail "ACSCtl $flags" "ReqRedir- CmpltRedir-" \
          "disable ACS redirect on this port (BIOS, or setpci at boot): it routes GPU-NIC peer-to-peer through the CPU"
      else
        row acs "$bridge (above ${above[$bridge]})" pass "ACSCtl $flags" "ReqRedir- CmpltRedir-"
      fi
    fi
  done
}

# --- each NIC port's PCIe link: trained at its capability ---------------------------------------------------------
link_state() {  # lspci paragraph on stdin -> "verdict;speed;width;cap speed;cap width"
  awk '
    function value(word,    i) { for (i = 2; i < NF; i++) if ($i == word) return $(i + 1); return "" }
    $1 == "LnkCap:" && cs == "" { cs = value("Speed"); cw = value("Width") }
    $1 == "LnkSta:" && ss == "" { ss = value("Speed"); sw = value("Width") }
    END {
      gsub(/,/, "", cs); gsub(/,/, "", cw); gsub(/,/, "", ss); gsub(/,/, "", sw)
      c = cs; s = ss; sub(/GT\/s$/, "", c); sub(/GT\/s$/, "", s); cx = cw; sx = sw; sub(/^x/, "", cx); sub(/^x/, "", sx)
      if (cs == "" || ss == "") verdict = "missing"
      else if (c !~ /^[0-9.]+$/ || s !~ /^[0-9.]+$/ || cx !~ /^[0-9]+$/ || sx !~ /^[0-9]+$/) verdict = "unknown"
      else if (s + 0 < c + 0 || sx + 0 < cx + 0) verdict = "downgraded"
      else verdict = "ok"
      print verdict ";" ss ";" sw ";" cs ";" cw
    }'
}

check_pcie_links() {
  local i name address block verdict speed width cap_speed cap_width
  for i in "${!PLAN_NAME[@]}"; do
    [[ ${PLAN_KIND[i]} == port ]] || continue
    name=${PLAN_NAME[i]}
    address=${PORT_PATH[i]##*/}
    if [[ -z $address ]]; then
      row pcie-link "$name" fail "no PCI function (no such netdev, or not a PCI NIC)" "its capability" \
        "check the interface name and that the mlx5 driver bound the card"
      continue
    fi
    if [[ -z $LSPCI ]]; then
      row pcie-link "$name ($address)" warn "lspci not installed or printed nothing" "its capability" \
        "install pciutils and run this as root"
      continue
    fi
    block=$(pci_block "$address")
    IFS=';' read -r verdict speed width cap_speed cap_width < <(printf '%s\n' "$block" | link_state)
    case $verdict in
      ok) row pcie-link "$name ($address)" pass "$speed $width" "$cap_speed $cap_width (its capability)" ;;
      downgraded)
        row pcie-link "$name ($address)" fail "$speed $width (downgraded)" "$cap_speed $cap_width (its capability)" \
          "reseat the card or give it a full-width slot, and check the BIOS PCIe speed: the NIC cannot reach line rate" ;;
      unknown)
        row pcie-link "$name ($address)" warn "$speed $width" "$cap_speed $cap_width (its capability)" \
          "this lspci does not decode the link speed: update pciutils" ;;
      *)
        row pcie-link "$name ($address)" warn "link not shown by lspci" "its capability" \
          "run this as root: lspci shows capabilities to root only" ;;
    esac
  done
}

# --- GPUs' BAR1: large enough to expose their memory to the NIC ----------------------------------------------------
check_bar1() {
  if [[ -z $NVSMI_MEM ]]; then
    row bar1 GPUs warn "nvidia-smi not installed" "BAR1 >= GPU memory" "install the NVIDIA driver"
    return
  fi
  if [[ $NVSMI_MEM == '!'* ]]; then
    row bar1 GPUs warn "nvidia-smi failed: $(printf '%s\n' "${NVSMI_MEM#!}" | head -n 1)" "BAR1 >= GPU memory" \
      "check the NVIDIA driver (nvidia-smi must list the GPUs)"
    return
  fi
  local gpu fb bar
  local found=0
  while IFS=';' read -r gpu fb bar; do
    found=1
    if [[ ! $fb =~ ^[0-9]+$ || ! $bar =~ ^[0-9]+$ ]]; then
      row bar1 "GPU $gpu" warn "BAR1 '$bar', memory '$fb'" "BAR1 >= GPU memory" "nvidia-smi did not report the sizes"
    elif (( bar < 1024 )); then
      row bar1 "GPU $gpu" fail "$bar MiB" ">= $fb MiB (the GPU's memory)" \
        "enable Above 4G Decoding and Resizable BAR in the BIOS (A40/L40-class boards: switch the display mode)"
    elif (( bar < fb )); then
      row bar1 "GPU $gpu" warn "$bar MiB" ">= $fb MiB (the GPU's memory)" \
        "enable Resizable BAR in the BIOS: the NIC can reach only part of the GPU's memory"
    else
      row bar1 "GPU $gpu" pass "$bar MiB" ">= $fb MiB (the GPU's memory)"
    fi
  done < <(printf '%s\n' "$NVSMI_MEM" | awk '
    function mib(text,    p) { split(text, p, " "); if (p[2] == "GiB") return p[1] * 1024; return p[1] }
    /^GPU [0-9A-Fa-f]+:/ { g = tolower($2); gpu = substr(g, length(g) - 11); order[++n] = gpu; section = ""; next }
    /^    [A-Za-z]/ { section = $0; sub(/^ +/, "", section); sub(/ +$/, "", section); next }
    gpu != "" && /^ +Total +:/ {
      v = $0; sub(/^[^:]*: */, "", v)
      if (section == "FB Memory Usage") fb[gpu] = mib(v); else if (section == "BAR1 Memory Usage") bar[gpu] = mib(v)
    }
    END { for (i = 1; i <= n; i++) print order[i] ";" fb[order[i]] ";" bar[order[i]] }')
  if (( found == 0 )); then
    row bar1 GPUs warn "no GPU listed by nvidia-smi" "BAR1 >= GPU memory" "check the NVIDIA driver"
  fi
}

# --- driver stack: MLNX_OFED / DOCA-OFED, NIC firmware, nvidia_peermem ---------------------------------------------
check_ofed() {
  local release=""
  if have ofed_info; then release=$(ofed_info -s 2>/dev/null | head -n 1); fi
  release=${release%:}
  if [[ -n $release ]]; then
    row ofed host pass "$release" "MLNX_OFED or DOCA-OFED"
  else
    row ofed host warn "ofed_info not installed (inbox driver)" "MLNX_OFED or DOCA-OFED" \
      "install DOCA-OFED: mlnx_qos, the mlx5 ECN sysfs and the peer-memory API nvidia_peermem needs come with it"
  fi
}

check_firmware() {
  local i name firmware version versions="" first="" mismatch=0
  for i in "${!PLAN_NAME[@]}"; do
    [[ ${PLAN_KIND[i]} == port ]] || continue
    name=${PLAN_NAME[i]}
    firmware=""
    if have ethtool; then
      firmware=$(ethtool -i "$name" 2>/dev/null | awk -F': ' '$1 == "firmware-version" {print $2}')
    fi
    if [[ -z $firmware ]]; then
      row firmware "$name" warn "$(if have ethtool; then echo "not reported"; else echo "ethtool not installed"; fi)" \
        "one release on every planned NIC" "check that the netdev exists and the mlx5 driver bound it"
      continue
    fi
    version=${firmware%% *}
    row firmware "$name" pass "$firmware" "one release on every planned NIC"
    versions+="${versions:+, }$version ($name)"
    if [[ -z $first ]]; then first=$version; elif [[ $version != "$first" ]]; then mismatch=1; fi
  done
  [[ -n $versions ]] || return 0
  if (( mismatch )); then
    row firmware-match "planned NICs" fail "$versions" "one release on every planned NIC" \
      "flash every NIC to the same release (mlxfwmanager): they differ in RoCE, congestion control and LAG behaviour"
  else
    row firmware-match "planned NICs" pass "$first on every planned NIC" "one release on every planned NIC"
  fi
}

check_peermem() {
  local name rest found=""
  if [[ ! -r $PROC/modules ]]; then
    row nvidia-peermem host warn "$PROC/modules not readable" "nvidia_peermem loaded" "run this on the host itself"
    return
  fi
  while read -r name rest; do
    case $name in
      nvidia_peermem) found="nvidia_peermem loaded" ;;
      nv_peer_mem) [[ -n $found ]] || found="nv_peer_mem (its predecessor) loaded" ;;
    esac
  done <"$PROC/modules"
  if [[ -n $found ]]; then
    row nvidia-peermem host pass "$found" "nvidia_peermem loaded"
  else
    row nvidia-peermem host fail "not loaded" "nvidia_peermem loaded" \
      "modprobe nvidia_peermem and list it in /etc/modules-load.d: without it (or DMA-BUF) NCCL stages GPU data through host memory"
  fi
}

# --- per planned RDMA device: a GPU nearby, the link up on its netdev, a RoCE v2 GID for its address ---------------
affinity_of() {  # RDMA_DEVICE: "LEVEL GPUn" of the nearest GPU in `nvidia-smi topo -m`, "absent" if not listed
  printf '%s\n' "$NVSMI_TOPO" | D="$1" awk -F'\t' '
    function trim(s) { gsub(/^ +| +$/, "", s); return s }
    { gsub(/\033\[[0-9;]*m/, "") }
    /^NIC Legend:/ { legend = 1; next }
    legend { line = trim($0); if (line ~ /^NIC[0-9]+: /) { split(line, p, ": "); if (p[2] == ENVIRON["D"]) label = p[1] }; next }
    !header && $1 == "" && NF > 1 { header = 1; for (i = 2; i <= NF; i++) col[i] = trim($i); cols = NF; next }
    header && $1 ~ /^GPU[0-9]+$/ { rows[++n] = $0 }
    END {
      rank["PIX"] = 1; rank["PXB"] = 2; rank["PHB"] = 3; rank["NODE"] = 4; rank["SYS"] = 5
      if (label == "") label = ENVIRON["D"]  # older drivers head the columns with the device names
      for (i = 2; i <= cols; i++) if (col[i] == label) j = i
      if (!j) { print "absent"; exit }
      for (r = 1; r <= n; r++) {
        split(rows[r], f, "\t"); v = trim(f[j])
        if ((v in rank) && (best == "" || rank[v] < rank[best])) { best = v; gpu = trim(f[1]) }
      }
      if (best == "") print "absent"; else print best " " gpu
    }'
}

check_affinity() {  # RDMA_DEVICE
  local found
  if [[ -z $NVSMI_TOPO ]]; then
    row gpu-affinity "$1" warn "nvidia-smi topo -m not available" "a GPU at PIX or PXB" "install the NVIDIA driver"
    return
  fi
  found=$(affinity_of "$1")
  case ${found%% *} in
    PIX | PXB) row gpu-affinity "$1" pass "${found%% *} to ${found#* }" "a GPU at PIX or PXB" ;;
    PHB | NODE)
      row gpu-affinity "$1" warn "${found%% *} to ${found#* } (the nearest GPU)" "a GPU at PIX or PXB" \
        "no GPU shares a PCIe switch with it: GPUDirect RDMA crosses the CPU; move the card next to a GPU" ;;
    SYS)
      row gpu-affinity "$1" fail "SYS to ${found#* } (the nearest GPU)" "a GPU at PIX or PXB" \
        "every GPU is on the other socket: move the card to a slot beside its GPUs" ;;
    *)
      row gpu-affinity "$1" warn "not in nvidia-smi topo -m" "a GPU at PIX or PXB" \
        "check that the RDMA device exists (rdma link show) and that nvidia-smi sees the NICs" ;;
  esac
}

rdma_link_of() {  # RDMA_DEVICE: "state<TAB>physical state<TAB>netdev" of port 1, nothing when not listed
  # iproute2 prints "link DEV/1 state ..."; MLNX_OFED's adds a colon ("DEV/1:"), newer ones an index first
  printf '%s\n' "$RDMA_LINKS" | D="$1" awk '
    !done {
      for (i = 1; i <= NF; i++) { f = $i; sub(/:$/, "", f); if (f == ENVIRON["D"] "/1") hit = 1 }
      if (hit) {
        for (i = 1; i < NF; i++) {
          if ($i == "state") st = $(i + 1); if ($i == "physical_state") ph = $(i + 1); if ($i == "netdev") nd = $(i + 1)
        }
        printf "%s\t%s\t%s\n", st, ph, nd; done = 1
      }
    }'
}

check_rdma_link() {  # RDMA_DEVICE NETDEV
  local state physical netdev
  if ! have rdma; then
    row rdma-link "$1" warn "rdma (iproute2) not installed" "ACTIVE LINK_UP on $2" "install iproute2's rdma tool"
    return
  fi
  IFS=$'\t' read -r state physical netdev < <(rdma_link_of "$1")
  if [[ -z ${state:-} ]]; then
    row rdma-link "$1" fail "not listed by rdma link show" "ACTIVE LINK_UP on $2" \
      "no such RDMA device: check the mlx5 driver, or run $ROCE_SCRIPT (a RoCE LAG device appears with its bond)"
  elif [[ $state == ACTIVE && $physical == LINK_UP && $netdev == "$2" ]]; then
    row rdma-link "$1" pass "ACTIVE LINK_UP on $netdev" "ACTIVE LINK_UP on $2"
  elif [[ $netdev != "$2" ]]; then
    row rdma-link "$1" fail "$state $physical on ${netdev:-no netdev}" "ACTIVE LINK_UP on $2" \
      "the RDMA device belongs to another netdev: check the plan's device names against rdma link show"
  else
    row rdma-link "$1" fail "$state $physical on $netdev" "ACTIVE LINK_UP on $2" \
      "bring $2 up and check its cable and switch port ($ROCE_SCRIPT --check)"
  fi
}

ipv4_gid() {  # A.B.C.D: its RoCE v2 GID as sysfs prints it, the IPv4-mapped ::ffff:A.B.C.D
  local a b c d
  if [[ ! $1 =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then echo "<not an IPv4 address>"; return; fi
  IFS=. read -r a b c d < <(printf '%s\n' "$1")
  printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$((10#$a))" "$((10#$b))" "$((10#$c))" "$((10#$d))"
}

check_gid() {  # RDMA_DEVICE NETDEV IPV4
  local port="$SYS/class/infiniband/$1/ports/1" want entry index gid type ndev found=""
  want=$(ipv4_gid "$3")
  if [[ ! -d $port/gids ]]; then
    row roce-gid "$1" fail "no GID table (no such RDMA device)" "RoCE v2 GID of $3 on $2" \
      "check the mlx5 driver, or run $ROCE_SCRIPT (a RoCE LAG device appears with its bond)"
    return
  fi
  for entry in "$port"/gids/*; do
    [[ -e $entry ]] || continue
    index=${entry##*/}
    read -r gid <"$entry" 2>/dev/null || continue  # an empty entry's attributes fail to read
    [[ $gid == "$want" ]] || continue
    read -r type <"$port/gid_attrs/types/$index" 2>/dev/null || continue
    read -r ndev <"$port/gid_attrs/ndevs/$index" 2>/dev/null || continue
    if [[ $type == "RoCE v2" && $ndev == "$2" ]]; then found+="${found:+,}$index"; fi
  done
  if [[ -n $found ]]; then
    row roce-gid "$1" pass "index $found" "RoCE v2 GID of $3 on $2"
  else
    row roce-gid "$1" fail "none" "RoCE v2 GID of $3 on $2" \
      "the GID appears once $2 holds $3: run $ROCE_SCRIPT (or $ROCE_SCRIPT --check to see why not)"
  fi
}

check_mtu() {  # NETDEV
  local have=""
  if [[ ! -e $SYS/class/net/$1 ]]; then
    row mtu "$1" fail "no such netdev" "$MTU" "check the interface name, or run $ROCE_SCRIPT (it creates the bonds)"
    return
  fi
  read -r have <"$SYS/class/net/$1/mtu" 2>/dev/null || have="<unreadable>"
  if [[ $have == "$MTU" ]]; then
    row mtu "$1" pass "$have" "$MTU"
  else
    row mtu "$1" fail "$have" "$MTU" "run $ROCE_SCRIPT: a smaller MTU on one hop drops RoCE frames the fabric passes"
  fi
}

# --- run every check, then print ----------------------------------------------------------------------------------
check_iommu
check_acs
check_pcie_links
check_bar1
check_ofed
check_firmware
check_peermem
for i in "${!PLAN_NAME[@]}"; do
  if [[ -n ${PLAN_RDMA[i]} ]]; then
    check_affinity "${PLAN_RDMA[i]}"
    check_rdma_link "${PLAN_RDMA[i]}" "${PLAN_NAME[i]}"
    check_gid "${PLAN_RDMA[i]}" "${PLAN_NAME[i]}" "${PLAN_IPV4[i]}"
  fi
done
for i in "${!PLAN_NAME[@]}"; do check_mtu "${PLAN_NAME[i]}"; done

if (( JSON )); then
  printf '{"host": %s, "checks": [' "$(json_str "$HOST")"
  for i in "${!R_CHECK[@]}"; do
    (( i == 0 )) || printf ', '
    printf '{"check": %s, "subject": %s, "verdict": %s, "observed": %s, "expected": %s, "hint": %s}' \
      "$(json_str "${R_CHECK[i]}")" "$(json_str "${R_SUBJECT[i]}")" "$(json_str "${R_VERDICT[i]}")" \
      "$(json_str "${R_OBSERVED[i]}")" "$(json_str "${R_EXPECTED[i]}")" "$(json_str "${R_HINT[i]}")"
  done
  printf '], "summary": {"pass": %d, "warn": %d, "fail": %d}}\n' "$PASS" "$WARN" "$FAIL"
else
  printf '%-14s %-44s %-7s %s\n' CHECK SUBJECT VERDICT "OBSERVED (EXPECTED) -> HINT"
  for i in "${!R_CHECK[@]}"; do
    hint=""
    if [[ -n ${R_HINT[i]} ]]; then hint=" -> $(clean "${R_HINT[i]}")"; fi
    printf '%-14s %-44s %-7s %s (expected %s)%s\n' "${R_CHECK[i]}" "$(clean "${R_SUBJECT[i]}")" "${R_VERDICT[i]}" \
      "$(clean "${R_OBSERVED[i]}")" "$(clean "${R_EXPECTED[i]}")" "$hint"
  done
  echo "$(clean "$HOST"): $PASS pass, $WARN warn, $FAIL fail"
fi
if (( FAIL > 0 )); then exit 1; fi
exit 0
