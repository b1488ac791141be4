"""bandwidth-tests/: the acceptance plan of a fabric (perftest pairs in rounds, an NCCL all-reduce) and what
each must reach, printed from the decisions of renderers/bandwidth_pairs.py."""

from __future__ import annotations

import ipaddress
import re
import shlex
from collections.abc import Iterator
from typing import Any

from rocefab.renderers.bandwidth_coverage import coverage
from rocefab.renderers.bandwidth_pairs import BandwidthPlan, PerftestPair, RdmaPort, bandwidth_plan
from rocefab.renderers.jsontext import dumps_outline
from rocefab.renderers.natural import natural_key
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.record import record
from rocefab.renderers.templating import header_lines, render

FOLDER = "bandwidth-tests"
EXPECTED = "expected.json"
TARGET = "perftest (linux-rdma) and nccl-tests on the fabric's GPU hosts"
# An octet as the planner prints it (decimal, no leading zero) -> two hex digits: the GIDs of a 98,304-GPU fabric's
# addresses are looked up octet by octet, as ipaddress costs a second per 100,000 of them
_OCTET_HEX = {str(n): f"{n:02x}" for n in range(256)}
EXPECTED_FORMAT = 1  # bumped when expected.json changes shape; the checker refuses other versions


def roce_gid(address: str) -> str:
    """The RoCE v2 GID of an IPv4 address (::ffff:a.b.c.d) as sysfs prints it (gids/<index>).

    >>> roce_gid("10.128.0.1")
    '0000:0000:0000:0000:0000:ffff:0a80:0001'
    """
    octets = address.split(".")
    if len(octets) == 4:
        h = _OCTET_HEX
        try:
            return f"0000:0000:0000:0000:0000:ffff:{h[octets[0]]}{h[octets[1]]}:{h[octets[2]]}{h[octets[3]]}"
        except KeyError:
            pass
    # not as the planner prints one: ipaddress says why it is no address (it takes no other form either)
    a, b, c, d = ipaddress.IPv4Address(address).packed
    return f"0000:0000:0000:0000:0000:ffff:{a:02x}{b:02x}:{c:02x}{d:02x}"


def hostlist(names: list[str] | tuple[str, ...]) -> str:
    """A Slurm host list with runs of numbered names folded into ranges.

    >>> hostlist(["gpu001", "gpu002", "gpu003", "gpu007", "login"])
    'gpu[001-003,007],login'
    """
    runs: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        m = re.fullmatch(r"([A-Za-z][A-Za-z0-9-]*?)(\d+)", name)
        if m:
            runs.setdefault((m.group(1), len(m.group(2))), []).append(int(m.group(2)))
        else:
            plain.append(name)
    parts: list[str] = []
    for (prefix, width), numbers in sorted(runs.items()):
        numbers.sort()
        spans: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            spans.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(spans)}]" if len(numbers) > 1 else f"{prefix}{spans[0]}")
    return ",".join(parts + sorted(plain, key=natural_key))


class _Printer:
    """The per-pair text of the bandwidth files, with what repeats computed once: a 98,304-GPU fabric has
    98,304 pairs but each port's GID and each pair's common options are the same few strings."""

    def __init__(self, bw: BandwidthPlan) -> None:
        self.bw = bw
        self.gids: dict[str, str] = {}
        self.quoted: dict[str, str] = {}
        self.sides: dict[int, str] = {}
        # the options after the GID up to the QPs, then after them up to the end
        self.timing = f"-F --report_gbits -D {bw.duration_s} -q"
        self.tclass = f"--tclass={bw.tclass}"

    def gid(self, address: str) -> str:
        found = self.gids.get(address)
        if found is None:
            found = self.gids[address] = roce_gid(address)
        return found

    def quote(self, word: str) -> str:
        found = self.quoted.get(word)
        if found is None:
            found = self.quoted[word] = shlex.quote(word)
        return found

    def command_form(self, side: str) -> str:
        """The ib_write_bw command line of one side of any pair, as run-perftest.sh runs it on the host, with the
        pair's values as names: DEVICE, GID_INDEX (or the fabric's one), QPS, PORT, SERVER_ADDRESS."""
        index = self.bw.gid_index
        gid = str(index) if index is not None else "GID_INDEX"
        words = f"ib_write_bw -d DEVICE -x {gid} {self.timing} QPS -p PORT {self.tclass}"
        return f"{words} SERVER_ADDRESS" if side == "client" else words

    def gid_note(self, example: RdmaPort | None) -> str:
        if self.bw.gid_index is not None:
            return f"GID index {self.bw.gid_index} is the one NCCL is told (NCCL_IB_GID_INDEX)."
        said = "" if example is None else f", {self.gid(example.address)} for {example.address}"
        return ("GID_INDEX is where /sys/class/infiniband/DEVICE/ports/1/gids/ holds the RoCE v2 GID of the side's "
                f"address (IPv4-mapped{said}); run-perftest.sh looks it up on the host.")

    def side(self, port: RdmaPort) -> str:
        """A port's arguments to run-perftest.sh's pair(): its host, device and GID (each port is a client once and
        a server once, so each is printed twice)."""
        found = self.sides.get(id(port))  # by identity: the ports live as long as the plan this prints
        if found is None:
            found = self.sides[id(port)] = f"{self.quote(port.host)} {self.quote(port.device)} {self.gid(port.address)}"
        return found

    def pair_line(self, pair: PerftestPair) -> str:
        """One `pair` call of run-perftest.sh (its arguments as the script's pair() takes them)."""
        sides = self.sides
        c = sides.get(id(pair.client)) or self.side(pair.client)
        s = sides.get(id(pair.server)) or self.side(pair.server)
        return f"pair {pair.round} {pair.number} {c} {s} {pair.server.address} {pair.port} {pair.qps}\n"


def _rounds_text(plan: FabricPlan, bw: BandwidthPlan, printer: _Printer) -> str:
    cover = coverage(plan, bw.pairs)
    lines = [f"# {line}" for line in header_lines(plan.source, TARGET, "fabric")]
    lines += [
        "#",
        f"# ib_write_bw acceptance pairs of {plan.source.fabric}: {len(bw.pairs)} pairs in {bw.rounds} rounds of "
        f"{bw.duration_s} s (run-perftest.sh runs them).",
        "# Every RDMA port is a client once and a server once; no NIC and no leaf is in two pairs of one round.",
        f"# A pair passes at {bw.percent} % of the slower end's line rate (a bond counts both members).",
        f"# --tclass={bw.tclass}: plain verbs perftest sends traffic class 0 unless given one; this is the fabric's "
        "RoCE ToS, so the test runs in the lossless queue.",
    ]
    if cover.hops:
        lines.append(f"# Coverage: each direction of each of the {cover.hops // 2} fabric links is on an equal-cost "
                     f"path of some pair; spread evenly by ECMP, the least covered expects {cover.least:.1f} QPs"
                     + (f", and {len(cover.uncovered)} directions none" if cover.uncovered else "") + ".")
    if not any(p.crosses_spines for p in bw.pairs):
        lines.append("# No two hosts sit behind different leaves, so no pair crosses a spine.")
    lines += [
        "# Each pair below is CLIENT/DEVICE ADDRESS -> SERVER/DEVICE ADDRESS; its two sides run, the server first:",
        f"#   server: {printer.command_form('server')}",
        f"#   client: {printer.command_form('client')}",
        "# " + printer.gid_note(bw.pairs[0].client if bw.pairs else None),
    ]
    current = 0
    for pair in bw.pairs:
        if pair.round != current:
            current = pair.round
            lines += ["", f"round {current}"]
        c, s = pair.client, pair.server
        lines.append(f"  pair {pair.number}: {c.name} {c.address} -> {s.name} {s.address} ({pair.scope}), "
                     f"{pair.qps} QPs on port {pair.port}, at least {pair.min_gbps:g} Gb/s ({bw.percent} % of "
                     f"{pair.line_rate_gbps} Gb/s)")
    return "\n".join(lines) + "\n"


@record
class ExpectedPort:
    """One side of a pair as expected.json lists it (its fields are the document's keys, in order)."""

    host: str
    device: str
    address: str
    line_rate_gbps: int


@record
class ExpectedPair:
    """A pair as expected.json lists it. A record, not a dict: a list of records without list fields is printed a
    line per record with no question asked of each (jsontext), and a 98,304-GPU fabric has 99,840 pairs."""

    round: int
    pair: int
    client: ExpectedPort
    server: ExpectedPort
    scope: str
    qps: int
    port: int
    line_rate_gbps: int
    min_gbps: float


def _port(port: RdmaPort) -> ExpectedPort:
    return ExpectedPort(port.host, port.device, port.address, port.line_rate_gbps)


def expected_document(plan: FabricPlan, bw: BandwidthPlan) -> dict[str, Any]:
    """What the checker compares results with, as jsontext prints it; `rocefab bandwidth check` reads it back
    (rocefab/bandwidth)."""
    nccl = None if bw.nccl is None else {
        "tool": "all_reduce_perf", "hosts": list(bw.nccl.hosts), "max_bytes": bw.nccl.max_bytes,
        "node_line_rate_gbps": bw.nccl.node_line_rate_gbps, "percent_of_line_rate": bw.nccl.percent,
        "min_busbw_gbytes_per_s": bw.nccl.min_busbw_gbytes}
    return {
        "format": EXPECTED_FORMAT,
        "fabric": plan.source.fabric,
        "generated_by": f"rocefab {plan.source.rocefab_version}",
        "perftest": {
            "tool": "ib_write_bw", "percent_of_line_rate": bw.percent, "duration_s": bw.duration_s,
            "tclass": bw.tclass, "rounds": bw.rounds,
            "pairs": [ExpectedPair(p.round, p.number, _port(p.client), _port(p.server), p.scope, p.qps, p.port,
                                   p.line_rate_gbps, p.min_gbps) for p in bw.pairs],
        },
        "nccl": nccl,
    }


def render_bandwidth_tests(plan: FabricPlan) -> Iterator[tuple[str, str, str]]:
    """The files of bandwidth-tests/ as (path from the output folder, kind, content), each made when asked for;
    scripts are the .sh and .sbatch ones."""
    bw = bandwidth_plan(plan)
    header = header_lines(plan.source, TARGET, "fabric")
    printer = _Printer(bw)
    q = plan.qos
    yield f"{FOLDER}/perftest-rounds.txt", "perftest-plan", _rounds_text(plan, bw, printer)
    yield f"{FOLDER}/run-perftest.sh", "perftest-script", render(
        "bandwidth/run-perftest.sh.j2", header=header,
        pair_lines="".join(map(printer.pair_line, bw.pairs)), rounds=bw.rounds, duration=bw.duration_s,
        tclass=bw.tclass, dscp=q.roce_dscp, priority=q.roce_priority, gid_index=bw.gid_index,
        expected_name=EXPECTED)
    if bw.nccl is not None:
        # always quoted: NCCL's exact-match values start with '=', which shlex leaves bare and shellcheck flags
        env = [(key, "'" + value.replace("'", "'\\''") + "'") for key, value in plan.host_profile.nccl_env]
        context = {"header": header, "nccl": bw.nccl, "env": env, "expected_name": EXPECTED,
                   "nodelist": hostlist(bw.nccl.hosts)}
        yield f"{FOLDER}/nccl-allreduce.sbatch", "nccl-sbatch", render("bandwidth/nccl-allreduce.sbatch.j2", **context)
        yield (f"{FOLDER}/nccl-allreduce-mpirun.sh", "nccl-mpirun",
               render("bandwidth/nccl-allreduce-mpirun.sh.j2", **context))
    yield f"{FOLDER}/{EXPECTED}", "bandwidth-expected", dumps_outline(expected_document(plan, bw), tight=True)
