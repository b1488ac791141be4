"""Benchmark: validate, plan and render the sized example fabrics; median wall time and peak RSS.

Each stage is the command a user runs, in a fresh process, so imports are paid every time as a user pays
them: `rocefab validate`, `rocefab plan --json` (the whole plan printed), `rocefab render -o DIR` into an empty
folder (every switch config, host script and artifact, written atomically, with the default worker processes),
and the same render again over the last one's folder (what the next render of an unchanged intent costs), and
`change`: a render over the last one's folder after a one-device change to the intent (one host cable's
measured length, different in each run, in a copy of the intent under the same file name).
After each render, `write-floor` writes that render's own files afresh with nothing rendered
(bench/write_floor.py): the floor under the render's time on this machine's file system. Every run starts
after a sync, with nothing of the run before still being flushed. Peak RSS is that of the largest process.
The bench begins and ends by timing ten million steps of a Python loop: compare figures from two machines (or
two benches of one) by that yardstick, not as they stand. Run from the top of the checkout:

    python bench/bench.py                       # the 128-, 1,024- and 4,096-node fabrics, 5 runs each
    python bench/bench.py --runs 3 --lab 202    # and a lab dry run of a ~200-device fabric
    python bench/bench.py --examples --lab 202  # only the lab dry run
    python bench/bench.py --examples --pyavd 24 # only EOS rendering against pyavd (bench/eos_vs_pyavd.py)
    python bench/bench.py --examples cluster12288-rail --stages what-if --runs 3
                                                # every single-switch failure of the 98,304-GPU fabric
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
_CLI = "import subprocess, sys; subprocess.run([sys.executable, '-m', 'rocefab', {args}], check=True, " \
       "stdout=subprocess.DEVNULL)"
STAGES = {
    "validate": _CLI.format(args="'validate', {path!r}"),
    "plan": _CLI.format(args="'plan', {path!r}, '--json'"),
    "render": _CLI.format(args="'render', {path!r}, '-o', {out!r}"),  # into an empty folder, each run
    "rerender": _CLI.format(args="'render', {path!r}, '-o', {out!r}"),  # over the last render, intent unchanged
    # over the last render, one host cable's measured length changed in the intent (see `one_cable_changed`)
    "change": _CLI.format(args="'render', {path!r}, '-o', {out!r}"),
    # every switch failing on its own (exit 1 when one cuts a host off: not an error here)
    "what-if": _CLI.format(args="'what-if', {path!r}, '--each', '--json'").replace("check=True", "check=False"),
}
_EVALUATED = re.compile(r"evaluated (\d+) single-switch failures in ([\d.]+) s")
# The peak of the measured process and every process it waited for (render's workers included).
RSS = "; import resource; print(max(resource.getrusage(w).ru_maxrss for w in " \
      "(resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))"


def example_intent(name: str, folder: Path) -> tuple[Path, int]:
    """The bundled example `name`, or `clusterN-rail`: the 1,024-node rail example grown to N nodes
    (with address pools to match). Returns the intent file and its node count."""
    if (ROOT / "intents" / f"{name}.yaml").is_file():
        path = ROOT / "intents" / f"{name}.yaml"
        return path, yaml.safe_load(path.read_text())["topology"]["nodes"]
    nodes = int(name.removeprefix("cluster").removesuffix("-rail"))
    intent = yaml.safe_load((ROOT / "intents" / "cluster1024-rail.yaml").read_text())
    intent["fabric"]["name"] = name
    intent["topology"]["nodes"] = nodes
    switches = max(256, nodes // 3)  # 12,288 rail nodes take 4,096 switches
    prefix = 32 - (2 * switches - 1).bit_length()
    intent["underlay"]["loopback_subnet"] = f"10.0.0.0/{prefix}"
    intent["management"]["subnet"] = f"192.168.0.0/{prefix}"
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False))
    return path, nodes


def lab_intent(devices: int) -> dict[str, Any]:
    """A mixed-vendor ToR fabric of about `devices` devices: 4 NX-OS spines, leaf pairs of 16 hosts each,
    cycling through EOS, Cumulus and NX-OS pairs."""
    pairs = max(1, (devices - 4) // 18)
    models = ["DCS-7060DX5-64S", "SN5600", "N9K-C9364D-GX2A"]
    return {
        "fabric": {"name": f"lab{devices}"},
        "vlans": [{"id": 101, "name": "rail0", "subnet": "10.128.0.0/12", "pair_prefix_length": 26}],
        "underlay": {
            "asn": {"spine": 65000, "leaf_first": 65101},
            "loopback_subnet": "10.0.0.0/22",
            "p2p_subnet": "10.1.0.0/16",
            "peer_link_subnet": "10.255.0.0/20",
        },
        "management": {"subnet": "192.168.0.0/22", "gateway": "192.168.0.1"},
        "topology": {
            "spines": {"model": "N9K-C9364D-GX2A", "count": 4},
            "leaf": {"uplinks_per_spine": 1, "uplink_speed_gbps": 400},
            "leaf_pairs": [{"name": f"r{i + 1}", "model": models[i % 3], "hosts": 16} for i in range(pairs)],
        },
        "hosts": {
            "bonds": [{"name": "bond0", "members": ["ens1f0np0", "ens1f1np1"], "rdma_device": "mlx5_bond_0",
                       "speed_gbps": 400, "vlan": 101}],
            "nccl": {"socket_ifname": "eno1"},
        },
    }


def default_concurrency(command: str) -> int:
    """The `-j` a command runs with when given none, read from its signature (what a user gets)."""
    import inspect

    from rocefab import deploy_commands, verify_commands

    functions: dict[str, Callable[..., Any]] = {"apply": deploy_commands.apply, "verify": verify_commands.verify}
    default = inspect.signature(functions[command]).parameters["concurrency"].default
    assert isinstance(default, int)
    return default


TICKS = os.sysconf("SC_CLK_TCK")  # /proc/<pid>/stat counts CPU time in these


def _cpu_of(pid: int) -> tuple[float, float]:
    """(own, reaped children's) CPU seconds of a process, from /proc (0, 0 where there is none)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    user, system, child_user, child_system = (int(f) / TICKS for f in fields[11:15])
    return user + system, child_user + child_system


def lab_cpu(lab_pid: int) -> float:
    """CPU seconds so far of the lab: its process, the host scripts it ran (reaped children), and the host stubs'
    server with its workers (children the lab has not reaped yet, as the workers are not the server's)."""
    parents: dict[int, int] = {}
    servers = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if b"_server.py" in (entry / "cmdline").read_bytes():
                servers.add(int(entry.name))
        except OSError:
            continue
    counted = {lab_pid} | {pid for pid in servers if parents.get(pid) == lab_pid}
    counted |= {pid for pid in servers if parents.get(pid) in counted}  # the workers of the lab's server
    return sum(sum(_cpu_of(pid)) for pid in counted)


def _timed(command: list[str], lab_pid: int) -> tuple[float, float, float, subprocess.CompletedProcess[str]]:
    """(wall s, CPU s of the command's process, CPU s of the lab meanwhile, its result)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lab_before = lab_cpu(lab_pid)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, own, lab_cpu(lab_pid) - lab_before, done


def bench_lab(devices: int, runs: int, concurrency: int | None) -> list[dict[str, Any]]:
    """Start a lab for a ~`devices`-device fabric, then time `rocefab apply --dry-run` and `rocefab verify`
    against it. The lab is in factory state (pushing 200 devices' fake hosts takes many minutes on two cores), so
    verify reads every device and reports its checks failing: the same commands and checks as on a pushed fabric."""
    with tempfile.TemporaryDirectory(prefix="rocefab-bench-lab-") as tmp:
        intent = Path(tmp) / "lab.yaml"
        intent.write_text(yaml.safe_dump(lab_intent(devices), sort_keys=False))
        folder = Path(tmp) / "lab"
        cli = [sys.executable, "-m", "rocefab"]
        subprocess.run([*cli, "lab", "up", str(intent), "--dir", str(folder)], check=True, capture_output=True)
        try:
            inventory = folder / "inventory.yaml"
            count = len(yaml.safe_load(inventory.read_text())["devices"])
            lab_pid = int(json.loads((folder / "lab.json").read_text())["pid"])
            jobs = ["-j", str(concurrency)] if concurrency else []  # none: the command's own default
            shown = f"-j {concurrency}" if concurrency else f"default concurrency ({default_concurrency('apply')})"
            samples = []
            for _ in range(runs):
                wall, own, lab, done = _timed([*cli, "apply", str(intent), "-i", str(inventory), "--dry-run", *jobs],
                                              lab_pid)
                samples.append((wall, own, lab))
                summary = done.stdout.strip().splitlines()[-1]
                if done.returncode != 0:  # the failed devices' rows (the table wraps a message onto the next)
                    lines = done.stdout.splitlines()
                    failed = [f"{line}\n{lines[i + 1] if i + 1 < len(lines) else ''}" for i, line in enumerate(lines)
                              if "│ failed " in line]
                    raise SystemExit(f"dry run failed: {summary}\n" + "\n".join(failed[:10])
                                     + f"\n{done.stderr[-2000:]}")
            wall, own, lab = (statistics.median(s[i] for s in samples) for i in range(3))
            print(f"lab dry run: {count} devices, {shown}: median {wall:.1f} s, CPU rocefab {own:.1f} s + lab "
                  f"{lab:.1f} s ({summary})", flush=True)
            apply_jobs = concurrency or default_concurrency("apply")
            rows = [{"stage": "lab-dry-run", "devices": count, "concurrency": apply_jobs,
                     "median_s": round(wall, 2), "rocefab_cpu_s": round(own, 2), "lab_cpu_s": round(lab, 2),
                     "runs": runs, "result": summary}]
            samples = []
            for _ in range(runs):
                wall, own, lab, done = _timed([*cli, "verify", str(intent), "-i", str(inventory), "--json"], lab_pid)
                samples.append((wall, own, lab))
                if done.returncode not in (0, 1):
                    raise SystemExit(f"verify failed to run: {done.stderr[-2000:]}")
                summary = json.loads(done.stdout)["summary"]
            wall, own, lab = (statistics.median(s[i] for s in samples) for i in range(3))
            verify_jobs = default_concurrency("verify")
            print(f"lab verify: {count} devices, default concurrency ({verify_jobs}): median {wall:.1f} s, CPU "
                  f"rocefab {own:.1f} s + lab {lab:.1f} s ({summary})", flush=True)
            rows.append({"stage": "lab-verify", "devices": count, "concurrency": verify_jobs,
                         "median_s": round(wall, 2), "rocefab_cpu_s": round(own, 2), "lab_cpu_s": round(lab, 2),
                         "runs": runs, "result": summary})
            return rows
        finally:
            subprocess.run([*cli, "lab", "down", "--dir", str(folder)], check=False, capture_output=True)


def first_host_port(rendered: Path) -> tuple[str, str]:
    """(switch, port) of the first host's first cable, read from a render's plan/ parts (or the plan.json that
    renders before plan/ wrote, for a bench of older code)."""
    if not (rendered / "plan" / "index.json").is_file():
        host = json.loads((rendered / "plan.json").read_text())["hosts"][0]
        port = host["bonds"][0]["members"][0] if host["bonds"] else host["nics"][0]
        return port["switch"], port["port"]
    index = json.loads((rendered / "plan" / "index.json").read_text())
    for part in index["parts"]:
        with (rendered / part["path"]).open() as lines:
            for line in lines:
                if line.startswith('{"host"'):
                    host = json.loads(line)["host"]
                    port = host["bonds"][0]["members"][0] if host["bonds"] else host["nics"][0]
                    return port["switch"], port["port"]
    raise SystemExit(f"{rendered}: no host in the plan")


def one_cable_changed(path: Path, original: str, rendered: Path, run: int) -> None:
    """Write the intent at `path` as `original` with the first host cable measured at `run + 1` m: each run a
    change from the one before, touching one host (and its part of the plan)."""
    switch, port = first_host_port(rendered)
    intent = yaml.safe_load(original)
    cabling = intent.setdefault("cabling", {})
    cabling["measured"] = [*cabling.get("measured", []), {"device": switch, "port": port, "length_m": run + 1}]
    path.write_text(yaml.safe_dump(intent, sort_keys=False))


def measure(stage: str, path: Path, out: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, what the command said on stderr) of one stage in a fresh interpreter, which
    reports its own peak."""
    code = STAGES[stage].format(path=str(path), out=str(out)) + RSS
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    return wall, int(done.stdout.split()[-1]) / 1024, done.stderr


def _floor_row(name: str, nodes: int, rendered: Path, render_s: float, runs: int, trash: Path) -> dict[str, Any]:
    """What writing the render's own bytes costs here, rendering nothing (bench/write_floor.py); its copies are
    set aside in `trash`."""
    workers = min(os.cpu_count() or 1, 4)  # as many processes as `rocefab render` starts by default
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("write_floor.py")), str(rendered),
                           str(workers), str(runs), str(trash)], check=True, capture_output=True, text=True)
    floor = json.loads(done.stdout)
    wall, size, files = floor["median_s"], floor["bytes"], floor["files"]
    print(f"{name:<18} {nodes:>5} nodes  {'write-floor':<11} median {wall:6.2f} s  {size / 1e9:.2f} GB in {files} "
          f"files on {workers} processes, nothing rendered; the render takes {render_s / wall:.1f}x that", flush=True)
    return {"example": name, "nodes": nodes, "stage": "write-floor", "median_s": round(wall, 3), "bytes": size,
            "files": files, "processes": workers, "render_over_floor": round(render_s / wall, 2)}


def interpreter() -> str:
    """Which Python the stages run on, and whether its interpreter is a shared libpython: the same code ran about a
    fifth faster on Debian's python3.11 (libpython linked into the executable) than on a pyenv 3.11 built with
    its defaults (a shared libpython, no profile-guided or link-time optimisation) on one machine."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        maps = ""
    shared = sorted({line.split()[-1] for line in maps.splitlines() if "/libpython" in line})
    where = f"libpython shared: {shared[0]}" if shared else ("libpython linked in" if maps else "libpython unknown")
    return f"{platform.python_implementation()} {platform.python_version()} at {sys.executable} ({where})"


def python_speed() -> float:
    """Seconds this machine takes for ten million steps of a Python loop: the yardstick printed beside the figures,
    since virtual machines of one kind differ (and vary within a run) by a factor of three or more."""
    start = time.perf_counter()
    total = 0
    for step in range(10_000_000):
        total += step
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="*", default=["tor128-3tier", "cluster1024-rail", "cluster4096-rail"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--stages", nargs="*", default=list(STAGES), choices=list(STAGES),
                        help="which stages to time (default: all)")
    parser.add_argument("--lab", type=int, default=0, help="also time a lab dry run of about this many devices")
    parser.add_argument("--concurrency", type=int, default=None,
                        help="the lab dry run's -j (default: none given, so apply's own default)")
    parser.add_argument("--pyavd", type=int, default=0, metavar="PAIRS",
                        help="also compare EOS rendering with pyavd's on an all-EOS fabric of this many leaf pairs "
                             "(needs the bench extra: pip install -e '.[bench]')")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    speed = [python_speed()]
    python = interpreter()
    print(f"this machine: 10^7 Python loop steps in {speed[0]:.2f} s; {python}", flush=True)
    with tempfile.TemporaryDirectory(prefix="rocefab-bench-") as tmp:
        # Renders are set aside here, not deleted, until the bench ends: right after tens of thousands of files
        # are deleted, creating as many new ones costs seconds of kernel time (perf: ext4's inode allocator in
        # find_inode_bit and recently_deleted), which a user's render into a new folder does not pay.
        trash = Path(tmp) / "trash"
        trash.mkdir()
        for name in args.examples:
            path, nodes = example_intent(name, Path(tmp))
            rendered = Path(tmp) / f"out-{name}"
            original = path.read_text()
            for stage in args.stages:
                samples = []
                for run in range(args.runs):
                    if stage == "render" and rendered.exists():
                        rendered.rename(trash / f"{rendered.name}-{len(list(trash.iterdir()))}")
                    intent = path
                    if stage == "change":
                        if not (rendered / "manifest.json").is_file():
                            measure("render", path, rendered)  # a render to change from
                        # the same file name (generated files name it), in a folder of its own
                        intent = Path(tmp) / "changed" / path.name
                        intent.parent.mkdir(exist_ok=True)
                        one_cable_changed(intent, original, rendered, run)
                    # Nothing left to flush from the run before: the kernel throttles a writer while gigabytes
                    # of dirty pages are still going to disk, and a user's render seldom starts in that state.
                    os.sync()
                    samples.append(measure(stage, intent, rendered))
                wall = statistics.median(s[0] for s in samples)
                rss = max(s[1] for s in samples)
                renders = stage in ("render", "rerender", "change")
                files = sum(1 for p in rendered.rglob("*") if p.is_file()) if renders else 0
                row = {"example": name, "nodes": nodes, "stage": stage, "median_s": round(wall, 3),
                       "peak_rss_mb": round(rss), "files": files}
                if files:
                    # Work grows with cables (ports to configure), which a third tier multiplies.
                    summary = json.loads((rendered / "summary.json").read_text())
                    row["cables"] = sum(c["count"] for c in summary["cables"])
                    row["ms_per_1000_cables"] = round(1000 * wall / row["cables"] * 1000, 1)
                said = [_EVALUATED.search(s[2]) for s in samples]
                if stage == "what-if" and all(said):
                    # the failures alone, without reading the intent and planning the fabric
                    row["failures"] = int(said[0].group(1))  # type: ignore[union-attr]
                    row["evaluate_median_s"] = statistics.median(float(m.group(2)) for m in said)  # type: ignore[union-attr]
                    print(f"{name:<18} {nodes:>5} nodes  what-if     {row['failures']} single-switch failures "
                          f"evaluated in a median {row['evaluate_median_s']:.2f} s (plan included: {wall:.2f} s)",
                          flush=True)
                rows.append(row)
                print(f"{name:<18} {nodes:>5} nodes  {stage:<11} median {wall:6.2f} s  peak RSS {rss:5.0f} MB"
                      + (f"  {files} files, {row['cables']} cables, {row['ms_per_1000_cables']} ms per 1,000 cables"
                         if files else ""), flush=True)
                if stage == "render":
                    rows.append(_floor_row(name, nodes, rendered, wall, args.runs, trash))
    if args.lab:
        rows.extend(bench_lab(args.lab, args.runs, args.concurrency))
    if args.pyavd:
        from eos_vs_pyavd import compare  # bench/ is on sys.path as the script's folder

        row = compare(args.pyavd, max(args.runs, 5))
        row.pop("examples")
        print(f"EOS rendering, {row['switches']} switches: rocefab {row['rocefab']['us_per_line']} us/line, pyavd "
              f"{row['pyavd_get_device_config']['us_per_line']} us/line: {row['ratio_per_line_best']}x per line",
              flush=True)
        rows.append({"stage": "eos-vs-pyavd", **row})
    speed.append(python_speed())
    print(f"this machine: 10^7 Python loop steps in {speed[1]:.2f} s (at the start: {speed[0]:.2f} s)", flush=True)
    print(json.dumps({"machine": {"python": python, "cpus": os.cpu_count(),
                                  "platform": platform.platform(), "loop_1e7_s": [round(s, 2) for s in speed]},
                      "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
