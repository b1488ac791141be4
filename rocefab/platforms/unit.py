"""A device unit: everything rocefab knows about one kind of device, declared in one place.

Each network operating system (and the GPU host) is a package under `rocefab/platforms/` whose `UNIT` says
what the rest of rocefab asks about it: its spec and quirks (`PlatformSpec`), the files it is configured
with and the renderer that writes them, how deploy reaches it (transports, session class, what a replace
keeps), how a containerlab cut and the topology diagram show it, and the lab emulator that stands in for it.
Checks, planner, renderers, fleet and command line look capabilities up here and never compare a name.

Parts that pull in heavy or optional libraries (NAPALM, the lab's SSH servers) are functions that import them
when first called, so `rocefab render` does not pay for `rocefab apply`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from rocefab.platforms.disruption import DisruptionTable
from rocefab.platforms.maintenance import Maintenance
from rocefab.platforms.spec import PlatformSpec
from rocefab.renderers.record import record

if TYPE_CHECKING:
    from rocefab.deploy.session import DeviceSession
    from rocefab.renderers.plan import FabricPlan

class UnitFile(NamedTuple):
    """One file a unit renders for a device: `<device><suffix>`, of `kind`, executable or not."""

    suffix: str
    kind: str
    content: str
    executable: bool = False


# (plan, device, target line) -> the device's files; the device is a Switch or a Host.
FileRenderer = Callable[["FabricPlan", Any, str], list[UnitFile]]
# (plan, device, target line) -> its structured config: frozen dataclasses (a JSON-like tree for NVUE), every
# decision made, what the templates print and golden tests read on its own.
StructuredBuilder = Callable[["FabricPlan", Any, str], Any]
# (plan device, lab folder, password, TLS certificate) -> a started lab device (rocefab.lab.fabric.LabDevice)
EmulatorFactory = Callable[[Any, Any, str, Any], Any]


@record
class ContainerlabNode:
    """How a containerlab topology stands the device in: its kind, image repository (switches: tagged
    with the plan's release), a note for the reader, and its container interface names."""

    kind: str
    image: str
    note: str
    release_name: str
    # the kept ports, in plan order -> their container interface names
    interfaces: Callable[[Sequence[str]], list[str]]
    interfaces_note: str  # that naming, in words, for the topology file's header


@record
class DiagramStyle:
    fill: str
    stroke: str
    corner_radius: int
    legend: str


@record
class DeviceUnit:
    key: str  # the plan's platform and the inventory's device kind: "eos", "nxos", "cumulus", "host"
    display_name: str
    spec: PlatformSpec | None  # a switch's network operating system; None for a GPU host
    target: str  # what the rendered files are for, printed in their headers (switches add model and ASIC)
    candidate_kind: str  # the rendered file a deploy stages on the device
    transports: tuple[str, ...]  # inventory transport names, the default first
    structured: Callable[[], StructuredBuilder]
    files: Callable[[], FileRenderer]
    session: Callable[[], type[DeviceSession]]
    emulator: Callable[[], EmulatorFactory]
    containerlab: ContainerlabNode
    diagram: DiagramStyle
    # Top-level blocks of the running config a full replace carries over (accounts, management access):
    # what rocefab does not own on this platform.
    preserved: tuple[str, ...] = ()
    # Arista's ANTA can test it (over eAPI): its checks go into the rendered ANTA catalog too.
    anta: bool = False
    # Nornir's `platform` names for it (NAPALM drivers, netmiko device types), each with the transport rocefab
    # uses for that driver; an inventory export writes the first name of each transport.
    nornir_platforms: tuple[tuple[str, str], ...] = ()
    # How much each kind of changed line disturbs the running device, with sources (platforms/disruption.py).
    disruption: DisruptionTable = DisruptionTable(())
    # How rocefab drains it (None: not yet: `rocefab drain` refuses it and says so).
    maintenance: Maintenance | None = None
    # Kinds of rendered file `rocefab render` writes only when asked (`--with KIND`): a second form of what the
    # candidate already says, for people rather than for apply; `on_request_files` renders them, and is not
    # called unless one of them is asked for.
    on_request: tuple[str, ...] = ()
    on_request_files: Callable[[], FileRenderer] | None = None
    # Files its devices' rendered files share, written once per render: (path, kind, text) each.
    shared_files: Callable[[], Sequence[tuple[str, str, str]]] | None = None
    # The candidate as the device takes it, from its rendered file and the render's files by path (the shared ones
    # among them); None: the rendered file as it is.
    assemble: Callable[[], Callable[[str, Mapping[str, str]], str]] | None = None

    @property
    def is_switch(self) -> bool:
        return self.spec is not None
