"""`rocefab inventory export --format slurm`: Slurm's topology.conf, read back by a real slurmctld (Debian's
slurmctld 22.05, topology/tree, auth/none on 127.0.0.1) through `scontrol show topology`, and the hostlist
expressions expanded by Slurm's own `scontrol show hostnames`."""

from __future__ import annotations

import itertools
import os
import random
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import needs_tool

from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.slurm_topology import hostlist, slurm_switches, topology_conf

ROOT = Path(__file__).resolve().parents[1]
slurm = needs_tool("slurmctld", "slurmctld slurm-client")
# what slurmctld logs about a topology.conf it cannot take (the rest of a first start's errors are about state files
# and plugins this test does not use)
TOPOLOGY_ERROR = re.compile(r"^.*(?:error|fatal).*(?:topolog|switch|node name|hostlist).*$", re.I | re.M)


def plan_of(name: str) -> FabricPlan:
    checked = check_file(ROOT / "intents" / f"{name}.yaml", name)
    assert checked.plan is not None
    return checked.plan


_EXPAND_CONF: list[Path] = []


def expand(expression: str) -> list[str]:
    """Slurm's own expansion of a hostlist expression (scontrol reads a slurm.conf even for this: a minimal one)."""
    if not _EXPAND_CONF:
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"rocefab-slurm-expand-{os.getpid()}"
        folder.mkdir(exist_ok=True)
        (folder / "slurm.conf").write_text("ClusterName=expand\nSlurmctldHost=localhost(127.0.0.1)\n"
                                           "AuthType=auth/none\nCredType=cred/none\n", encoding="utf-8")
        _EXPAND_CONF.append(folder / "slurm.conf")
    done = subprocess.run(["scontrol", "show", "hostnames", expression], capture_output=True, text=True, check=True,
                          timeout=30, env={**os.environ, "SLURM_CONF": str(_EXPAND_CONF[0])})
    return done.stdout.split()


@slurm
def test_hostlists_expand_back_to_their_names_in_slurm() -> None:
    chooser = random.Random(5)
    cases = [["gpu001", "gpu002", "gpu003", "gpu010"], ["gpu9", "gpu10", "gpu11"], ["rack1-a", "rack1-b"],
             ["spines"], [f"node{n:05d}" for n in range(1, 12289)]]
    for _ in range(40):
        width = chooser.choice([1, 2, 3, 4])
        numbers = sorted(chooser.sample(range(10 ** width), min(10 ** width, chooser.randint(1, 30))))
        cases.append([f"h{n:0{width}d}" for n in numbers] + chooser.sample(["x-1a", "y", "gpu12"], 2))
    for names in cases:
        assert expand(hostlist(names)) == names, hostlist(names)


def test_the_tree_of_each_design() -> None:
    pod32 = {s.name: s for s in slurm_switches(plan_of("pod32"))}
    assert pod32["rack1"].nodes == tuple(f"gpu{i:03}" for i in range(1, 9)) and "rack1-a and rack1-b" in pod32[
        "rack1"].comment
    assert pod32["spines"].switches == ("rack1", "rack2", "rack3", "rack4")
    rail = slurm_switches(plan_of("cluster1024-rail"))
    assert len(rail) == 17 and rail[0].name == "block01" and rail[0].nodes == tuple(f"gpu{i:03}" for i in range(1, 65))
    assert "leaf001, leaf017, leaf033, leaf049, leaf065, leaf081, leaf097, leaf113 (rails 0-7)" in rail[0].comment
    three = {s.name: s for s in slurm_switches(plan_of("tor128-3tier"))}
    assert three["pod0"].switches == ("rack001", "rack002", "rack003")
    assert three["superspines"].switches == ("pod0", "pod1", "pod2")


class Controller:
    """slurmctld in the foreground on a free port of 127.0.0.1, with a slurm.conf naming every host."""

    def __init__(self, folder: Path, hosts: list[str], topology: str) -> None:
        self.folder = folder
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        (folder / "state").mkdir()
        conf = ["ClusterName=rocefabtest", "SlurmctldHost=localhost(127.0.0.1)", f"SlurmctldPort={port}",
                f"SlurmdPort={port + 1}", "SlurmUser=root", "AuthType=auth/none", "CredType=cred/none",
                f"StateSaveLocation={folder / 'state'}", f"SlurmdSpoolDir={folder / 'spool'}",
                f"SlurmctldPidFile={folder / 'slurmctld.pid'}", f"SlurmctldLogFile={folder / 'slurmctld.log'}",
                "TopologyPlugin=topology/tree", "SelectType=select/cons_tres", "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none", "MpiDefault=none", "NodeName=DEFAULT CPUs=1 State=UNKNOWN",
                f"NodeName={hostlist(hosts)} NodeAddr=127.0.0.1", "PartitionName=all Nodes=ALL Default=YES"]
        (folder / "slurm.conf").write_text("\n".join(conf) + "\n", encoding="utf-8")
        (folder / "topology.conf").write_text(topology, encoding="utf-8")
        self.env = {**os.environ, "SLURM_CONF": str(folder / "slurm.conf")}
        self.process = subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(folder / "slurm.conf")], env=self.env,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)

    def scontrol(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["scontrol", *args], env=self.env, capture_output=True, text=True, check=False,
                              timeout=30)

    def topology(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done = self.scontrol("show", "topology")
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout
            assert self.process.poll() is None, self.log()
            time.sleep(0.5)
        raise AssertionError(f"slurmctld did not answer: {self.log()}")

    def log(self) -> str:
        path = self.folder / "slurmctld.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else "(no log)"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def start_controller(tmp_path: Path) -> Iterator[Callable[[list[str], str], Controller]]:
    started: list[Controller] = []

    def start(hosts: list[str], topology: str) -> Controller:
        folder = tmp_path / f"slurm{len(started)}"
        folder.mkdir()
        started.append(Controller(folder, hosts, topology))
        return started[-1]

    yield start
    for c in started:
        c.stop()


@slurm
@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail", "tor128-3tier"])
def test_slurmctld_reads_back_every_switch_and_node(name: str, tmp_path: Path,
                                                    start_controller: Callable[[list[str], str], Controller]) -> None:
    plan = plan_of(name)
    exported = tmp_path / "exported.conf"
    intent = ROOT / "intents" / f"{name}.yaml"
    done = subprocess.run([sys.executable, "-m", "rocefab", "inventory", "export", str(intent), "--format", "slurm",
                           "-o", str(exported)], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    text = exported.read_text(encoding="utf-8")
    assert text.split("\n", 1)[1] == topology_conf(plan).split("\n", 1)[1]  # the first line names the version
    hosts = [h.name for h in plan.hosts]
    running = start_controller(hosts, text)
    shown = running.topology()
    read: dict[str, dict[str, str]] = {}
    for line in shown.splitlines():
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        read[fields["SwitchName"]] = fields
    expected = slurm_switches(plan)
    assert sorted(read) == sorted(s.name for s in expected), shown
    for switch in expected:
        fields = read[switch.name]
        if switch.nodes:
            assert expand(fields["Nodes"]) == list(switch.nodes), switch.name
            assert fields["Level"] == "0"
        if switch.switches:
            assert expand(fields["Switches"]) == list(switch.switches), switch.name
    root = expected[-1]
    assert sorted(expand(read[root.name]["Nodes"])) == sorted(hosts), "every node under the root"
    assert not TOPOLOGY_ERROR.findall(running.log()), running.log()


@slurm
def test_the_log_check_sees_a_topology_slurm_refuses(tmp_path: Path,
                                                     start_controller: Callable[[list[str], str], Controller]) -> None:
    """The check above can fail: a switch naming a node slurm.conf does not know is logged."""
    running = start_controller(["gpu001", "gpu002"], "SwitchName=leaf1 Nodes=gpu[001-003]\n")
    deadline = time.monotonic() + 30
    while not TOPOLOGY_ERROR.search(running.log()) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert TOPOLOGY_ERROR.search(running.log()), running.log()


def test_the_command_writes_to_stdout_without_output() -> None:
    done = subprocess.run([sys.executable, "-m", "rocefab", "inventory", "export", str(ROOT / "intents" / "lab.yaml"),
                           "--format", "slurm"], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0 and "SwitchName=leaf1 Nodes=gpu[001-004]\n" in done.stdout


@pytest.mark.parametrize("name", ["pod32", "cluster1024-rail", "tor128-3tier"])
def test_kubernetes_labels_carry_the_same_tree(name: str) -> None:
    import yaml

    from rocefab.renderers.node_labels import node_labels_yaml

    plan = plan_of(name)
    nodes = yaml.safe_load(node_labels_yaml(plan))["nodes"]
    assert sorted(nodes) == sorted(h.name for h in plan.hosts)
    tree = {s.name: s for s in slurm_switches(plan)}
    for node, labels in nodes.items():
        tiers = [labels[f"fabric.topograph.run/tier-{n}"] for n in range(len(labels))]
        assert node in tree[tiers[0]].nodes
        for lower, upper in itertools.pairwise(tiers):
            assert lower in tree[upper].switches
        assert tiers[-1] == slurm_switches(plan)[-1].name
    if name == "cluster1024-rail":
        assert nodes["gpu065"] == {"fabric.topograph.run/tier-0": "block02", "fabric.topograph.run/tier-1": "spines"}
