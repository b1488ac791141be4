"""The one contract every device driver implements, after NAPALM's NetworkDriver.

A session stages a candidate (the rendered config), shows what would change, and then either discards it
(dry run) or commits it, optionally with an automatic revert window that a later `confirm` closes.
Capabilities are class attributes, so the fleet runner asks instead of testing the platform's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import ClassVar, Self

from rocefab.deploy.inventory import Access


class DeployError(Exception):
    """A device refused or failed an operation. The message never carries a credential."""

    def __init__(self, device: str, message: str) -> None:
        super().__init__(f"{device}: {message}")
        self.device = device
        self.message = message


class DeviceSession(ABC):
    # The platform can commit with a revert timer that `confirm` stops (EOS commit timer, NVUE --confirm).
    commit_confirm: ClassVar[bool]
    # The device itself computes the diff of a staged candidate, so a dry run also checks syntax.
    native_diff: ClassVar[bool]
    # `rollback` can return the device to its state before the last commit.
    can_rollback: ClassVar[bool]

    def __init__(self, access: Access) -> None:
        self.access = access
        self.name = access.name

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

    def __enter__(self) -> Self:
        self.open()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

