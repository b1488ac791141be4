"""Every string field of the intent, given shell, YAML, config and path metacharacters: refused with its
position and field, or rendered with the value intact and inert.

The fields come from walking the schema (tests/schema_walk.py), so a new string field is covered the day it
is added. For a value rocefab accepts, every host script must pass `bash -n` and then run (`--check`, then
for real) against a fake host built from the plan, every NCCL env file is sourced, and the marker file the
payloads try to create must still not exist; the value must come back exactly from the env file, the
nccl.conf the script writes and the JSON/YAML/SVG documents that carry it.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tempfile
import xml.dom.minidom
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakehost import make_host, run_script
from intent_bases import BASES, shape_for
from schema_walk import Leaf, concrete, get_value, leaves, set_value
from typer.testing import CliRunner

from rocefab.cli import app
from rocefab.models.findings import dotted
from rocefab.models.intent import Intent

HOSTILE = [
    "x\ntouch {marker}",
    "x\r\ntouch {marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "x; touch {marker}",
    "x' ; touch {marker} ; '",
    'x" ; touch {marker} ; "',
    "x\nROCEFAB_NCCL\ntouch {marker}",
    "x\u2028touch {marker}",
    "x\x85touch {marker}",
    "../../../tmp/x",
    "a/b",
    "a b",
    "x: y",
    "- x",
    "#x",
    "!x",
    "{{{{n}}}}",
    "%s%n",
    "\\",
    "x" * 2000,
]


STRING_LEAVES = [leaf for leaf in leaves(Intent) if leaf.kind == "str"]


def test_every_string_field_is_walked() -> None:
    assert len(STRING_LEAVES) >= 29
    for leaf in STRING_LEAVES:
        shape_for(leaf)


def _render(tmp_path: Path, doc: dict[str, Any]) -> tuple[int, str, Path]:
    intent = tmp_path / "intent.yaml"
    intent.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    doc.clear()
    doc.update(yaml.safe_load(intent.read_text(encoding="utf-8")))  # what the file holds (YAML folds some breaks)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(intent), "-o", str(out)])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.stderr + result.stdout
    return result.exit_code, result.stderr, out


_INJECTED_LINE = re.compile(r"(?m)^[\s#!;/*-]*touch ")


@cache
def _base_scripts(shape: str) -> dict[str, str]:
    """The host scripts of a base intent as rendered unchanged (they are run against the fake host elsewhere)."""
    folder = Path(tempfile.mkdtemp(prefix="rocefab-base-"))
    code, stderr, out = _render(folder, copy.deepcopy(BASES[shape]))
    assert code == 0, stderr
    return {p.name: p.read_text(encoding="utf-8") for p in out.glob("hosts/*.roce.sh")}


def _assert_inert(out: Path, value: str, marker: Path, tmp_path: Path, shape: str) -> None:
    plan_lines = [json.loads(line) for part in sorted(out.glob("plan/*.jsonl"))
                  for line in part.read_text(encoding="utf-8").splitlines()]
    for file in sorted(out.rglob("*")):
        if file.is_file():
            text = file.read_text(encoding="utf-8")
            assert not _INJECTED_LINE.search(text), f"{file.name}: the value made a line of its own"
    xml.dom.minidom.parse(str(out / "topology.svg"))
    for nvue in out.glob("switches/*.nvue.yaml"):
        assert isinstance(yaml.safe_load(nvue.read_text(encoding="utf-8")), list)
    for env in out.glob("hosts/*.nccl.env"):
        sourced = subprocess.run(["/bin/bash", "-c", 'set -eu; . "$1"; env -0', "_", str(env)], cwd=tmp_path,
                                 capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=30)
        assert sourced.returncode == 0, sourced.stderr
        exported = dict(item.split("=", 1) for item in sourced.stdout.split("\0") if "=" in item)
        if value in exported.values() or "NCCL_ROCEFAB_TEST" in exported:
            assert exported.get("NCCL_ROCEFAB_TEST", value) == value
    hosts = {line["host"]["name"]: line["host"] for line in plan_lines if "host" in line}
    ran = False
    for script in sorted(out.glob("hosts/*.roce.sh")):
        assert subprocess.run(["/bin/bash", "-n", str(script)], capture_output=True, timeout=30).returncode == 0
        if script.read_text(encoding="utf-8") == _base_scripts(shape).get(script.name):
            continue  # the value did not reach this script: running the base's script again proves nothing
        if ran:
            # Every host's script prints the value through the same template lines; the one that ran shows
            # they hold it inert, and the others passed `bash -n` and the line scan above.
            continue
        ran = True
        host = hosts[script.name.removesuffix(".roce.sh")]
        netdevs = [m["netdev"] for b in host["bonds"] for m in b["members"]] + [n["netdev"] for n in host["nics"]]
        lag = {b["rdma_device"]: tuple(m["netdev"] for m in b["members"]) for b in host["bonds"]}
        root = make_host(tmp_path / f"host-{host['name']}", netdevs, lag,
                         rdma={n["netdev"]: n["rdma_device"] for n in host["nics"]})
        checked = run_script(script, root, "--check")
        assert checked.returncode in (0, 1), checked.stdout + checked.stderr
        applied = run_script(script, root)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        conf = (root / "etc" / "nccl.conf").read_text(encoding="utf-8")
        if "NCCL_ROCEFAB_TEST=" in conf:
            assert f"NCCL_ROCEFAB_TEST={value}\n" in conf
    assert not marker.exists(), "a payload ran"


@pytest.mark.parametrize("leaf", STRING_LEAVES, ids=lambda leaf: f"{leaf.shape or 'any'}:{dotted(leaf.path)}")
def test_hostile_values_are_refused_or_inert(leaf: Leaf, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    accepted = 0
    for n, template in enumerate(HOSTILE):
        value = template.format(marker=marker)
        shape = shape_for(leaf)
        doc = copy.deepcopy(BASES[shape])
        path = concrete(leaf.path, "NCCL_ROCEFAB_TEST")
        set_value(doc, path, value, key="1")
        case = tmp_path / f"case{n}"
        case.mkdir()
        code, stderr, out = _render(case, doc)
        if code == 0:
            accepted += 1
            held = get_value(doc, path) if not leaf.key_field else value
            _assert_inert(out, held.strip(), marker, case, shape)
            continue
        assert code in (1, 2), stderr
        assert "nothing was written" in stderr and not out.exists()
        # A key is shown quoted after its mapping (YAML may have folded a line break of it into a space).
        shown = dotted(path[:-1]) if leaf.key_field else dotted(path)
        assert re.search(rf"intent\.yaml:\d+:\d+:? .*{re.escape(shown)}", stderr), (value, stderr)
        # Each message stays on its line: a value's newline is shown escaped, never printed.
        for line in stderr.splitlines():
            assert line.startswith((str(case / "intent.yaml"), "    hint:", "... and ")) or line.endswith(
                "nothing was written"), line
    assert not marker.exists()
    # Only free text takes these values; a name, interface or format must refuse every one of them. The services
    # section's free text (banner, SNMP identity) and its EOS/NX-OS raw lines are such text.
    free_text = {("fabric", "description"), ("hosts", "nccl", "extra_env", "NCCL_ROCEFAB_TEST")}
    if path not in free_text and path[:2] not in {("services", "banner"), ("services", "snmp")} \
            and path[:3] not in {("services", "raw", "eos"), ("services", "raw", "nxos")}:
        assert accepted == 0, f"{dotted(leaf.path)} accepted a hostile value"
