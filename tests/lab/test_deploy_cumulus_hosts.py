"""rocefab's NVUE and host sessions against the lab's Cumulus switch and Linux host, over real SSH."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from deploy_behaviour import PASSWORD as BEHAVIOUR_PASSWORD
from deploy_behaviour import DeployBehaviour
from hostlib import staged

from rocefab.deploy.fleet import Fleet, Status, Target
from rocefab.deploy.inventory import Access, Secret, Transport
from rocefab.lab.cumulus.nvue import CumulusDevice
from rocefab.lab.host.linux_host import LinuxHost
from rocefab.lab.sshd import LabSSHServer
from rocefab.platforms.cumulus.session import CumulusSession
from rocefab.platforms.host.session import HostSession
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.plan import FabricPlan
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "lab-Secret-5"


def _render(name: str) -> tuple[FabricPlan, dict[tuple[str, str], str]]:
    checked = check_file(ROOT / "intents" / f"{name}.yaml", "0.0.0-test")
    assert checked.plan is not None
    files = render_fabric(checked.plan)
    by_path = {f.path: f.content for f in files}
    # a host script as apply stages it: self-contained
    return checked.plan, {(f.device, f.kind): staged(f.content, by_path) if f.kind == "host-script" else f.content
                          for f in files}


POD, POD_FILES = _render("pod32")


def access(server: LabSSHServer, name: str, kind: str, known_hosts: Path, username: str,
           password: str = PASSWORD) -> Access:
    return Access(
        name=name, kind=kind, host=server.host, transport=Transport.SSH, port=server.port, ssh_port=server.port,
        username=username, password=Secret(password), scheme="https", verify_tls=True, ca_file=None,
        # a host script's first run takes ~10 s alone and nearer 20 s with four test workers on two cores
        verify_host_key=True, known_hosts=known_hosts, timeout_s=60, sudo=False,
    )


@pytest.fixture
def switch(tmp_path: Path) -> Iterator[tuple[LabSSHServer, Access]]:
    device = CumulusDevice(tmp_path / "rack3-a", "rack3-a", password=PASSWORD)
    with LabSSHServer(device, name="rack3-a") as server:
        known = tmp_path / "known_hosts"
        known.write_text(server.known_hosts_line() + "\n")
        yield server, access(server, "rack3-a", "cumulus", known, "cumulus")


def _applied(server: LabSSHServer) -> dict:
    device = server.device
    assert isinstance(device, CumulusDevice)
    return device.applied


def test_nvue_dry_run_apply_converge_and_keep_the_login(switch: tuple[LabSSHServer, Access]) -> None:
    server, acc = switch
    candidate = POD_FILES[("rack3-a", "nvue-yaml")]
    before = repr(_applied(server))
    with CumulusSession(acc) as session:
        session.load(candidate)
        diff = session.diff()
        session.discard()
    assert "\n+nv set qos pfc default-global switch-priority 3\n" in diff
    assert repr(_applied(server)) == before, "a dry run changes nothing"
    with CumulusSession(acc) as session:
        session.load(candidate)
        # rack3-a breaks cages out and puts QoS on them: the session must apply the breakouts first.
        session.commit(confirm_seconds=60)
        assert session.verify(candidate) == ""
        session.confirm()
    applied = _applied(server)
    assert applied["qos"]["pfc"]["default-global"]["switch-priority"] == {"3": {}}
    assert "cumulus" in applied["system"]["aaa"]["user"], "the replace carried the login account"
    with CumulusSession(acc) as session:  # logging in again proves the account survived
        session.load(candidate)
        assert session.diff() == ""
        session.discard()




@pytest.fixture
def host(tmp_path: Path) -> Iterator[tuple[LinuxHost, LabSSHServer, Access]]:
    gpu = next(h for h in POD.hosts if h.name == "gpu001")
    netdevs = [m.netdev for b in gpu.bonds for m in b.members]
    lag = {b.rdma_device: (b.members[0].netdev, b.members[1].netdev) for b in gpu.bonds}
    device = LinuxHost(tmp_path / "gpu001", "gpu001", netdevs, lag, password=PASSWORD)
    with LabSSHServer(device, name="gpu001") as server:
        known = tmp_path / "known_hosts"
        known.write_text(server.known_hosts_line() + "\n")
        yield device, server, access(server, "gpu001", "host", known, "root")


def test_host_dry_run_apply_and_in_sync(host: tuple[LinuxHost, LabSSHServer, Access]) -> None:
    from rocefab.lab.host.fakehost import snapshot

    device, _, acc = host
    script = POD_FILES[("gpu001", "host-script")]
    before = snapshot(device.sandbox / "sys")
    results = Fleet([Target(acc, script)], HostSession).dry_run()
    assert results[0].status is Status.PENDING
    # the drifted setting as its value now and the value the script sets
    assert "\n-enp24s0f0np0 pfc priorities = 0,0,0,0,0,0,0,0\n+enp24s0f0np0 pfc priorities = 0,0,0,1,0,0,0,0\n" in \
        results[0].diff, results[0].diff
    assert snapshot(device.sandbox / "sys") == before
    results = Fleet([Target(acc, script)], HostSession).apply([["gpu001"]], None)
    assert results[0].status is Status.COMMITTED, results[0].error
    assert [r.status for r in Fleet([Target(acc, script)], HostSession).dry_run()] == [Status.UNCHANGED]


def test_host_key_mismatch_is_refused(host: tuple[LinuxHost, LabSSHServer, Access], tmp_path: Path) -> None:
    from dataclasses import replace

    from rocefab.deploy.session import DeployError

    _, server, acc = host
    stranger = tmp_path / "other_known_hosts"
    stranger.write_text(f"[{server.host}]:{server.port} ssh-ed25519 "
                        "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
    with pytest.raises(DeployError, match="SSH host key"):
        HostSession(replace(acc, known_hosts=stranger)).open()



@pytest.mark.parametrize("after", [False, True])
def test_nvue_connection_lost_at_apply_leaves_the_switch_fully_old(switch: tuple[LabSSHServer, Access],
                                                                   after: bool) -> None:
    server, acc = switch
    device = server.device
    assert isinstance(device, CumulusDevice)
    before = repr(_applied(server))
    # rack3-a needs a two-stage apply (breakouts first); its first apply loses the connection, before or
    # after running. Either way the runner must not leave the breakouts-only half state behind.
    device.faults.drop_on, device.faults.drop_after, device.faults.drop_once = r"^nv config apply -y$", after, True
    results = Fleet([Target(acc, POD_FILES[("rack3-a", "nvue-yaml")])], CumulusSession).apply([["rack3-a"]], None)
    assert results[0].status is Status.FAILED, results[0]
    assert repr(_applied(server)) == before, "fully old: the half-applied breakouts were rolled back"
    assert "rolled back: the running config read back equals the one before the commit" in (results[0].error or "")


def test_nvue_connection_lost_at_apply_and_at_rollback_is_state_unknown(switch: tuple[LabSSHServer, Access]) -> None:
    server, acc = switch
    device = server.device
    assert isinstance(device, CumulusDevice)
    # Every apply loses its answer, the rollback's too: nothing can tell what the switch runs now.
    device.faults.drop_on, device.faults.drop_after = r"^nv config apply -y$", True
    results = Fleet([Target(acc, POD_FILES[("rack3-a", "nvue-yaml")])], CumulusSession).apply([["rack3-a"]], None)
    assert results[0].status is Status.UNKNOWN, results[0]
    assert "rollback did not complete" in (results[0].error or "")
    assert "rolled back:" not in (results[0].error or "")


def test_host_missing_prerequisite_is_a_clear_failure(host: tuple[LinuxHost, LabSSHServer, Access]) -> None:
    import shutil

    device, _, acc = host
    shutil.rmtree(device.sandbox / "sys" / "class" / "net" / "enp24s0f1np1")
    results = Fleet([Target(acc, POD_FILES[("gpu001", "host-script")])], HostSession).dry_run()
    assert results[0].status is Status.FAILED
    assert "network interface 'enp24s0f1np1' does not exist" in (results[0].error or "")


class TestCumulusDeployBehaviour(DeployBehaviour):
    session = CumulusSession
    name = "rack3-a"

    @contextmanager
    def serve(self, tmp_path: Path) -> Iterator[tuple[CumulusDevice, Access]]:
        device = CumulusDevice(tmp_path / self.name, self.name, password=BEHAVIOUR_PASSWORD)
        with LabSSHServer(device, name=self.name) as server:
            known = tmp_path / "known_hosts"
            known.write_text(server.known_hosts_line() + "\n")
            yield device, access(server, self.name, "cumulus", known, "cumulus", password=BEHAVIOUR_PASSWORD)

    def candidate(self) -> str:
        return POD_FILES[(self.name, "nvue-yaml")]

    def state(self, device: CumulusDevice) -> str:
        return repr(device.applied)

    def smaller(self) -> tuple[str, str]:
        watchdog = "      pfc-watchdog:\n        polling-interval: 100\n        robustness: 3\n"
        smaller = self.candidate().replace(watchdog, "")
        return smaller, "\n-nv set qos pfc-watchdog polling-interval 100\n"

    def refuse(self, device: CumulusDevice) -> None:
        device.faults.reject_path = r"^qos pfc"

    def slow(self, device: CumulusDevice, seconds: float) -> None:
        device.faults.delay_s = seconds

    def commit_command(self) -> str:
        return r"^nv config apply -y$"


class TestHostDeployBehaviour(DeployBehaviour):
    session = HostSession
    name = "gpu001"

    @contextmanager
    def serve(self, tmp_path: Path) -> Iterator[tuple[LinuxHost, Access]]:
        gpu = next(h for h in POD.hosts if h.name == self.name)
        netdevs = [m.netdev for b in gpu.bonds for m in b.members]
        lag = {b.rdma_device: (b.members[0].netdev, b.members[1].netdev) for b in gpu.bonds}
        device = LinuxHost(tmp_path / self.name, self.name, netdevs, lag, password=BEHAVIOUR_PASSWORD)
        with LabSSHServer(device, name=self.name) as server:
            known = tmp_path / "known_hosts"
            known.write_text(server.known_hosts_line() + "\n")
            yield device, access(server, self.name, "host", known, "root", password=BEHAVIOUR_PASSWORD)

    def candidate(self) -> str:
        return POD_FILES[(self.name, "host-script")]

    def state(self, device: LinuxHost) -> str:
        from rocefab.lab.host.fakehost import snapshot

        return repr(sorted(snapshot(device.sandbox / "sys").items()))

    def smaller(self) -> tuple[str, str]:
        raise AssertionError("hosts have no replace")

    def refuse(self, device: LinuxHost) -> None:
        import shutil

        shutil.rmtree(device.sandbox / "sys" / "class" / "net" / "enp24s0f1np1")

    def slow(self, device: LinuxHost, seconds: float) -> None:
        device.delay_s = seconds

    def commit_command(self) -> str:
        return r"^bash \S+candidate'?$"


def test_adaptive_routing_with_parallel_sessions_takes_the_prefer_global_map(switch: tuple[LabSSHServer, Access],
                                                                              tmp_path: Path) -> None:
    """A Spectrum-4 spine running adaptive routing with two unnumbered sessions to each leaf: every one of them takes
    routes through the route map that prefers the global IPv6 next hop (Cumulus 5.14 ECMP guide); NVUE accepts the
    document, and a second look finds nothing to change."""
    from dataclasses import replace

    import yaml

    from rocefab.platforms.cumulus.config import PREFER_GLOBAL_MAP, parallel_peers

    intent = yaml.safe_load((ROOT / "intents" / "lab.yaml").read_text(encoding="utf-8"))
    intent["topology"]["spines"]["model"] = "SN5400"
    intent["topology"]["leaf_pairs"][0]["model"] = "SN5400"
    intent["hosts"]["nic_model"] = "ConnectX-8"
    intent["underlay"]["load_balancing"] = {"adaptive_routing": True}
    path = tmp_path / "ar.yaml"
    path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
    checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None
    spine = checked.plan.switch("spine1")
    assert parallel_peers(spine) == {n.interface for n in spine.bgp.neighbors}
    assert all(len(parallel_peers(sw)) == 2 for sw in checked.plan.switches if sw.role.value == "leaf")
    files = {(f.device, f.kind): f.content for f in render_fabric(checked.plan)}
    server, acc = switch
    acc = replace(acc, name="spine1")
    target = Target(acc, files[("spine1", "nvue-yaml")])
    (done,) = Fleet([target], CumulusSession).apply([[acc.name]], None)
    assert done.status is Status.COMMITTED, done
    applied = _applied(server)
    assert applied["router"]["policy"]["route-map"][PREFER_GLOBAL_MAP]["rule"]["10"] == {
        "action": {"permit": {}}, "set": {"ipv6-nexthop-prefer-global": "on"}}
    for n in spine.bgp.neighbors:
        neighbor = applied["vrf"]["default"]["router"]["bgp"]["neighbor"][n.interface]
        assert neighbor["address-family"]["ipv4-unicast"]["policy"]["inbound"]["route-map"] == PREFER_GLOBAL_MAP
    (again,) = Fleet([target], CumulusSession).dry_run()
    assert again.status is Status.UNCHANGED, again.diff
