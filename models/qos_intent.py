"""The intent's `qos` section: how RoCE and CNP traffic is marked, the PFC, ECN and ETS settings of the
no-drop class. Every side of the fabric (switches and NICs) is derived from these."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt

from rocefab.models.base import IntentModel
from rocefab.models.types import Distinct

Dscp = Annotated[StrictInt, Field(ge=0, le=63, description="DSCP code point, 0-63")]
Priority = Annotated[StrictInt, Field(ge=0, le=7, description="802.1p / switch priority, 0-7")]


class Marking(IntentModel):
    dscp: Dscp = Field(description="DSCP code point the traffic class arrives with (hosts mark it)")
    priority: Priority = Field(description="switch priority (and queue) the DSCP maps to")


class PfcWatchdog(IntentModel):
    enabled: StrictBool = Field(True, description="PFC watchdog on every lossless queue: a queue paused for too long "
                                                 "stops honouring pause frames, so one stuck NIC cannot "
                                                 "deadlock the fabric")
    polling_interval_ms: StrictInt = Field(100, ge=10, le=1000, description="how often paused queues are polled")
    robustness: StrictInt = Field(
        3, ge=1, le=1000, description="polls a queue must stay paused before the watchdog acts"
    )
    recovery_ms: StrictInt = Field(1000, ge=100, le=60000, description="pause-free time before a queue is restored")


class Pfc(IntentModel):
    priorities: Annotated[tuple[Priority, ...], Distinct] | None = Field(
        None, description="PFC (no-drop) priorities; default: exactly the RoCE priority"
    )
    watchdog: PfcWatchdog = Field(PfcWatchdog(), description="PFC watchdog (pause-storm protection) timers")
    measured_headroom_bytes: StrictInt | None = Field(
        None, ge=1, le=64 * 1024 * 1024,
        description="PFC headroom per port from measured watermarks, replacing rocefab's estimate from cable "
                    "length, speed and MTU (see `rocefab plan`) on every port")


class Ecn(IntentModel):
    """One marking profile for every switch, replacing the per-ASIC defaults (models/catalogue.py)."""

    min_threshold_kbytes: StrictInt = Field(150, ge=1, description="queue depth where ECN marking starts")
    max_threshold_kbytes: StrictInt = Field(1500, ge=1, description="queue depth where marking reaches its maximum")
    max_mark_percent: StrictInt = Field(100, ge=1, le=100, description="marking probability at the max threshold")


class Ets(IntentModel):
    """Bandwidth shares of the DWRR queues; the CNP queue is strict priority and takes no share."""

    roce_percent: StrictInt = Field(50, ge=1, le=100, description="guaranteed share of port bandwidth for the RoCE "
                                                                   "(lossless) queue under congestion, in percent")
    default_percent: StrictInt = Field(50, ge=0, le=100, description="guaranteed share for the default queue (all "
                                                                      "other traffic), in percent")


class Qos(IntentModel):
    trust: Literal["dscp"] = Field(
        "dscp", description="classification source; routed and untagged links carry no PCP, so DSCP"
    )
    roce: Marking = Field(Marking(dscp=26, priority=3), description="RoCEv2 data: its DSCP and the lossless priority "
                                                                    "(PFC, ECN) it maps to; default DSCP 26 on 3")
    cnp: Marking = Field(Marking(dscp=48, priority=6), description="DCQCN congestion notification packets: DSCP "
                                                                   "and the strict-priority queue; default DSCP 48 "
                                                                   "on 6")
    dscp_map: dict[Dscp, Priority] = Field(
        default_factory=dict, description="further DSCP -> priority entries (RoCE and CNP are implied)"
    )
    pfc: Pfc = Field(Pfc(), description="priority flow control: which priorities are lossless, watchdog, headroom")
    ecn: Ecn | None = Field(None, description="ECN marking on the RoCE queue; unset, each switch takes its ASIC "
                                              "family's published profile (Spectrum, Cisco Cloud Scale, Broadcom)")
    ets: Ets = Field(Ets(), description="bandwidth shares (DWRR) of the RoCE and default queues")

    @property
    def lossless_priorities(self) -> tuple[int, ...]:
        return tuple(sorted(self.pfc.priorities)) if self.pfc.priorities is not None else (self.roce.priority,)
