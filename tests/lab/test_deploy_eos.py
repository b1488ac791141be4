"""rocefab's EOS session and fleet runner against the eAPI emulator, over real HTTP with NAPALM unpatched."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from deploy_behaviour import PASSWORD as BEHAVIOUR_PASSWORD
from deploy_behaviour import DeployBehaviour

from rocefab.deploy.fleet import Fleet, Status, Target
from rocefab.deploy.inventory import Access, Secret, Transport
from rocefab.deploy.session import DeployError
from rocefab.lab.eos.device import EosDevice
from rocefab.lab.eos.eapi import EosServer, serve_eos
from rocefab.platforms.eos.session import EosSession
from rocefab.renderers.pipeline import check_file
from rocefab.renderers.render import render_fabric

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "lab-Secret-7"


def rendered_eos() -> dict[str, str]:
    checked = check_file(ROOT / "intents" / "lab.yaml", "0.0.0-test")
    assert checked.plan is not None
    return {f.device: f.content for f in render_fabric(checked.plan) if f.kind == "eos-config"}


CONFIGS = rendered_eos()


def access(server: EosServer, name: str, password: str = PASSWORD) -> Access:
    return Access(
        name=name, kind="eos", host=server.host, transport=Transport.EAPI, port=server.port, ssh_port=22,
        username="admin", password=Secret(password), scheme="http", verify_tls=True, ca_file=None,
        verify_host_key=True, known_hosts=Path("/nonexistent"), timeout_s=10, sudo=False,
    )


@pytest.fixture
def leaves() -> Iterator[dict[str, EosServer]]:
    servers = {name: serve_eos(EosDevice(name, password=PASSWORD)) for name in sorted(CONFIGS)}
    yield servers
    for server in servers.values():
        server.stop()


def test_dry_run_changes_nothing_and_shows_the_change(leaves: dict[str, EosServer]) -> None:
    server = leaves["leaf1-a"]
    before = server.device.running_text()
    with EosSession(access(server, "leaf1-a")) as session:
        session.load(CONFIGS["leaf1-a"])
        diff = session.diff()
        session.discard()
    assert "+qos profile ROCE-LOSSLESS" in diff
    assert "+   priority-flow-control priority 3 no-drop" in diff
    assert server.device.running_text() == before


def test_apply_converges_and_keeps_the_device_accounts(leaves: dict[str, EosServer]) -> None:
    server = leaves["leaf1-a"]
    users = [line for line in server.device.running_text().splitlines() if line.startswith("username ")]
    assert users, "the factory config has an account"
    with EosSession(access(server, "leaf1-a")) as session:
        session.load(CONFIGS["leaf1-a"])
        session.commit()
    running = server.device.running_text()
    assert "   priority-flow-control priority 3 no-drop" in running
    assert [line for line in running.splitlines() if line.startswith("username ")] == users
    with EosSession(access(server, "leaf1-a")) as session:
        session.load(CONFIGS["leaf1-a"])
        assert session.diff() == ""
        session.discard()





def test_commit_timer_confirmed_stays(leaves: dict[str, EosServer]) -> None:
    server = leaves["leaf1-a"]
    with EosSession(access(server, "leaf1-a")) as session:
        session.load(CONFIGS["leaf1-a"])
        session.commit(confirm_seconds=30)
        session.confirm()
    server.device.expire_commit_timer_now()
    assert "qos profile ROCE-LOSSLESS" in server.device.running_text()



def _fleet(servers: dict[str, EosServer]) -> Fleet:
    targets = [Target(access(server, name), CONFIGS[name]) for name, server in servers.items()]
    return Fleet(targets, EosSession, concurrency=4)


def test_fleet_dry_run_touches_nothing(leaves: dict[str, EosServer]) -> None:
    before = {name: s.device.running_text() for name, s in leaves.items()}
    results = _fleet(leaves).dry_run()
    assert {r.status for r in results} == {Status.PENDING}
    assert {name: s.device.running_text() for name, s in leaves.items()} == before


def test_fleet_canary_failure_stops_before_others_are_touched(leaves: dict[str, EosServer]) -> None:
    leaves["leaf1-a"].device.faults.reject_line = r"^priority-flow-control priority 3 no-drop$"
    before = {name: s.device.running_text() for name, s in leaves.items()}
    results = {r.name: r for r in _fleet(leaves).apply([["leaf1-a"], ["leaf1-b"]], confirm_seconds=60)}
    assert results["leaf1-a"].status is Status.FAILED and "candidate refused" in (results["leaf1-a"].error or "")
    assert results["leaf1-b"].status is Status.NOT_STARTED
    assert {name: s.device.running_text() for name, s in leaves.items()} == before
    assert not [cmds for _, cmds in leaves["leaf1-b"].device.log if any("configure session" in str(c) for c in cmds)]


def test_fleet_failure_mid_wave_rolls_the_wave_back(leaves: dict[str, EosServer]) -> None:
    before = {name: s.device.running_text() for name, s in leaves.items()}
    # leaf1-b loses its answer at confirm time: the commit timer would revert it, and the runner rolls
    # back leaf1-a, which had committed fine.
    leaves["leaf1-b"].device.faults.drop_on = r"^configure session \S+ commit$"
    results = {r.name: r for r in _fleet(leaves).apply([["leaf1-a", "leaf1-b"]], confirm_seconds=60)}
    assert results["leaf1-b"].status is Status.FAILED
    assert results["leaf1-a"].status is Status.ROLLED_BACK
    leaves["leaf1-b"].device.expire_commit_timer_now()
    assert {name: s.device.running_text() for name, s in leaves.items()} == before


def test_fleet_apply_then_nothing_left_to_do(leaves: dict[str, EosServer]) -> None:
    results = _fleet(leaves).apply([["leaf1-a"], ["leaf1-b"]], confirm_seconds=60)
    assert {r.status for r in results} == {Status.COMMITTED}
    again = _fleet(leaves).dry_run()
    assert {r.status for r in again} == {Status.UNCHANGED}


def test_tls_is_verified_against_the_pinned_certificate(tmp_path: Path) -> None:
    from dataclasses import replace

    from rocefab.lab.tls import self_signed

    certificate, stranger = self_signed(), self_signed()
    (tmp_path / "lab.pem").write_bytes(certificate.cert_pem)
    (tmp_path / "other.pem").write_bytes(stranger.cert_pem)
    with serve_eos(EosDevice("leaf1-a", password=PASSWORD), tls=certificate) as server:
        trusted = replace(access(server, "leaf1-a"), scheme="https", ca_file=tmp_path / "lab.pem")
        with EosSession(trusted) as session:
            assert "hostname leaf1-a" in session.running_config()
        with pytest.raises(DeployError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
            EosSession(replace(trusted, ca_file=tmp_path / "other.pem")).open()




def test_stale_session_lock_refused_then_cleared_on_request(leaves: dict[str, EosServer]) -> None:
    from rocefab.deploy.targets import session_factory

    server = leaves["leaf1-a"]
    server.device.faults.stale_session = True  # a pending napalm_stale session, as a crashed run leaves
    target = Target(access(server, "leaf1-a"), CONFIGS["leaf1-a"])
    # NAPALM waits ~10 s for the lock before giving up: the one slow test here.
    locked = Fleet([target], session_factory()).dry_run()[0]
    assert locked.status is Status.FAILED and "lock" in (locked.error or "").lower()
    cleared = Fleet([target], session_factory(clear_stale_sessions=True)).dry_run()[0]
    assert cleared.status is Status.PENDING, cleared.error


class TestEosDeployBehaviour(DeployBehaviour):
    session = EosSession
    name = "leaf1-a"

    @contextmanager
    def serve(self, tmp_path: Path) -> Iterator[tuple[EosDevice, Access]]:
        with serve_eos(EosDevice(self.name, password=BEHAVIOUR_PASSWORD)) as server:
            yield server.device, access(server, self.name, password=BEHAVIOUR_PASSWORD)

    def candidate(self) -> str:
        return CONFIGS[self.name]

    def state(self, device: EosDevice) -> str:
        return device.running_text()

    def smaller(self) -> tuple[str, str]:
        return self.candidate().replace("   spanning-tree portfast\n", ""), "-   spanning-tree portfast"

    def refuse(self, device: EosDevice) -> None:
        device.faults.reject_line = r"^priority-flow-control priority 3 no-drop$"

    def slow(self, device: EosDevice, seconds: float) -> None:
        device.faults.delay_seconds = seconds

    def commit_command(self) -> str:
        return r"^configure session \S+ commit$"
