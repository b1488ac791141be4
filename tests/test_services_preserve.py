"""What a replace keeps once the intent renders services: the device's secrets and accounts stay, its own lines of
a kind rocefab now renders give way, banners travel whole, and the previews say so before a replace."""

from __future__ import annotations

from typing import Any

from rocefab.deploy.preserve import (
    ReplacePreview,
    carry_preserved,
    nvue_replace_preview,
    replace_preview,
    top_level_blocks,
)
from rocefab.lab.configtree import ConfigTree
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.nxos.config import NxosConfig
from rocefab.platforms.cumulus.session import carry_device_local
from rocefab.platforms.eos import PRESERVED as EOS_PRESERVED
from rocefab.platforms.nxos import PRESERVED as NXOS_PRESERVED

EOS_RUNNING = """\
username admin privilege 15 role network-admin secret sha512 $6$abc
ntp server vrf MGMT 192.0.2.99 iburst
logging vrf MGMT host 192.0.2.98
snmp-server community s3cret ro
snmp-server location old-row
tacacs-server key 7 070C285F4D06
tacacs-server host 192.0.2.97 vrf MGMT
banner motd
Old banner
EOF
!
vlan 999
   name stale
!
end
"""

CANDIDATE_WITHOUT = "hostname leaf1-a\n!\nvlan 101\n   name train\n!\nend\n"
CANDIDATE_WITH = """\
hostname leaf1-a
!
ntp server vrf MGMT 192.0.2.123 prefer iburst
logging vrf MGMT host 192.0.2.14
snmp-server location DC1 row 3
tacacs-server host 192.0.2.49 vrf MGMT
!
banner motd
Authorised use only.
EOF
!
end
"""


def test_without_services_the_device_keeps_its_services() -> None:
    merged = carry_preserved(EOS_PRESERVED, EOS_RUNNING, CANDIDATE_WITHOUT)
    for line in ("ntp server vrf MGMT 192.0.2.99 iburst", "snmp-server community s3cret ro",
                 "tacacs-server host 192.0.2.97 vrf MGMT", "banner motd\nOld banner\nEOF"):
        assert line in merged, line
    assert "vlan 999" not in merged
    ConfigTree.parse(EOS_GRAMMAR, merged)  # the merged candidate is still a config EOS takes


def test_rendered_services_replace_the_devices_own_but_keep_its_secrets() -> None:
    merged = carry_preserved(EOS_PRESERVED, EOS_RUNNING, CANDIDATE_WITH)
    for gone in ("192.0.2.99", "192.0.2.98", "old-row", "192.0.2.97", "Old banner"):
        assert gone not in merged, gone
    for kept in ("username admin", "snmp-server community s3cret ro", "tacacs-server key 7 070C285F4D06"):
        assert kept in merged, kept
    tree = ConfigTree.parse(EOS_GRAMMAR, merged)
    assert merged.endswith("\nend\n") and "banner motd\nAuthorised use only.\nEOF" in tree.text()


def test_the_preview_names_what_is_kept_and_what_goes() -> None:
    assert replace_preview(EOS_PRESERVED, EOS_RUNNING, CANDIDATE_WITH) == ReplacePreview(
        # the headers are shown without their credentials: a dry run prints them
        carried=("username admin privilege 15 role network-admin secret ***", "snmp-server community ***",
                 "tacacs-server key ***"),
        removed=("ntp server vrf MGMT 192.0.2.99 iburst", "logging vrf MGMT host 192.0.2.98",
                 "snmp-server location old-row", "tacacs-server host 192.0.2.97 vrf MGMT", "vlan 999"))
    # the candidate's own `banner motd` replaces the device's: a block both have is in neither list
    kept = replace_preview(EOS_PRESERVED, EOS_RUNNING, CANDIDATE_WITHOUT)
    assert "banner motd" in kept.carried and kept.removed == ("vlan 999",)
    assert replace_preview(EOS_PRESERVED, CANDIDATE_WITH, CANDIDATE_WITH) == ReplacePreview((), ())


NXOS_RUNNING = """\
version 10.5(1) Bios:version
feature tacacs+
username admin password 5 $5$abc role network-admin
tacacs-server key 7 "fewhg"
tacacs-server host 192.0.2.97
banner motd #Old banner
second line#
ntp server 192.0.2.99 use-vrf management
"""


def test_nxos_banner_travels_whole_and_keys_stay() -> None:
    blocks = dict(top_level_blocks(NXOS_RUNNING))
    assert blocks["banner motd #Old banner"] == ["banner motd #Old banner", "second line#"]
    candidate = "hostname nx-a\nntp server 192.0.2.123 prefer use-vrf management\n"
    merged = carry_preserved(NXOS_PRESERVED, NXOS_RUNNING, candidate)
    assert "banner motd #Old banner\nsecond line#" in merged and "192.0.2.99" not in merged
    assert 'tacacs-server key 7 "fewhg"' in merged and "feature tacacs+" in merged
    config = NxosConfig.parse(merged)
    assert config.root.find("banner motd") is not None
    preview = replace_preview(NXOS_PRESERVED, NXOS_RUNNING, candidate)
    assert preview.removed == ("ntp server 192.0.2.99 use-vrf management",)
    assert "banner motd #Old banner" in preview.carried


def test_cumulus_preview_follows_the_sessions_own_merge() -> None:
    applied: dict[str, Any] = {
        "system": {"hostname": "cl-a", "aaa": {"user": {"cumulus": {}}}, "message": {"pre-login": "old"}},
        "service": {"snmp-server": {"readonly-community": {"s3cret": {}}}},
        "interface": {"eth0": {"ip": {}}, "swp1": {}, "swp9": {}},
    }
    without = {"system": {"hostname": "cl-a"}, "interface": {"swp1": {}}}
    assert nvue_replace_preview(applied, without, carry_device_local) == ReplacePreview(
        carried=("system aaa", "service", "interface eth0"), removed=("system message", "interface swp9"))
    # With NTP rendered the candidate has a `service` tree of its own: the device's NTP gives way to it, while
    # its SNMP server (communities and all), which the intent does not render, is carried.
    with_services = {**without, "service": {"ntp": {"mgmt": {"server": {"192.0.2.123": {"iburst": "on"}}}}}}
    merged = carry_device_local(applied, with_services)
    assert merged["service"] == {"ntp": with_services["service"]["ntp"],
                                 "snmp-server": applied["service"]["snmp-server"]}
    preview = nvue_replace_preview(applied, with_services, carry_device_local)
    assert "service snmp-server" in preview.carried and "service snmp-server" not in preview.removed
