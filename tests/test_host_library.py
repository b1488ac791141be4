"""The host libraries written once per render (rocefab/platforms/host/library.py): what a host runs is byte for byte
the self-contained script, the library's text inline, for every host of every example; a script and a library of
different versions never run together, whether from the render folder or through apply. The same for the
preflight and its checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, example_plan
from hostlib import place_script

from rocefab.platforms.host import TARGET, config, library, preflight
from rocefab.platforms.host.library import PREFLIGHT, LibraryMismatch, embed
from rocefab.renderers.input_keys import DeviceViews
from rocefab.renderers.render import render_fabric


@pytest.mark.parametrize("name", ["lab", "pod32", "cluster1024-rail"])
def test_the_staged_script_is_the_script_with_its_library_inline(name: str) -> None:
    plan = example_plan(name)
    files = {f.path: f.content for f in render_fabric(plan)}
    assert sorted(p for p in files if p.startswith("hosts/lib/")) == sorted(lib.path() for lib in library.LIBRARIES), \
        "each library once per render"
    for host in plan.hosts[:3] + plan.hosts[-2:]:
        cfg = config.build(plan, host)
        unit = config._unit(cfg)
        inline = config._render("host/roce-setup.sh.j2", cfg, unit_text=unit.rstrip("\n"),
                                library=library.inline_text())
        rendered = files[f"hosts/{host.name}.roce.sh"]
        assert library.loader_block() in rendered and library.inline_text() not in rendered
        assert embed(rendered, files) == inline
        assert len(inline) - len(rendered) > 20_000, "the library is no longer in each script"


def test_a_library_of_another_version_is_refused() -> None:
    plan = example_plan("lab")
    files = {f.path: f.content for f in render_fabric(plan)}
    script = files["hosts/gpu001.roce.sh"]
    with pytest.raises(LibraryMismatch, match="SHA-256 differs"):
        embed(script, {**files, library.library_path(): files[library.library_path()] + "# edited\n"})
    with pytest.raises(LibraryMismatch, match="is not in the render"):
        embed(script, {p: t for p, t in files.items() if not p.startswith("hosts/lib/")})
    assert embed("#!/bin/bash\necho self-contained\n", {}) == "#!/bin/bash\necho self-contained\n"


def test_run_from_the_render_folder_the_script_refuses_another_library(tmp_path: Path) -> None:
    files = {f.path: f.content for f in render_fabric(example_plan("lab"))}
    script = place_script(tmp_path / "gpu001.roce.sh", files["hosts/gpu001.roce.sh"])
    lib = tmp_path / "lib" / library.library()[2]
    lib.write_text(lib.read_text() + "echo not the rendered library\n")
    done = subprocess.run(["bash", str(script), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 3 and f"was rendered for host library {library.library()[2]}" in done.stderr
    assert "not the rendered library" not in done.stdout
    lib.unlink()
    done = subprocess.run(["bash", str(script), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 3 and "is missing or another version" in done.stderr


def test_apply_from_a_render_refuses_an_edited_library(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = [sys.executable, "-m", "rocefab"]
    intent = ROOT / "intents" / "lab.yaml"
    assert subprocess.run([*run, "render", intent, "-o", out], capture_output=True, check=False).returncode == 0
    lib = out / library.library_path()
    lib.write_text(lib.read_text() + "# edited\n")
    env = {**os.environ, "ROCEFAB_PASSWORD": "unused"}
    diff = [*run, "diff", intent, "-i", out / "inventory.yaml", "--rendered", out]
    refused = subprocess.run(diff, capture_output=True, text=True, check=False, env=env)
    assert refused.returncode == 2 and f"edited since the render: {library.library_path()}" in refused.stderr
    forced = subprocess.run([*diff, "--allow-edited"], capture_output=True, text=True, check=False, env=env)
    assert forced.returncode == 2, forced.stderr
    assert "is not the host library the script was rendered for" in forced.stderr and "nothing was changed" in \
        forced.stderr


@pytest.mark.parametrize("name", ["lab", "cluster1024-rail"])
def test_the_preflight_with_its_checks_inline_is_the_former_script(name: str) -> None:
    """Each host's preflight holds its plan and a block that loads the checks; with the checks in the block's place
    it is byte for byte the self-contained script rendered before they were shared."""
    plan = example_plan(name)
    files = {f.path: f.content for f in render_fabric(plan)}
    for host in plan.hosts[:2] + plan.hosts[-1:]:
        checks = preflight.build(DeviceViews(plan).of(host), host, f"{host.name}.roce.sh", TARGET)
        rendered = files[f"hosts/{host.name}.preflight.sh"]
        assert rendered == preflight.render_preflight(checks)
        assert PREFLIGHT.embed(rendered, files) == preflight.render_preflight(checks, PREFLIGHT.inline_text())
        assert len(rendered) < 4_000, "the checks are no longer in each host's preflight"


def test_run_without_its_checks_the_preflight_refuses(tmp_path: Path) -> None:
    files = {f.path: f.content for f in render_fabric(example_plan("lab"))}
    script = place_script(tmp_path / "gpu001.preflight.sh", files["hosts/gpu001.preflight.sh"])
    lib = tmp_path / "lib" / PREFLIGHT.made()[2]
    lib.write_text(lib.read_text() + "echo not the rendered checks\n")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and f"was rendered for preflight library {PREFLIGHT.made()[2]}" in done.stderr
    lib.unlink()
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 3 and "is missing or another version" in done.stderr
    # its usage is its own: asked for help, or given a wrong argument, it answers before looking for its checks
    helped = subprocess.run(["bash", str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert helped.returncode == 0 and helped.stdout.startswith("usage:")
    wrong = subprocess.run(["bash", str(script), "--bogus"], capture_output=True, text=True, timeout=30)
    assert wrong.returncode == 2 and wrong.stderr.startswith("usage:")
