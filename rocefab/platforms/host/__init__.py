"""GPU hosts (Linux, NVIDIA ConnectX): an idempotent NIC/bond script with `--check`, and an NCCL
environment file; deployed by uploading the script over SFTP and running it over SSH."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from rocefab.platforms.host.disruption import TABLE as DISRUPTION
from rocefab.platforms.unit import (
    ContainerlabNode,
    DeviceUnit,
    DiagramStyle,
    EmulatorFactory,
    FileRenderer,
    StructuredBuilder,
)

if TYPE_CHECKING:
    from rocefab.deploy.session import DeviceSession

TARGET = "Linux with NVIDIA ConnectX (MLNX_OFED/DOCA mlx5 driver), bash 4+"


def _container_interfaces(ports: Sequence[str]) -> list[str]:
    return [f"eth{i}" for i in range(1, len(ports) + 1)]


def _structured() -> StructuredBuilder:
    from rocefab.platforms.host.config import build

    return build


def _files() -> FileRenderer:
    from rocefab.platforms.host.config import render_host

    return render_host


def _shared() -> Sequence[tuple[str, str, str]]:
    from rocefab.platforms.host import library

    return [(lib.path(), lib.kind, lib.made()[0]) for lib in library.LIBRARIES]


def _assemble() -> Callable[[str, Mapping[str, str]], str]:
    from rocefab.platforms.host.library import embed

    return embed


def _session() -> type[DeviceSession]:
    from rocefab.platforms.host.session import HostSession

    return HostSession


def _emulator() -> EmulatorFactory:
    from rocefab.platforms.host.emulator import start

    return start


UNIT = DeviceUnit(
    key="host",
    display_name="GPU servers",
    spec=None,
    target=TARGET,
    candidate_kind="host-script",
    transports=("ssh",),
    nornir_platforms=(("linux", "ssh"),),
    structured=_structured,
    files=_files,
    session=_session,
    emulator=_emulator,
    containerlab=ContainerlabNode(
        kind="linux", image="ghcr.io/srl-labs/network-multitool:latest", release_name="Linux",
        interfaces=_container_interfaces, interfaces_note="hosts count eth1, eth2, ... in NIC order",
        note="GPU hosts; any Linux image with iproute2. Nothing is configured on them."),
    diagram=DiagramStyle("#f4f4f4", "#777777", 2, "GPU servers"),
    disruption=DISRUPTION,
    # the host libraries, once per render, which each script loads (rocefab/platforms/host/library.py)
    shared_files=_shared,
    assemble=_assemble,
)
