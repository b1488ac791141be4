"""The one contract every device driver implements, after NAPALM's NetworkDriver.

A session stages a candidate (the rendered config), shows what would change, and then either discards it
(dry run) or commits it, optionally with an automatic revert window that a later `confirm` closes.
Capabilities are class attributes, so the fleet runner asks instead of testing the platform's name.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
import socket
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from rocefab.deploy.inventory import Access
from rocefab.deploy.preserve import ReplacePreview

if TYPE_CHECKING:
    from rocefab.deploy.verify.observation import HostCounters, NextHop, Observation, PortCounters


class DeployError(Exception):
    """A device refused or failed an operation. The message never carries a credential.

    `connection_lost`: the failure was the connection itself (closed, timed out, unreachable), so what the
    device did with the request is not known."""

    def __init__(self, device: str, message: str, *, connection_lost: bool = False) -> None:
        super().__init__(f"{device}: {message}")
        self.device = device
        self.message = message
        self.connection_lost = connection_lost


def new_run_id() -> str:
    """A name for one fleet run, used in every candidate file and configuration session it leaves on a
    device, so two runs never touch each other's, and a later run can tell leftovers from its own.

    >>> len(new_run_id().split("-"))
    2
    """
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def describe(exc: BaseException, timeout_s: float | None = None) -> str:
    """A library's exception as a device's reason: never empty, and named for what happened.

    >>> describe(TimeoutError("timed out"), 30)
    'timeout after 30 s'
    >>> describe(EOFError())
    'connection closed by the device'
    >>> describe(ValueError("bad  input"))
    'bad input'
    """
    text = " ".join(str(exc).split())
    timed_out = isinstance(exc, TimeoutError | socket.timeout) or "Timeout" in type(exc).__name__
    if timed_out or (timeout_s and "timed out" in text.lower()):
        # Libraries wrap the socket's timeout in their own errors ("Socket error during eAPI connection:
        # timed out"); the reason is the timeout, whichever layer saw it.
        return f"timeout after {timeout_s:g} s" if timeout_s else f"timeout ({text or 'no answer'})"
    if isinstance(exc, EOFError | ConnectionError) and not text:
        return "connection closed by the device"
    return text or f"{type(exc).__name__} (the library gave no message)"


@dataclass(frozen=True, slots=True)
class PendingCommit:
    """A commit the device runs but reverts by itself unless it is confirmed in time (an EOS commit-timer
    session, an NVUE `apply --confirm` window): device state, which every command reads before it acts.

    `name`: what the device calls it (a session, a revision); `seconds_left`: until the revert, None when the device
    did not say; `run`: the rocefab run that made it, None when not one of ours (or not known)."""

    name: str
    seconds_left: float | None
    run: str | None = None

    def describe(self) -> str:
        """
        >>> PendingCommit("rocefab_x_1", 412.4, "x").describe()
        'pending revert in 412 s (rocefab_x_1, committed by rocefab run x and never confirmed)'
        >>> PendingCommit("5", None).describe()
        'pending revert at a time the device did not report (5, not committed by rocefab)'
        """
        when = "at a time the device did not report" if self.seconds_left is None else f"in {self.seconds_left:.0f} s"
        who = f"committed by rocefab run {self.run} and never confirmed" if self.run else "not committed by rocefab"
        return f"pending revert {when} ({self.name}, {who})"


class DeviceSession(ABC):
    # The platform can commit with a revert timer that `confirm` stops (EOS commit timer, NVUE --confirm).
    commit_confirm: ClassVar[bool]
    # `rollback` can return the device to its state before the last commit.
    can_rollback: ClassVar[bool]
    # The device has a running config to save before a change (`backup`); a host's script is its own source.
    has_backup: ClassVar[bool] = True
    # Its diff runs on the device and keeps a CPU busy there (a host's script --check): run those after
    # the switches in a dry run, so no switch session waits behind them into its own timeout.
    heavy_diff: ClassVar[bool] = False
    # Sessions another client left on the device that block new ones, and whether to abort them first;
    # None where the platform has no such sessions.
    clear_stale_sessions: ClassVar[bool | None] = None

    def __init__(self, access: Access, run_id: str | None = None) -> None:
        self.access = access
        self.name = access.name
        self.run_id = run_id or new_run_id()

    @staticmethod
    def normalized(config: str) -> str:
        """`backup()` text without what changes by itself (a timestamp line), for before/after comparison."""
        return config

    def pending_commits(self) -> list[PendingCommit]:
        """Commits on the device awaiting their confirm, whoever made them. Read-only: nothing changes."""
        return []

    def settle_pending(self, pending: PendingCommit, keep: bool) -> None:
        """Finish a pending commit: confirm it (`keep`) or revert it now. Only `apply` and `rollback` call this."""
        raise DeployError(self.name, f"{type(self).__name__} devices have no pending commits to settle")

    def cleanup_leftovers(self) -> list[str]:
        """Remove candidate files and sessions earlier rocefab runs left on the device (a killed run, a lost
        connection); what was removed, in words. Only called while this run holds the device's lock."""
        return []

    # The run's lock marks (deploy/device_lock.py): empty directories in a folder every login can see.
    def lock_marks(self) -> list[str]:
        """The names in the marks' folder that start with the marks' prefix. Read-only."""
        raise DeployError(self.name, f"{type(self).__name__} devices cannot carry a lock mark")

    def place_mark(self, name: str) -> None:
        raise DeployError(self.name, f"{type(self).__name__} devices cannot carry a lock mark")

    def remove_mark(self, name: str) -> None:
        raise DeployError(self.name, f"{type(self).__name__} devices cannot carry a lock mark")

    @abstractmethod
    def open(self) -> None: ...

    @abstractmethod
    def running_config(self) -> str:
        """The configuration the device runs now, as text (for backups and diffs)."""

    @abstractmethod
    def backup(self) -> str:
        """The running config without its device-local sections (accounts, password hashes, management
        access): what a later replace restores, since a replace carries those sections over by itself."""

    @abstractmethod
    def load(self, candidate: str, replace: bool = True) -> None:
        """Stage `candidate`: the whole truth (replace) or lines added to the running config (merge)."""

    @abstractmethod
    def diff(self) -> str:
        """What committing the staged candidate would change; empty when nothing."""

    def replace_preview(self) -> ReplacePreview | None:
        """After a replace was staged: the running config's blocks outside the candidate that the replace
        keeps (device-local) and those it removes. None where the platform stages no replace (hosts)."""
        return None

    @abstractmethod
    def commit(self, confirm_seconds: int | None = None) -> None:
        """Apply the staged candidate; with `confirm_seconds`, revert by itself unless confirmed in time."""

    @abstractmethod
    def verify(self, candidate: str) -> str:
        """After a commit: what still differs between the running config and `candidate` (empty if none).

        Runs while a revert window may still be open, so it must not disturb the pending commit."""

    @abstractmethod
    def confirm(self) -> None: ...

    @abstractmethod
    def discard(self) -> None:
        """Drop the staged candidate; the running config is untouched."""

    @abstractmethod
    def rollback(self) -> None:
        """Return to the configuration from before the last commit."""

    @abstractmethod
    def close(self) -> None: ...

    def in_maintenance(self, drained: str) -> bool:
        """Whether the switch is in its maintenance mode: `drained` (the unit's Maintenance.drained) found in the
        running config. A platform whose mode is not configuration reads it its own way."""
        if not drained:
            raise DeployError(self.name, f"{type(self).__name__} devices have no maintenance mode to read")
        return re.search(drained, self.running_config()) is not None

    def observe(self, device: Any) -> Observation:
        """Read what verify compares with the plan (deploy/verify/observation.py): `device` is this device's
        entry in the plan (a Switch or a Host). Read-only: nothing on the device changes."""
        raise DeployError(self.name, f"verify cannot read {type(self).__name__} devices yet")

    def counters(self, device: Any) -> dict[str, PortCounters]:
        """One read of the counters of `device`'s planned ports, by port name."""
        raise DeployError(self.name, f"verify does not read counters from {type(self).__name__} devices yet")

    def routes(self, device: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
        """The installed route to each of `prefixes` in the default VRF, as its next hops (none: no route)."""
        raise DeployError(self.name, f"verify does not read routes from {type(self).__name__} devices yet")

    def host_counters(self, device: Any) -> HostCounters:
        """One read of a GPU host's RDMA and NIC port counters (`device` is its Host in the plan)."""
        raise DeployError(self.name, f"{type(self).__name__} devices have no host counters")

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

