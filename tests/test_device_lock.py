"""The device-side lock (deploy/device_lock.py): a mark's name, and the claim on one device's folder of marks,
including two runs claiming the same device at the same moment."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from rocefab.deploy import device_lock
from rocefab.deploy.device_lock import PREFIX, Mark, claim, found, own_mark, release, still_held
from rocefab.deploy.session import DeployError, new_run_id


class Folder:
    """A device's folder of marks as a set of names; `meanwhile` runs once, between our mkdir and our listing
    (another run placing its mark at the same moment)."""

    def __init__(self, *names: str) -> None:
        self.names = set(names)
        self.meanwhile: list[str] = []

    def lock_marks(self) -> list[str]:
        return sorted(n for n in self.names if n.startswith(PREFIX))

    def place_mark(self, name: str) -> None:
        self.names.add(name)
        self.names.update(self.meanwhile)
        self.meanwhile = []

    def remove_mark(self, name: str) -> None:
        self.names.discard(name)


def dead_pid() -> int:
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout)


def other_host(run: str = "20261204T010203-abcdef") -> Mark:
    return Mark(run, "bob", "ops-jumphost-2", 777)


@given(st.text(max_size=60), st.text(max_size=200), st.integers(0, 2**31))
@example("0" * 16, "0" * 24, 2**31)  # the longest fields and pid: 88 characters before the cuts were shortened
def test_any_user_and_host_give_a_name_that_reads_back_and_carries_nothing_else(user: str, host: str,
                                                                               pid: int) -> None:
    mark = Mark(new_run_id(), device_lock._field(user, device_lock.USER_CHARS),
                device_lock._field(host, device_lock.HOST_CHARS), pid)
    assert Mark.parse(mark.name) == mark
    assert len(mark.name) < 80
    assert all(c.isascii() and (c.isalnum() or c in "._-") for c in mark.name)


def test_own_mark_names_this_process() -> None:
    mark = own_mark("20261204T010203-abcdef")
    assert mark.pid == os.getpid() and Mark.parse(mark.name) == mark


def test_a_free_device_is_claimed_and_released() -> None:
    folder, mine = Folder("rocefab_x_candidate.txt"), own_mark(new_run_id())
    assert claim("leaf1", folder, mine) == []
    assert folder.lock_marks() == [mine.name]
    still_held("leaf1", folder, mine)
    release(folder, mine)
    assert folder.lock_marks() == []


def test_another_run_holds_the_device_and_is_named() -> None:
    theirs = other_host()
    folder, mine = Folder(theirs.name), own_mark(new_run_id())
    with pytest.raises(DeployError) as refused:
        claim("leaf1", folder, mine)
    assert "rocefab run 20261204T010203-abcdef of bob on ops-jumphost-2 (pid 777)" in refused.value.message
    assert "--force-unlock" in refused.value.message and folder.lock_marks() == [theirs.name]


def test_force_removes_the_other_runs_mark_and_says_so() -> None:
    theirs = other_host()
    folder, mine = Folder(theirs.name), own_mark(new_run_id())
    notes = claim("leaf1", folder, mine, force=True)
    assert notes == [f"--force-unlock: removed the lock mark {theirs.name}"]
    assert folder.lock_marks() == [mine.name]


def test_a_mark_of_a_finished_process_of_this_host_is_stale_and_removed() -> None:
    mine = own_mark(new_run_id())
    stale = Mark("20261201T000000-000000", mine.user, mine.host, dead_pid())
    folder = Folder(stale.name)
    notes = claim("leaf1", folder, mine)
    assert notes == [f"removed the lock mark of {stale}: that process is no longer running"]
    assert folder.lock_marks() == [mine.name]


def test_this_hosts_mark_from_before_the_shorter_cut_is_still_this_hosts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Marks name the host cut to 19 characters now, to 24 before: a long host name's stale mark of either form is
    this host's (removed), not another machine's (which would need --force-unlock)."""
    monkeypatch.setattr(device_lock, "this_host", lambda: "gpu-cluster-login-node-07")
    mine = own_mark(new_run_id())
    assert mine.host == "gpu-cluster-login-n"
    old = Mark("20261201T000000-000000", mine.user, device_lock._field("gpu-cluster-login-node-07", 24), dead_pid())
    assert old.host == "gpu-cluster-login-node-0"
    folder = Folder(old.name)
    assert claim("leaf1", folder, mine) == [f"removed the lock mark of {old}: that process is no longer running"]


def test_a_mark_of_a_running_process_of_this_host_holds() -> None:
    mine = own_mark(new_run_id())
    parent = Mark("20261201T000000-000000", mine.user, mine.host, os.getppid())
    assert found([parent.name], mine).held == (parent,)


def test_a_mark_rocefab_cannot_read_holds_the_device() -> None:
    folder, mine = Folder(f"{PREFIX}hand-made"), own_mark(new_run_id())
    with pytest.raises(DeployError, match="a mark rocefab cannot read"):
        claim("leaf1", folder, mine)


def test_two_runs_claiming_at_once_both_step_back() -> None:
    mine, theirs = own_mark(new_run_id()), other_host()
    folder = Folder()
    folder.meanwhile = [theirs.name]
    with pytest.raises(DeployError, match="at the same time"):
        claim("leaf1", folder, mine)
    assert folder.lock_marks() == [theirs.name], "ours is removed, theirs stays (they step back on their own)"


def test_a_mark_that_could_not_be_placed_is_an_error() -> None:
    class ReadOnly(Folder):
        def place_mark(self, name: str) -> None:
            pass  # a device answering mkdir with an error in its output, as eAPI's bash does

    with pytest.raises(DeployError, match="could not be placed"):
        claim("leaf1", ReadOnly(), own_mark(new_run_id()))


def test_a_mark_taken_away_before_the_commit_stops_it() -> None:
    mine, theirs = own_mark(new_run_id()), other_host()
    folder = Folder(theirs.name)
    with pytest.raises(DeployError, match=r"is gone .* now carries rocefab run .* of bob"):
        still_held("leaf1", folder, mine)
