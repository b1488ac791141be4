"""renderers/templating.py template_cache: compiled templates kept per user between runs, only in a folder that
user alone can write, and never a reason for a render to fail."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from rocefab.renderers import templating


def _environment(cache: jinja2.BytecodeCache | None) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templating.template_root()), bytecode_cache=cache,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              keep_trailing_newline=True)


TEMPLATE = "host/roce.service.j2"
CONTEXT = {"header": ["h"], "unit_name": "u.service", "installed_path": "/usr/local/sbin/x.sh", "host": "gpu001",
           "script_name": "gpu001.roce.sh"}


def test_a_second_run_renders_from_the_cache_what_the_first_compiled(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = templating.template_cache()
    assert cache is not None
    folder = tmp_path / "rocefab" / "templates"
    assert folder.stat().st_mode & 0o777 == 0o700
    first = _environment(cache).get_template(TEMPLATE).render(**CONTEXT)
    entries = list(folder.iterdir())
    assert len(entries) == 1 and entries[0].stat().st_mode & 0o077 == 0
    stamp = entries[0].stat().st_mtime_ns
    again = _environment(templating.template_cache()).get_template(TEMPLATE).render(**CONTEXT)
    assert again == first == _environment(None).get_template(TEMPLATE).render(**CONTEXT)
    assert entries[0].stat().st_mtime_ns == stamp  # loaded, not compiled and written again


def test_a_folder_others_can_write_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = tmp_path / "rocefab" / "templates"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    assert templating.template_cache() is None
    folder.chmod(0o750)
    assert templating.template_cache() is None
    folder.chmod(0o700)
    assert templating.template_cache() is not None
    folder.parent.chmod(0o777)  # the folder holding it: whoever writes there could swap the cache folder
    assert templating.template_cache() is None
    folder.parent.chmod(0o755)
    assert templating.template_cache() is not None


def test_the_switch_and_an_unusable_folder_turn_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(templating.CACHE_SWITCH, "0")
    assert templating.template_cache() is None
    monkeypatch.delenv(templating.CACHE_SWITCH)
    (tmp_path / "rocefab").write_text("a file where the folder would be")
    assert templating.template_cache() is None


def test_a_failed_write_costs_only_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = templating.template_cache()
    assert cache is not None
    folder = tmp_path / "rocefab" / "templates"
    folder.rmdir()  # gone before the first write: every dump fails
    text = _environment(cache).get_template(TEMPLATE).render(**CONTEXT)
    assert text == _environment(None).get_template(TEMPLATE).render(**CONTEXT)
    assert not folder.exists()
