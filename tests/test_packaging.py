"""The installed shape: one `rocefab` namespace, nothing else at the top of site-packages.

The wheel is built from this checkout (hatchling follows the symlinks in rocefab/ and stores real files),
unpacked into a folder, and imported from there by an interpreter that skips `site`, so the editable
install's import hook cannot stand in for it.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(ROOT),
                    "-w", str(folder)], check=True, capture_output=True)
    (built,) = folder.glob("rocefab-*.whl")
    return built


def test_the_wheel_holds_only_the_rocefab_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/", 1)[0] for name in names}
    assert top == {"rocefab", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}
    for part in ("models/intent.py", "renderers/planner.py", "deploy/fleet.py", "lab/serve.py",
                 "templates/eos/eos.j2", "intents/lab.yaml", "schema/intent.schema.json"):
        assert f"rocefab/{part}" in names, part
    assert not [n for n in names if "__pycache__" in n]


def test_the_installed_wheel_imports_as_rocefab_only_and_renders(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    dependencies = sysconfig.get_paths()["purelib"]
    probe = (
        "import importlib.util, sys\n"
        "import rocefab.models.intent, rocefab.renderers.render, rocefab.deploy.fleet\n"
        f"assert rocefab.models.intent.__file__.startswith({str(site)!r}), rocefab.models.intent.__file__\n"
        "for name in ('models', 'renderers', 'deploy', 'lab', 'templates'):\n"
        "    assert importlib.util.find_spec(name) is None, name\n"
        "from rocefab.cli import main\n"
        "sys.argv = ['rocefab', 'render', sys.argv[1], '-o', sys.argv[2]]\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-S", "-c", probe, str(site / "rocefab" / "intents" / "lab.yaml"), str(tmp_path / "out")],
        cwd=tmp_path, env={"PYTHONPATH": f"{site}:{dependencies}", "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "wrote " in result.stdout
    assert (tmp_path / "out" / "switches" / "leaf1-a.cfg").is_file()
