"""Render a whole fabric: every switch, every host and the fabric-wide artifacts, in memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from rocefab.models.catalogue import lookup_model
from rocefab.models.findings import Finding
from rocefab.platforms import UNITS, host_unit, unit
from rocefab.renderers.input_keys import DeviceViews
from rocefab.renderers.plan import FabricPlan, Host, Switch
from rocefab.renderers.plan_parts import INDEX as PLAN_INDEX
from rocefab.renderers.plan_parts import KIND as PLAN_PART
from rocefab.renderers.plan_parts import PlanPart, index_text, plan_parts
from rocefab.renderers.record import record
from rocefab.renderers.summary import FabricSummary, fabric_summary, summary_to_json
from rocefab.renderers.summary_markdown import SUMMARY_MD, render_summary_markdown

FABRIC_WIDE = "fabric"  # the device of the fabric-wide artifacts


@record
class RenderedFile:
    path: str  # relative to the output folder, '/'-separated
    device: str  # device name, or FABRIC_WIDE
    kind: str
    content: str
    executable: bool = False


Emit = Callable[[str], None]


@record
class StreamedFile:
    """A file too large to hold whole (plan/'s parts and the plan's series of a 98,304-GPU fabric are tens to
    hundreds of megabytes each): `write` hands its text to an emit function piece by piece, and the writer hashes
    and writes each piece as it comes. `content` joins the pieces for callers that want the text."""

    path: str
    device: str
    kind: str
    write: Callable[[Emit], None]
    executable: bool = False

    @property
    def content(self) -> str:
        parts: list[str] = []
        self.write(parts.append)
        return "".join(parts)


AnyFile = RenderedFile | StreamedFile
EXECUTABLE = (".sh", ".sbatch")  # fabric-wide scripts: the bandwidth tests' runners


def target_of(switch: Switch) -> str:
    model = lookup_model(switch.model)
    asic = f", {model.asic}" if model else ""
    return f"{unit(switch.platform).target} on {switch.model}{asic}"


def _switch_files(plan: FabricPlan, switch: Switch, leave_out: frozenset[str]) -> list[RenderedFile]:
    platform = unit(switch.platform)
    target = target_of(switch)
    files = platform.files()(plan, switch, target)
    if platform.on_request_files is not None and not leave_out.issuperset(platform.on_request):
        files = files + platform.on_request_files()(plan, switch, target)
    return [RenderedFile(f"switches/{switch.name}{f.suffix}", switch.name, f.kind, f.content, f.executable)
            for f in files]


def _host_files(plan: FabricPlan, host: Host) -> list[RenderedFile]:
    hosts = host_unit()
    return [RenderedFile(f"hosts/{host.name}{f.suffix}", host.name, f.kind, f.content, f.executable)
            for f in hosts.files()(plan, host, hosts.target)]


def device_at(plan: FabricPlan, i: int) -> Switch | Host:
    """Device number `i`, counting switches first, then hosts."""
    n = len(plan.switches)
    return plan.switches[i] if i < n else plan.hosts[i - n]


def files_of(views: DeviceViews, device: Switch | Host, leave_out: frozenset[str] = frozenset()) -> list[RenderedFile]:
    """The files of one device, rendered from its view of the plan (input_keys.py) and the device; files of a
    kind in `leave_out` (a form the operator did not ask for) are not given."""
    view = views.of(device)
    made = _switch_files(view, device, leave_out) if isinstance(device, Switch) else _host_files(view, device)
    return [f for f in made if f.kind not in leave_out] if leave_out else made


def iter_device_files(plan: FabricPlan, devices: Iterable[int],
                      leave_out: frozenset[str] = frozenset()) -> Iterator[RenderedFile]:
    """Files of the devices numbered `devices` (see `device_at`), each device's made when the one before is
    consumed: a writer holds one device's files at a time, not a whole fabric's."""
    views = DeviceViews(plan)
    for i in devices:
        yield from files_of(views, device_at(plan, i), leave_out)


def device_files(plan: FabricPlan, devices: Iterable[int]) -> list[RenderedFile]:
    """Files of the devices numbered `devices`, counting switches first, then hosts."""
    return list(iter_device_files(plan, devices))


def shared_files(plan: FabricPlan) -> list[RenderedFile]:
    """The files the devices' rendered files share (the host library), once each, for the platforms the plan has."""
    present = {sw.platform for sw in plan.switches} | ({host_unit().key} if plan.hosts else set())
    return [RenderedFile(path, FABRIC_WIDE, kind, text) for key, u in UNITS.items() if key in present and u.shared_files
            for path, kind, text in u.shared_files()]


def plan_part_files(parts: Sequence[PlanPart]) -> list[StreamedFile]:
    """plan/'s parts (see plan_parts.py), each streamed."""
    return [StreamedFile(part.path, FABRIC_WIDE, PLAN_PART, part.write) for part in parts]


# The fabric-wide artifacts a parallel render hands to a worker as a part of their own (the largest after
# plan/'s parts), each with the folder that holds its files; the other ones go to one worker together
# (fanout._render_rest). They are made from the fabric's topology and have keys of their own
# (input_keys.topology_key).
PARTS = {"monitoring": "monitoring/", "bandwidth": "bandwidth-tests/"}


def fabric_files(plan: FabricPlan, with_plan: bool = True, summary: FabricSummary | None = None,
                 leave_out: Collection[str] = ()) -> Iterator[AnyFile]:
    """The fabric-wide artifacts, each made when asked for, so a writer holds one at a time (a 98,304-GPU
    fabric's are hundreds of megabytes); `with_plan=False` leaves out plan/'s parts (see `plan_part_files`; not
    its index), the largest, and `leave_out` the PARTS named (see `fabric_part`); `summary` is
    `fabric_summary(plan)` when the caller has it already."""
    # Imported here, not with this module: commands that render only the devices' files (diff, apply, verify)
    # would pay ~0.25 s for them at every start (monitoring with the Grafana SDK, ANTA, the diagram, containerlab).
    from rocefab.renderers.anta_catalog import render_anta_catalog
    from rocefab.renderers.bom import render_bom_csv
    from rocefab.renderers.cabling import connections, render_cabling_csv
    from rocefab.renderers.containerlab import render_containerlab_files
    from rocefab.renderers.diagram import render_topology_svg
    from rocefab.renderers.inventory_file import render_inventory

    cabling = connections(plan)
    parts = plan_parts(plan)

    def made() -> Iterator[tuple[str, str, str | Callable[[Emit], None]]]:
        yield from ((f.path, f.kind, f.content) for f in shared_files(plan))
        yield "cabling.csv", "cabling-plan", render_cabling_csv(plan, cabling)
        yield "bom.csv", "bill-of-materials", render_bom_csv(plan, cabling)
        yield "topology.svg", "topology-diagram", render_topology_svg(plan)
        yield from render_containerlab_files(plan)  # the topology, then each kept switch's startup config
        yield "summary.json", "summary", summary_to_json(fabric_summary(plan) if summary is None else summary)
        yield "inventory.yaml", "inventory", render_inventory(plan)
        yield PLAN_INDEX, "plan", index_text(plan, parts)
        catalog = render_anta_catalog(plan)
        if catalog is not None:
            yield "anta/catalog.yml", "anta-catalog", catalog

    yield from _as_files(made())
    for part in PARTS:
        if part not in leave_out:
            yield from fabric_part(plan, part)
    if with_plan:
        yield from plan_part_files(parts)


def fabric_part(plan: FabricPlan, part: str) -> Iterator[AnyFile]:
    """The files of one of PARTS: the monitoring folder or the bandwidth tests."""
    from rocefab.renderers.bandwidth import render_bandwidth_tests
    from rocefab.renderers.monitoring import render_monitoring

    makers: dict[str, Callable[[FabricPlan], Iterable[tuple[str, str, str | Callable[[Emit], None]]]]] = {
        "monitoring": render_monitoring, "bandwidth": render_bandwidth_tests}
    for made in _as_files(makers[part](plan)):
        if not made.path.startswith(PARTS[part]):  # the folder is what a re-render keeps or replaces whole
            raise ValueError(f"{made.path}: a file of {part} outside {PARTS[part]}")
        yield made


def _as_files(made: Iterable[tuple[str, str, str | Callable[[Emit], None]]]) -> Iterator[AnyFile]:
    for path, kind, content in made:
        executable = path.endswith(EXECUTABLE)
        yield (RenderedFile(path, FABRIC_WIDE, kind, content, executable) if isinstance(content, str)
               else StreamedFile(path, FABRIC_WIDE, kind, content, executable))


SUMMARY_PAGE = "summary-page"


def summary_file(plan: FabricPlan, device_lines: dict[str, int], findings: Sequence[Finding],
                 summary: FabricSummary | None = None) -> RenderedFile:
    """summary.md, written last: it counts the lines of every device's files."""
    return RenderedFile(SUMMARY_MD, FABRIC_WIDE, SUMMARY_PAGE,
                        render_summary_markdown(plan, device_lines, findings, summary))


def counted_lines(device: str, data: bytes) -> int:
    """The newlines the manifest's entry of a file of `device` counts: a device's file's, for summary.md; none
    for a fabric-wide one (half a gigabyte at 98,304 GPUs that nothing reads the count of)."""
    return data.count(b"\n") if device != FABRIC_WIDE else 0


def device_lines(files: Iterable[tuple[str, int]]) -> dict[str, int]:
    """Lines per device from (device, lines) pairs, fabric-wide files left out."""
    counts: Counter[str] = Counter()
    for device, lines in files:
        if device != FABRIC_WIDE:
            counts[device] += lines
    return dict(counts)


def render_fabric(plan: FabricPlan, findings: Sequence[Finding] = ()) -> list[AnyFile]:
    """Every file of the fabric, in a fixed order: switches, hosts, then the fabric-wide artifacts."""
    summary = fabric_summary(plan)
    files = [*device_files(plan, range(len(plan.switches) + len(plan.hosts))), *fabric_files(plan, summary=summary)]
    lines = device_lines((f.device, f.content.count("\n")) for f in files)
    return [*files, summary_file(plan, lines, findings, summary)]
