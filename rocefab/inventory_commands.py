"""`rocefab inventory export`: the fabric's inventory for Nornir or Ansible, from the plan (planned
management addresses) or from an inventory rocefab already reads."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from rocefab.console import EXIT_INPUT, command_group, err, out
from rocefab.renderers.plan import FabricPlan

inventory_app = command_group(help="Inventories for the tools a site runs beside rocefab (Nornir, Ansible, ANTA, "
                                   "Slurm).",
                            no_args_is_help=True)


class Format(StrEnum):
    NORNIR = "nornir"
    ANSIBLE = "ansible"
    ANTA = "anta"
    SLURM = "slurm"
    K8S_LABELS = "k8s-labels"


@inventory_app.command()
def export(
    intent: Annotated[Path, typer.Argument(help="intent YAML file", show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="nornir: a SimpleInventory folder (hosts.yaml, "
                                        "groups.yaml, defaults.yaml); ansible: one YAML inventory; anta: an ANTA "
                                        "inventory of the EOS switches, for anta/catalog.yml; slurm: Slurm's "
                                        "topology.conf (topology/tree) of the hosts; k8s-labels: the same tree as "
                                        "Kubernetes node labels (Topograph's tier keys)")],
    inventory: Annotated[Path | None, typer.Option(
        "--inventory", "-i", envvar="ROCEFAB_INVENTORY",
        help="how each device is reached (rocefab's format or Nornir's) [default: the plan's management "
             "addresses, as render's inventory.yaml]")] = None,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="folder (nornir) or file (ansible, anta) to write [default for a file: stdout]")] = None,
) -> None:
    """Write the fabric's inventory for Nornir, Ansible or ANTA: every device (ANTA: every EOS switch) with its
    platform, role group and address, no passwords; or the hosts' place in the fabric for Slurm's topology/tree
    plugin (a ToR pair or rail block per line, then pods and the top tier). Exit 0 written, 2 bad input."""
    from rocefab.deploy.inventory import load_inventory
    from rocefab.deploy.inventory_export import (
        ExportError,
        ansible_inventory,
        anta_inventory,
        nornir_files,
        planned_inventory,
    )
    from rocefab.models.sourcemap import IntentLoadError
    from rocefab.pipeline_commands import checked_plan
    from rocefab.renderers.inventory_file import planned_devices

    plan = checked_plan(intent)
    if fmt in (Format.SLURM, Format.K8S_LABELS):
        _write_tree(plan, output, fmt)
        return
    try:
        source = planned_inventory(plan) if inventory is None else load_inventory(inventory)
        devices = planned_devices(plan)
        if fmt is Format.NORNIR:
            files = nornir_files(source, devices)
        else:
            files = {"": (ansible_inventory if fmt is Format.ANSIBLE else anta_inventory)(source, devices)}
    except IntentLoadError as exc:
        for error in exc.errors:
            err.print(str(error), markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    except ExportError as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    if fmt is not Format.NORNIR and output is None:
        sys.stdout.write(files[""])
        return
    if output is None:
        err.print("a Nornir inventory is three files: give the folder with -o", markup=False)
        raise typer.Exit(EXIT_INPUT)
    try:
        if fmt is Format.NORNIR:
            output.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (output / name).write_text(text, encoding="utf-8")
        else:
            output.write_text(files[""], encoding="utf-8")
    except OSError as exc:
        err.print(f"{output}: {exc.strerror}; nothing more was written", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    count = len(devices) if fmt is not Format.ANTA else files[""].count("\n  - name: ")
    out.print(f"wrote the {fmt.value} inventory of {count} devices to {output}", markup=False)


def _write_tree(plan: FabricPlan, output: Path | None, fmt: Format) -> None:
    from rocefab.renderers.node_labels import node_labels_yaml
    from rocefab.renderers.slurm_topology import SlurmTopologyError, topology_conf

    try:
        text = topology_conf(plan) if fmt is Format.SLURM else node_labels_yaml(plan)
    except SlurmTopologyError as exc:
        err.print(str(exc), markup=False)
        raise typer.Exit(EXIT_INPUT) from None
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        err.print(f"{output}: cannot write: {exc.strerror or exc}", markup=False)
        raise typer.Exit(EXIT_INPUT) from None
