"""rocefab's NX-OS session against the NX-API/SSH emulator: NAPALM `nxos` unpatched, replace over SCP."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from deploy_behaviour import PASSWORD as BEHAVIOUR_PASSWORD
from deploy_behaviour import DeployBehaviour

from rocefab.deploy.fleet import Fleet, Status, Target
from rocefab.deploy.inventory import Access, Secret, Transport
from rocefab.deploy.session import DeployError
from rocefab.lab.nxos.device import NxosDevice
from rocefab.lab.nxos.server import NxosServer, serve_nxos
from rocefab.platforms.nxos.session import NxosSession
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "lab-Secret-9"


def rendered_nxos(dynamic: bool) -> dict[str, str]:
    """pod32's NX-OS configs; without `dynamic`, with the NX-OS switches hashing only (no DLB profile, whose change
    needs a reload and has tests of its own below)."""
    intent = yaml.safe_load((ROOT / "intents" / "pod32.yaml").read_text(encoding="utf-8"))
    if not dynamic:
        del intent["underlay"]["load_balancing"]["by_platform"]["nxos"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pod32.yaml"
        path.write_text(yaml.safe_dump(intent, sort_keys=False), encoding="utf-8")
        checked = check_file(path, "0.0.0-test")
    assert checked.plan is not None
    return {f.device: f.content for f in render_fabric(checked.plan) if f.kind == "nxos-config"}


CONFIGS, WITH_DLB = rendered_nxos(False), rendered_nxos(True)


def access(server: NxosServer, name: str, transport: Transport = Transport.NXAPI, password: str = PASSWORD,
           known_hosts: Path | None = None) -> Access:
    port = server.http_port if transport is Transport.NXAPI else server.ssh_port
    return Access(
        name=name, kind="nxos", host=server.host, transport=transport, port=port, ssh_port=server.ssh_port,
        username="admin", password=Secret(password), scheme="http", verify_tls=True, ca_file=None,
        verify_host_key=known_hosts is not None, known_hosts=known_hosts or Path("/nonexistent"), timeout_s=10,
        sudo=False,
    )


def known_hosts(tmp_path: Path, server: NxosServer, key: str | None = None) -> Path:
    path = tmp_path / "known_hosts"
    path.write_text(f"[{server.host}]:{server.ssh_port} {key or server.host_key_public}\n")
    return path


def test_ssh_host_key_is_verified(switches: dict[str, NxosServer], tmp_path: Path) -> None:
    server = switches["rack4-a"]
    with NxosSession(access(server, "rack4-a", Transport.NXOS_SSH, known_hosts=known_hosts(tmp_path, server))) as s:
        assert "hostname rack4-a" in s.running_config()
    other = switches["spine1"].host_key_public  # a different, unknown key for this address
    with pytest.raises(DeployError):
        NxosSession(access(server, "rack4-a", Transport.NXOS_SSH, known_hosts=known_hosts(tmp_path, server, other))
                    ).open()


@pytest.fixture
def switches() -> Iterator[dict[str, NxosServer]]:
    servers = {name: serve_nxos(NxosDevice(name, password=PASSWORD)) for name in ("rack4-a", "spine1")}
    yield servers
    for server in servers.values():
        server.stop()


def _running(server: NxosServer) -> str:
    return server.device.running.render()


@pytest.mark.parametrize("transport", [Transport.NXAPI, Transport.NXOS_SSH])
def test_dry_run_apply_and_converge(switches: dict[str, NxosServer], transport: Transport) -> None:
    server = switches["rack4-a"]
    before = _running(server)
    with NxosSession(access(server, "rack4-a", transport)) as session:
        session.load(CONFIGS["rack4-a"])
        diff = session.diff()
        session.discard()
    assert "pause pfc-cos 3" in diff and "priority-flow-control mode on" in diff
    assert "\n-username" not in diff, "the device's own account must survive a replace"
    assert _running(server) == before, "a dry run changes nothing"
    with NxosSession(access(server, "rack4-a", transport)) as session:
        session.load(CONFIGS["rack4-a"])
        session.commit()
        assert session.verify(CONFIGS["rack4-a"]) == ""
    running = _running(server)
    assert "    pause pfc-cos 3" in running and "username admin" in running






def test_fleet_rolls_back_a_wave_when_one_switch_fails(switches: dict[str, NxosServer]) -> None:
    before = {name: _running(s) for name, s in switches.items()}
    switches["spine1"].device.faults.reject_line = r"^maximum-paths 64$"
    targets = [Target(access(s, name), CONFIGS[name]) for name, s in switches.items()]
    results = {r.name: r for r in Fleet(targets, NxosSession, concurrency=2).apply([list(switches)], None)}
    assert results["spine1"].status is Status.FAILED
    assert results["rack4-a"].status in (Status.ROLLED_BACK, Status.NOT_STARTED)
    assert {name: _running(s) for name, s in switches.items()} == before


def test_a_change_that_needs_a_reload_is_committed_only_where_accepted(switches: dict[str, NxosServer]) -> None:
    """NX-OS applies `hardware profile dlb` after a reload: a wave that would change it is stopped before any commit
    unless the run accepted the reload for that switch; accepted, it is committed, read back equal, and a second
    look finds nothing to change (the emulator keeps the profile as rendered). Taking it away again is a
    reload-class change too."""
    server = switches["spine1"]
    before = _running(server)
    target = Target(access(server, "spine1"), WITH_DLB["spine1"])
    (refused,) = Fleet([target], NxosSession).apply([["spine1"]], None)
    assert refused.status is Status.FAILED and refused.reload == ("hardware profile dlb",), refused
    assert "applies only after a reload" in (refused.error or "") and "--accept-reload" in (refused.error or "")
    assert refused.diff.startswith("# needs a reload: the switch applies hardware profile dlb only after a reload")
    assert "+  mode flowlet" in refused.diff and "+  mac-address 00:cc:cc:cc:cc:cc" in refused.diff
    assert _running(server) == before, "nothing was committed"
    (other,) = Fleet([target], NxosSession, accept_reload=frozenset({"rack4-a"})).apply([["spine1"]], None)
    assert other.status is Status.FAILED and _running(server) == before, "accepted for another switch only"
    (done,) = Fleet([target], NxosSession, accept_reload=frozenset({"spine1"})).apply([["spine1"]], None)
    assert done.status is Status.COMMITTED, done
    assert "hardware profile dlb\n  mode flowlet\n  dlb-interface Ethernet1/1 , Ethernet1/2" in _running(server)
    (again,) = Fleet([target], NxosSession).dry_run()
    assert again.status is Status.UNCHANGED and again.reload == (), again
    (back,) = Fleet([Target(access(server, "spine1"), CONFIGS["spine1"])], NxosSession).dry_run()
    assert back.status is Status.PENDING and back.reload == ("hardware profile dlb",)
    assert "-hardware profile dlb" in back.diff


def test_a_config_without_reload_class_changes_is_not_held_back(switches: dict[str, NxosServer]) -> None:
    server = switches["rack4-a"]
    (done,) = Fleet([Target(access(server, "rack4-a"), CONFIGS["rack4-a"])], NxosSession).apply([["rack4-a"]], None)
    assert done.status is Status.COMMITTED and done.reload == () and not done.diff.startswith("#")


def test_nxapi_tls_is_verified_against_the_pinned_certificate(tmp_path: Path) -> None:
    from dataclasses import replace

    from rocefab.lab.tls import self_signed

    certificate, stranger = self_signed(), self_signed()
    (tmp_path / "lab.pem").write_bytes(certificate.cert_pem)
    (tmp_path / "other.pem").write_bytes(stranger.cert_pem)
    with serve_nxos(NxosDevice("spine1", password=PASSWORD), tls=certificate) as server:
        trusted = replace(access(server, "spine1"), scheme="https", ca_file=tmp_path / "lab.pem")
        with NxosSession(trusted) as session:
            assert "hostname spine1" in session.running_config()
        with pytest.raises(DeployError):
            session = NxosSession(replace(trusted, ca_file=tmp_path / "other.pem"))
            session.open()
            session.running_config()


def test_fleet_rollback_is_read_back_before_it_is_reported(switches: dict[str, NxosServer]) -> None:
    before = {name: _running(s) for name, s in switches.items()}
    # spine1's commit is made but its answer is lost (once); rack4-a committed fine: both are rolled back
    # and each read back (the `!Time:` stamp aside) equal to what it ran before.
    spine = switches["spine1"].device
    spine.reach.down_on, spine.reach.down_after = r"^rollback running-config file \S*rocefab_\S+_candidate", True
    targets = [Target(access(s, name), CONFIGS[name]) for name, s in switches.items()]
    results = {r.name: r for r in Fleet(targets, NxosSession, concurrency=2).apply([list(switches)], None)}
    assert results["spine1"].status is Status.UNKNOWN, results["spine1"]
    assert "rollback did not complete" in (results["spine1"].error or "")
    assert results["rack4-a"].status is Status.ROLLED_BACK, results["rack4-a"]
    assert "read back equals the one before" in (results["rack4-a"].error or "")
    assert _running(switches["rack4-a"]) == before["rack4-a"]
    spine.reach.clear()
    assert _running(switches["spine1"]) != before["spine1"], "unknown was right: spine1 runs the candidate"


def test_bootflash_files_are_per_run_and_leftovers_are_cleaned(switches: dict[str, NxosServer]) -> None:
    server = switches["rack4-a"]
    leftover = "rocefab_19990101T000000-aaaaaa_rollback.txt"
    server.device.bootflash[leftover] = "hostname rack4-a\n"
    target = Target(access(server, "rack4-a"), CONFIGS["rack4-a"])
    results = Fleet([target], NxosSession, clean_leftovers=True, run_id="20261201T000000-bbbbbb").apply(
        [["rack4-a"]], None)
    assert results[0].status is Status.COMMITTED, results[0]
    assert results[0].cleaned == [f"removed bootflash:{leftover}, left by an earlier run"]
    assert not [name for name in server.device.bootflash if name.startswith("rocefab_")], server.device.bootflash


class TestNxosDeployBehaviour(DeployBehaviour):
    session = NxosSession
    name = "rack4-a"

    @contextmanager
    def serve(self, tmp_path: Path) -> Iterator[tuple[NxosDevice, Access]]:
        with serve_nxos(NxosDevice(self.name, password=BEHAVIOUR_PASSWORD)) as server:
            yield server.device, access(server, self.name, password=BEHAVIOUR_PASSWORD)

    def candidate(self) -> str:
        return CONFIGS[self.name]

    def state(self, device: NxosDevice) -> str:
        return device.running.render()

    def smaller(self) -> tuple[str, str]:
        return self.candidate().replace("  spanning-tree port type edge\n", ""), "\n-  spanning-tree port type edge\n"

    def refuse(self, device: NxosDevice) -> None:
        device.faults.reject_line = r"^pause pfc-cos 3$"

    def slow(self, device: NxosDevice, seconds: float) -> None:
        device.faults.delay_seconds = seconds

    def commit_command(self) -> str:
        return r"^rollback running-config file \S*rocefab_\S+_candidate"


class TestNxosOverSshDeployBehaviour(TestNxosDeployBehaviour):
    @contextmanager
    def serve(self, tmp_path: Path) -> Iterator[tuple[NxosDevice, Access]]:
        with serve_nxos(NxosDevice(self.name, password=BEHAVIOUR_PASSWORD)) as server:
            yield server.device, access(server, self.name, Transport.NXOS_SSH, password=BEHAVIOUR_PASSWORD)


def test_management_faults_from_the_fault_book_reach_the_nxos_emulator() -> None:
    from rocefab.lab.nxos.device import NxosDevice

    device = NxosDevice("rack9-a")
    device.KNOBS.make(device, "wrong-password", "")
    device.KNOBS.make(device, "delay", "1.5")
    device.KNOBS.make(device, "reject", "^priority-flow-control")
    assert not device.check_password("admin", "admin")
    assert (device.faults.delay_seconds, device.faults.reject_line) == (1.5, "^priority-flow-control")
    device.KNOBS.clear(device)
    assert device.check_password("admin", "admin") and device.faults.delay_seconds == 0.0
    assert device.faults.reject_line is None
