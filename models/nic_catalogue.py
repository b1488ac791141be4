"""The host NICs rocefab knows, and what the fabric's design depends on: whether the NIC places RoCE packets that
arrive out of order (so per-packet adaptive routing is safe) or falls back to go-back-N retransmission.

Sources: NVIDIA's NIC Configuration Operator, whose Spectrum-X profile (the one that turns on RoCE adaptive routing,
`ROCE_ADAPTIVE_ROUTING_EN=1`) is allowed "only [on] ConnectX-8 (device ID 1023) and BlueField-3 SuperNIC (device
ID a2dc)" (github:Mellanox/network-operator-docs docs/nic-conf-operator/spectrum-x-configuration.rst @0c0ecad;
github:Mellanox/nic-configuration-operator api/v1alpha1/nicconfigurationtemplate_types.go @8bfbeb3: "spectrumXOptimized
can be enabled only for ConnectX-8, ConnectX-9 or BlueField-3 SuperNICs"). ConnectX-7 and ConnectX-6 Dx are not on
that list; the MLNX_OFED "Out-of-Order (OOO) Data Placement" page (ConnectX-5 and above) speaks of InfiniBand
packets only, so it does not settle RoCE with Spectrum-X.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NicModel:
    name: str
    places_out_of_order: bool  # supported for Spectrum-X adaptive routing (per-packet spraying)


NIC_MODELS = {m.name: m for m in (
    NicModel("ConnectX-6 Dx", False),
    NicModel("ConnectX-7", False),
    NicModel("ConnectX-8", True),
    NicModel("BlueField-3 SuperNIC", True),
)}
