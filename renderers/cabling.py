"""Cabling plan: one CSV row per cable, switch side first."""

from __future__ import annotations

import csv
import io

from renderers.plan import FabricPlan

COLUMNS = ("kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps")


def render_cabling_csv(plan: FabricPlan) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for link in plan.links:
        writer.writerow((link.kind.value, link.a.device, link.a.port, link.b.device, link.b.port, link.speed_gbps))
    return out.getvalue()
