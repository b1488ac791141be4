"""NX-OS graceful insertion and removal against the lab's emulator, through the real NAPALM drivers and netmiko:
rocefab drains and undrains over NX-API and reads the mode back with `show system mode`; over SSH the
`(maint-mode)` prompt defeats netmiko's configuration-mode detection, which is why rocefab refuses that transport;
without `terminal dont-ask` the switch asks first, and only a yes changes the mode."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from netmiko import ConnectHandler
from test_deploy_nxos import CONFIGS, PASSWORD, access

from rocefab.deploy.drain import drained_now, set_maintenance, unable
from rocefab.deploy.inventory import Access, Transport
from rocefab.lab.nxos.device import NxosDevice
from rocefab.lab.nxos.server import NxosServer, serve_nxos
from rocefab.lab.wiring import ISOLATE
from rocefab.platforms.nxos.session import NxosSession


def sessions(a: Access, run_id: str) -> NxosSession:
    return NxosSession(a, run_id)


@pytest.fixture
def spine() -> Iterator[NxosServer]:
    server = serve_nxos(NxosDevice("spine1", password=PASSWORD))
    with NxosSession(access(server, "spine1")) as session:
        session.load(CONFIGS["spine1"])
        session.commit()
        session.confirm()
    yield server
    server.stop()


def test_drain_and_undrain_over_nxapi(spine: NxosServer) -> None:
    a = access(spine, "spine1")
    assert drained_now([a], sessions, "r1") == (set(), {})
    assert set_maintenance([a], sessions, "r1", drain=True)[0].error is None
    assert spine.device.system_mode == "Maintenance"
    speaker = spine.device.bgp_speaker()
    assert speaker is not None and speaker.maintenance == ISOLATE
    assert drained_now([a], sessions, "r1") == ({"spine1"}, {})
    with NxosSession(a) as session:  # the mode is no configuration: a push of the same config changes nothing
        session.load(CONFIGS["spine1"])
        assert session.diff() == ""
        session.discard()
    assert set_maintenance([a], sessions, "r1", drain=False)[0].error is None
    assert spine.device.system_mode == "Normal" and drained_now([a], sessions, "r1") == (set(), {})
    sent = [c for c in spine.device.commands if "system mode" in c]
    assert sent == ["show system mode", "system mode maintenance", "show system mode", "no system mode maintenance",
                    "show system mode"], sent


def test_over_ssh_the_maint_mode_prompt_defeats_netmiko_so_rocefab_refuses_it(spine: NxosServer) -> None:
    a = access(spine, "spine1", Transport.NXOS_SSH)
    why = unable(a)
    assert why is not None and "netmiko reads GIR's `(maint-mode)#` prompt as configuration mode" in why
    assert set_maintenance([a], sessions, "r1", drain=True)[0].error == why
    assert spine.device.system_mode == "Normal", "refused before anything was sent"
    # what would happen: the drain itself lands, but netmiko cannot leave configuration mode behind it, and the
    # next session (at `spine1(maint-mode)#`) never enters configuration mode to undo it
    spine.device.system_mode = "Maintenance"
    with ConnectHandler(device_type="cisco_nxos", host=spine.host, port=spine.ssh_port, username="admin",
                        password=PASSWORD) as conn:
        assert conn.find_prompt() == "spine1(maint-mode)#"
        assert conn.check_config_mode(), "netmiko takes the exec prompt for configuration mode"
        output = conn.send_config_set(["terminal dont-ask", "no system mode maintenance"], exit_config_mode=False)
    assert "% Invalid command" in output and spine.device.system_mode == "Maintenance"


def test_without_dont_ask_the_switch_asks_and_only_yes_changes_the_mode(spine: NxosServer) -> None:
    with ConnectHandler(device_type="cisco_nxos", host=spine.host, port=spine.ssh_port, username="admin",
                        password=PASSWORD) as conn:
        conn.config_mode()
        asked = conn.send_command_timing("system mode maintenance", strip_prompt=False)
        assert "router bgp 65000" in asked and asked.rstrip().endswith("Do you want to continue (yes/no)? [no]")
        conn.send_command_timing("no", strip_prompt=False)
        assert spine.device.system_mode == "Normal"
        conn.send_command_timing("system mode maintenance")
        done = conn.send_command_timing("yes", strip_prompt=False)
        assert "spine1(maint-mode)(config)#" in done and spine.device.system_mode == "Maintenance"
