"""An inventory is input too: its strings reach an ssh_config file (NX-OS), URLs and SSH logins. Every string
field of the inventory schema, found by walking it, refuses shell and config metacharacters at its position."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from schema_walk import Leaf, concrete, leaves, set_value

from rocefab.deploy.inventory import InventoryFile, load_inventory
from rocefab.models.findings import dotted
from rocefab.models.loader import IntentLoadError

BASE = {"defaults": {"username": "admin", "password_env": "ROCEFAB_PASSWORD", "keyring_service": "rocefab"},
        "devices": {"leaf1-a": {"host": "10.0.0.11", "username": "ops", "password_env": "LEAF_PASSWORD"}}}
HOSTILE = ["10.0.0.1\n  ProxyCommand touch /tmp/pwned", "a b", "$(touch /tmp/pwned)", "-oProxyCommand=x", "x;y",
           "../x", "x\u2028y"]
FREE_TEXT = {("defaults", "keyring_service")}  # handed to the keyring library only, as one printable line
STRINGS = [leaf for leaf in leaves(InventoryFile) if leaf.kind == "str" and leaf.path not in FREE_TEXT]


def test_the_inventory_walk_finds_its_strings() -> None:
    found = {dotted(concrete(leaf.path, "leaf1-a")) for leaf in STRINGS}
    assert found == {"defaults.username", "defaults.password_env", "devices['<key>']", "devices.leaf1-a.host",
                     "devices.leaf1-a.username", "devices.leaf1-a.password_env"}, found


@pytest.mark.parametrize("leaf", STRINGS, ids=lambda leaf: dotted(leaf.path))
def test_hostile_inventory_strings_are_refused(leaf: Leaf, tmp_path: Path) -> None:
    for value in HOSTILE:
        doc = yaml.safe_load(yaml.safe_dump(BASE))
        if leaf.key_field:
            doc["devices"][value] = doc["devices"].pop("leaf1-a")
        else:
            set_value(doc, concrete(leaf.path, "leaf1-a"), value)
        file = tmp_path / "inventory.yaml"
        file.write_text(yaml.safe_dump(doc), encoding="utf-8")
        with pytest.raises(IntentLoadError) as info:
            load_inventory(file)
        assert all(str(error).startswith(f"{file}:") for error in info.value.errors)
        assert "\n" not in str(info.value.errors[0])
