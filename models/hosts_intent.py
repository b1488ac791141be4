"""The intent's `hosts` section: each GPU server's bonds or rail NICs, NCCL settings and NIC tuning."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt, field_validator

from rocefab.models.base import IntentModel
from rocefab.models.types import (
    Distinct,
    NameFormat,
    NcclIfname,
    NcclValue,
    NcclVariable,
    NetdevName,
    RdmaDeviceName,
    SpeedGbps,
)


class Bond(IntentModel):
    """One dual-port NIC bonded with LACP: member 0 cables to leaf a, member 1 to leaf b of the host's pair."""

    name: NetdevName = Field("bond0", description="Linux name of the bond interface the host script creates")
    members: Annotated[tuple[NetdevName, NetdevName], Distinct] = Field(
        description="the two ports of the NIC: the first cables to leaf a, the second to leaf b")
    rdma_device: RdmaDeviceName = Field(description="RDMA device of the RoCE LAG, e.g. mlx5_bond_0")
    speed_gbps: SpeedGbps = Field(description="speed of each member port")
    vlan: StrictInt = Field(ge=1, le=4094, description="training VLAN the bond sits in")


class Nccl(IntentModel):
    socket_ifname: NcclIfname = Field(
        description="bootstrap/out-of-band interface(s) for NCCL_SOCKET_IFNAME, matched exactly: rocefab writes "
                    "NCCL's '=' form unless the value already starts with '=' or is an exclusion ('^...')")
    gid_index: StrictInt | None = Field(
        None, ge=0, le=255,
        description="pin NCCL_IB_GID_INDEX; the host script then checks that index holds a RoCE v2 GID for the "
                    "interface's IPv4 address. Unset (the default), NCCL picks the RoCE v2 IPv4 GID itself")
    qps_per_connection: StrictInt = Field(4, ge=1, le=128, description="NCCL_IB_QPS_PER_CONNECTION (ECMP entropy)")
    ib_timeout: StrictInt = Field(20, ge=1, le=31, description="NCCL_IB_TIMEOUT exponent")
    ib_retry_cnt: StrictInt = Field(7, ge=0, le=7, description="NCCL_IB_RETRY_CNT")
    extra_env: dict[NcclVariable, NcclValue] = Field(
        default_factory=dict, description="further NCCL_* variables (printable ASCII values, one line each)")


class Ethtool(IntentModel):
    rx_ring: StrictInt = Field(8192, ge=64, le=8192, description="NIC receive ring entries (ethtool -G rx), a power "
                                                                  "of two")
    tx_ring: StrictInt = Field(8192, ge=64, le=8192, description="NIC transmit ring entries (ethtool -G tx), a power "
                                                                  "of two")

    @field_validator("rx_ring", "tx_ring")
    @classmethod
    def _power_of_two(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError(f"ring size must be a power of two (mlx5 rounds otherwise), got {value}")
        return value


class Nic(IntentModel):
    """A single-port NIC of a rail-optimized server: NIC i cables to a leaf of rail i."""

    netdev: NetdevName = Field(description="Linux name of the NIC port, e.g. enp24s0np0")
    rdma_device: RdmaDeviceName = Field(description="its RDMA device as `rdma link show` lists it, e.g. mlx5_0")


class Hosts(IntentModel):
    name_format: NameFormat = Field("gpu{n:03d}", description="GPU server names, {n} counting from 1 across the "
                                                              "fabric")
    bonds: tuple[Bond, ...] = Field((), description="ToR dual-homed: dual-port NICs bonded across a leaf pair")
    nics: tuple[Nic, ...] = Field((), description="rail-optimized: one entry per rail, in rail order")
    nccl: Nccl = Field(description="NCCL settings written to every host's nccl.conf and environment")
    ethtool: Ethtool = Field(Ethtool(), description="NIC ring sizes the host script sets")
    nic_model: Literal["ConnectX-6 Dx", "ConnectX-7", "ConnectX-8", "BlueField-3 SuperNIC"] | None = Field(
        None, description="the fabric NICs' model: adaptive routing needs NICs that place out-of-order RoCE packets "
                          "(ConnectX-8, BlueField-3 SuperNIC)")
