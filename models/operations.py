"""The intent's operations sections: what the rendered alert rules fire at and what the bandwidth acceptance
tests must reach. Defaults are the field's rules of thumb: port errors above 0.001 % of packets, RoCE
retransmissions above 0.01 % of packets sent, perftest at 90 % of line rate."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictInt

from rocefab.models.base import IntentModel

# A rate in percent, strict (YAML's "0.001" string is not a number) and finite (.nan/.inf are YAML floats).
Percent = Annotated[float, Field(strict=True, gt=0, le=100, allow_inf_nan=False)]


class Monitoring(IntentModel):
    """Thresholds of the rendered Prometheus alert rules (monitoring/ in the render output)."""

    error_rate_percent: Percent = Field(
        0.001, description="port input or output errors, as a percentage of the port's packets")
    retransmit_rate_percent: Percent = Field(
        0.01, description="RoCE retransmissions (NIC out-of-sequence and sequence-error NAKs, ACK timeouts), "
                          "as a percentage of the RDMA packets the NIC sent")
    pause_surge_factor: StrictInt = Field(
        10, ge=2, le=1000, description="PFC pause frames per second against the same port's own baseline: an "
                                       "alert when now exceeds the baseline this many times over")
    pause_baseline_s: StrictInt = Field(
        3600, ge=600, le=604_800, description="how far back a port's pause-rate baseline reaches (it ends where "
                                              "a surge that fires now began, so the surge is not its own baseline)")
    pause_surge_floor_per_s: StrictInt = Field(
        100, ge=1, le=10_000_000, description="pause rates below this never count as a surge (an idle port "
                                              "going from 0 to a few frames)")
    ecn_mark_percent: Percent = Field(
        5.0, description="ECN-marked RoCE packets as a percentage of the queue's packets: sustained above this, "
                         "the fabric is congested beyond what DCQCN absorbs")
    rate_window_s: StrictInt = Field(300, ge=30, le=3600, description="window every rate is taken over")
    for_s: StrictInt = Field(120, ge=0, le=3600, description="how long a condition holds before it fires")
    scrape_interval_s: StrictInt = Field(15, ge=1, le=300, description="Prometheus scrape and gNMI sample interval")


class Acceptance(IntentModel):
    """What the bandwidth acceptance tests (bandwidth-tests/ in the render output) must reach."""

    perftest_percent_of_line_rate: StrictInt = Field(
        90, ge=1, le=100, description="ib_write_bw between two NICs, as a percentage of the slower NIC's rate")
    allreduce_busbw_percent_of_line_rate: StrictInt = Field(
        80, ge=1, le=100, description="nccl-tests all_reduce_perf bus bandwidth at the largest size, as a "
                                      "percentage of a node's total RDMA line rate (the bus bandwidth of rings "
                                      "that cross nodes approaches it)")
