"""NVUE's revision model for the lab's Cumulus emulator (lab/cumulus/nvue.py): the pending revision that `nv set`,
`nv unset` and `nv config patch|replace` start from the applied tree, and `nv config apply` with its `-y` question,
`--confirm` rollback timer and history.

`NvueRevisions` is a base class of `CumulusDevice`, whose `__init__` sets up the state it works on (declared below);
the `nv` front end (`CumulusDevice._nv`, `_config`) calls it with the device lock held.
"""

from __future__ import annotations

import copy
import re
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from rocefab.lab.cumulus.schema import SCHEMA, TYPES, Invalid, Tree, dotted, normalise, step
from rocefab.lab.cumulus.tree import breakout_qos_conflict, hash_passwords, leaves, merge, nest, remove
from rocefab.lab.sshd import Ask, Outcome, Result
from rocefab.models.loader import load_yaml12

if TYPE_CHECKING:
    from rocefab.lab.cumulus.nvue import Faults


@dataclass
class Revision:
    rev_id: int
    tree: Tree
    state: str  # pending | applied | detached | confirm | rolled-back
    user: str
    date: str


@dataclass
class Confirm:
    rev_id: int
    previous: Tree
    deadline: float  # time.monotonic()
    timer: threading.Timer


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _duration(text: str) -> float:
    found = re.fullmatch(r"(\d+)([smh]?)", text)
    if not found or int(found[1]) == 0:
        raise Invalid(f"Invalid confirm time: {text}")
    return int(found[1]) * {"s": 1, "m": 60, "h": 3600, "": 60}[found[2]]  # a bare number is minutes


class NvueRevisions:
    """The applied tree, the revisions and the confirm timer of one switch (see lab/cumulus/nvue.py for what is
    modelled); the files `nv config patch|replace` read are under `root`, the switch's SFTP/SCP root."""

    _root: Path
    _lock: threading.RLock
    faults: Faults
    applied: Tree
    revisions: dict[int, Revision]
    history: list[tuple[int, int, str, str, str, str]]
    pending: int | None
    _confirm: Confirm | None

    @property
    def root(self) -> Path:
        return self._root

    def expire_pending_now(self) -> str:
        """Fault: as `expire_confirm_now`, said in words."""
        with self._lock:
            waiting = self._confirm.rev_id if self._confirm is not None else None
        self.expire_confirm_now()
        return f"the confirm window of revision {waiting} closed: the change rolled back" if waiting is not None \
            else "no confirm window was open; nothing changed"

    def expire_confirm_now(self) -> None:
        """Fault: the `--confirm` window closes now (the change rolls back) instead of at its deadline."""
        with self._lock:
            if self._confirm is not None:
                self._confirm.timer.cancel()
                self._rollback("confirm timeout")

    def _rev_tree(self, name: str) -> Tree | None:
        if name == "applied":
            return self.applied
        if name == "pending":
            return self.revisions[self.pending].tree if self.pending else self.applied
        if name == "empty":
            return {}
        if name == "startup":
            return self.applied  # auto-save (5.9+) keeps startup equal to applied
        found = self.revisions.get(int(name)) if name.isdigit() else None
        return found.tree if found else None

    def _edit(self, change: Callable[[Tree], None], user: str) -> None:
        """Run `change` on a copy of the pending tree (new revision from applied if none); commit only on success."""
        base = self.revisions[self.pending].tree if self.pending else self.applied
        work = copy.deepcopy(base)
        change(work)
        hash_passwords(work)
        if self.pending is None:
            self.pending = max(self.revisions) + 1
            self.revisions[self.pending] = Revision(self.pending, work, "pending", user, now())
        else:
            self.revisions[self.pending].tree = work

    def _check_rejected(self, tree: Tree, verb: str) -> None:
        pattern = self.faults.reject_path
        for path, _ in leaves(tree) if pattern is not None else ():
            if pattern is not None and re.search(pattern, " ".join(path)):
                raise Invalid(f"Config invalid at {dotted(list(path))}: {verb} refused (injected fault)")

    # --- edits: nv set/unset lines, patch and replace files -------------------------------------------------------

    def _cli_edit(self, verb: str, words: list[str]) -> Callable[[Tree], None]:
        """The change one `nv set`/`nv unset` line makes, checked against the schema first."""
        node, path = SCHEMA, list[str]()
        value: Any = {}
        line = " ".join(["nv", verb, *words])
        for i, word in enumerate(words):
            try:
                name, child = step(node, word)
            except Invalid as exc:
                if node.value is not None and i == len(words) - 1 and verb == "set":
                    try:
                        value = TYPES[node.value](word)
                    except ValueError as bad:
                        raise Invalid(f"Invalid Command: {line}\n  {bad}") from None
                    break
                raise Invalid(f"Invalid Command: {line}\n  {exc}") from None
            node, path = child, [*path, name]
        else:
            if not path or (verb == "set" and not node.bare):
                raise Invalid(f"Incomplete Command: {line}")
        doc = nest(path, None if verb == "unset" else value)
        self._check_rejected(nest(path, {}) if verb == "unset" else doc, verb)
        if verb == "unset":
            return lambda tree: remove(tree, doc)
        return lambda tree: merge(tree, doc)

    def _file_edit(self, name: str, *, replace: bool) -> Callable[[Tree], None]:
        root = self.root.resolve()
        path = (root / name.lstrip("/")).resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise Invalid(f"File not found: {name}")
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = [line.strip() for line in text.splitlines()]
        changes: list[Callable[[Tree], None]] = [lambda tree: tree.clear()] if replace else []
        # NVUE reads a file of only comments, blank lines and nv set/unset lines as commands, anything else as YAML
        if all(not line or line.startswith("#") or re.match(r"nv (un)?set\s", line) for line in lines):
            for number, line in enumerate(lines, 1):
                if line and not line.startswith("#"):
                    try:
                        words = shlex.split(line)
                        changes.append(self._cli_edit(words[1], words[2:]))
                    except (Invalid, ValueError) as exc:
                        raise Invalid(f"line {number}: {line}\n  {exc}") from None
        else:
            changes += self._yaml_changes(text, name)

        def run(tree: Tree) -> None:
            for change in changes:
                change(tree)
        return run

    def _yaml_changes(self, text: str, name: str) -> list[Callable[[Tree], None]]:
        try:
            docs = load_yaml12(text)
        except yaml.YAMLError as exc:
            raise Invalid(f"Failed to parse {name}: {exc}") from None
        if docs is None:
            docs = []
        if not isinstance(docs, list):
            raise Invalid(f"Config invalid at <root>: {type(docs).__name__} is not of type 'array'")
        changes: list[Callable[[Tree], None]] = []
        for doc in docs:
            if not isinstance(doc, dict) or len(doc) != 1 or next(iter(doc)) not in ("set", "unset", "header"):
                raise Invalid(f"Config invalid at <root>: {doc!r} is not one of the 'header', 'set', 'unset' forms")
            verb, body = next(iter(doc.items()))
            if verb == "header":
                continue
            tree: Tree = normalise(body, SCHEMA, [], verb == "unset") or {}
            self._check_rejected(tree, verb)
            changes.append(partial(remove if verb == "unset" else merge, src=tree))
        return changes

    # --- apply, confirm, rollback ------------------------------------------------------------------------------------

    def _apply(self, opts: dict[str, str], rest: list[str], user: str) -> Outcome:
        if "--confirm-status" in opts:
            if self._confirm is None:
                return 0, "No pending confirm\n", ""
            left = max(0.0, self._confirm.deadline - time.monotonic())
            return 0, f"Confirm pending for rev_id {self._confirm.rev_id}: {left:.0f} seconds left\n", ""
        if "--confirm-yes" in opts or "--confirm-no" in opts:
            if self._confirm is None:
                raise Invalid("There is no pending confirm")
            confirm, rev_id = self._confirm, self._confirm.rev_id
            if "--confirm-no" in opts:
                confirm.timer.cancel()
                self._rollback("confirm rejected")
                return 0, f"rolled back [rev_id: {rev_id}]\n", ""
            confirm.timer.cancel()
            self._confirm = None
            self.revisions[rev_id].state = "applied"
            return 0, f"confirmed [rev_id: {rev_id}]\n", ""
        if self._confirm is not None:
            raise Invalid(f"A confirm is pending for rev_id {self._confirm.rev_id}: run nv config apply "
                          "--confirm-yes or --confirm-no first")
        if len(rest) > 1:
            raise Invalid(f"Invalid Command: nv config apply {' '.join(rest)}")
        chosen = int(rest[0]) if rest and rest[0].isdigit() else self.pending
        if rest and (chosen is None or chosen not in self.revisions):
            raise Invalid(f"Unknown revision: {rest[0]}")
        if chosen is None:
            raise Invalid("There is no pending configuration to apply")
        rev_id = chosen
        confirm_s = _duration(opts["--confirm"]) if "--confirm" in opts else None

        def go() -> Result:
            with self._lock:
                return self._commit(rev_id, user, confirm_s, opts.get("-m", "CLI apply"))
        if "-y" in opts:
            return go()
        if "--assume-no" in opts:
            return 1, "", "Declined apply after warnings\n"
        return Ask("Are you sure? [y/N] ", lambda answer: go() if answer.lower() in ("y", "yes") else (
            1, "", "Declined apply after warnings\n"))

    def _commit(self, rev_id: int, user: str, confirm_s: float | None, message: str) -> Result:
        if self._confirm is not None:  # another apply --confirm won the race while this one was asking
            return 1, "", f"Error: A confirm is pending for rev_id {self._confirm.rev_id}\n"
        target = self.revisions[rev_id].tree
        problem = breakout_qos_conflict(self.applied, target)
        if problem:
            return 1, "", f"Invalid config [rev_id: {rev_id}]\n  {problem}\n"
        previous, self.applied = self.applied, copy.deepcopy(target)
        self.revisions[rev_id].state = "confirm" if confirm_s else "applied"
        if rev_id == self.pending:
            self.pending = None
        self.history.append((len(self.history) + 1, rev_id, now(), user, "CLI", message))
        out = f"applied [rev_id: {rev_id}]\n"
        if confirm_s:
            timer = threading.Timer(confirm_s, self._expire, args=(rev_id,))
            timer.daemon = True
            self._confirm = Confirm(rev_id, previous, time.monotonic() + confirm_s, timer)
            timer.start()
            out += f"Confirm within {confirm_s:g} seconds with nv config apply --confirm-yes, or it rolls back\n"
        return 0, out, ""

    def _expire(self, rev_id: int) -> None:
        with self._lock:
            if self._confirm is not None and self._confirm.rev_id == rev_id:
                self._rollback("confirm timeout")

    def _rollback(self, why: str) -> None:
        assert self._confirm is not None
        confirm, self._confirm = self._confirm, None
        self.applied = confirm.previous
        self.revisions[confirm.rev_id].state = "rolled-back"
        self.history.append((len(self.history) + 1, confirm.rev_id, now(), "system", "rollback", why))
