"""The ConnectX (mlx5) NIC's side of PFC headroom: the cable length its driver sizes the lossless receive buffer
from, and the xoff threshold that length gives.

The driver takes the cable length as the IEEE PFC `delay` that `mlnx_qos --cable_len` sets (mlnx-tools
python/mlnx_qos: range 0..65535, the current PFC enables kept). It uses a value only when 0 < delay < 1000
(en_dcbnl.c, MLX5E_MAX_CABLE_LENGTH) and starts from 7 m (port_buffer.h, MLX5E_DEFAULT_CABLE_LEN); a value it does
not take would read back unchanged forever, so the plan's length is held to 1-999 m. port_buffer.c
calculate_xoff(), with the link speed in Mb/s (never below 40G):

    xoff = (301 + 216 x cable_len / 100) x speed / 1000 + 272 x mtu / 100      (integer arithmetic)

Sources: github:Mellanox/mlnx-tools python/mlnx_qos @8fbfd9c; DOCA-OFED 25.10 mlx5 driver (knneth/mlnx-ofa_kernel
@2850235) drivers/net/ethernet/mellanox/mlx5/core/en_dcbnl.c and en/port_buffer.{c,h}.
"""

from __future__ import annotations

DRIVER_DEFAULT_CABLE_M = 7
DRIVER_MAX_CABLE_M = 999  # < MLX5E_MAX_CABLE_LENGTH (1000)


def nic_cable_len(length_m: int) -> int:
    """What `mlnx_qos --cable_len` is given for a planned host cable.

    >>> nic_cable_len(50), nic_cable_len(0), nic_cable_len(2000)
    (50, 1, 999)
    """
    return min(max(length_m, 1), DRIVER_MAX_CABLE_M)


def nic_xoff_bytes(speed_gbps: int, cable_len_m: int, mtu_bytes: int) -> int:
    """The mlx5 driver's xoff threshold of a lossless receive buffer, as it computes it.

    >>> nic_xoff_bytes(400, 50, 9000) - nic_xoff_bytes(400, 7, 9000)  # a 50 m link left at the 7 m default
    37200
    """
    speed_mbps = max(speed_gbps * 1000, 40000)
    return (301 + 216 * cable_len_m // 100) * speed_mbps // 1000 + 272 * mtu_bytes // 100
