"""`rocefab verify` and `rocefab doctor`: their arguments and help; the work is in `verify_flow`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rocefab.deploy_commands import ConcurrencyOpt, InventoryOpt, OnlyOpt

JsonOpt = Annotated[bool, typer.Option("--json", help="print the result as JSON for machines")]
AllOpt = Annotated[bool, typer.Option("--all", help="list passed checks too, not only failures and warnings")]
SampleOpt = Annotated[float, typer.Option("--sample-s", min=0, max=3600, help=(
    "also read switch and host counters twice this many seconds apart: PFC pause rate, lossless-queue drops, "
    "input error rate; on hosts RoCE retransmissions, CNPs and NIC pause rate (0: not sampled)"))]


def verify(intent: Annotated[Path, typer.Argument(help="intent YAML file")], inventory: InventoryOpt,
           as_json: JsonOpt = False, only: OnlyOpt = None, concurrency: ConcurrencyOpt = 32,
           show_all: AllOpt = False, sample_s: SampleOpt = 0) -> None:
    """Read every device and compare it with the plan: cabling (LLDP), link state and speed, MTU, DSCP trust,
    PFC, ECN, CNP queue, PFC watchdog, BGP sessions, MLAG; on hosts the RDMA device, GID, NIC QoS, DCQCN,
    traffic class and NCCL settings. Changes nothing. Exit 0 all pass, 1 a check failed, 2 bad input."""
    from rocefab import verify_flow

    verify_flow.verify(intent, inventory, only, concurrency, as_json=as_json, show_all=show_all, sample_s=sample_s)


def doctor(intent: Annotated[Path, typer.Argument(help="intent YAML file")], inventory: InventoryOpt,
           as_json: JsonOpt = False, only: OnlyOpt = None, concurrency: ConcurrencyOpt = 32,
           sample_s: SampleOpt = 0) -> None:
    """Verify, then name the cause of each failure: a diagnosis code, the evidence, what the training job sees,
    and the fix. Changes nothing. Exit 0 nothing to diagnose, 1 diagnoses, 2 bad input."""
    from rocefab import verify_flow

    verify_flow.doctor(intent, inventory, only, concurrency, as_json=as_json, sample_s=sample_s)
