"""An Arista EOS switch on 127.0.0.1 that speaks eAPI (JSON-RPC `runCmds` over HTTP or HTTPS), stateful enough for
NAPALM's `eos` driver to load, diff, commit (also with a commit timer), confirm, discard and roll back, unpatched.

It models exactly the requests NAPALM sends (see deploy-toolchain.md §1): config sessions and their states,
`flash:` files, startup-config, the error envelope, and faults a test can switch on while the device runs.

Here: the switch (`EosDevice`): its configs, files and sessions, and what the lab fabric asks it. Its parts: one
request's CLI and the exec commands (lab/eos/commands.py), the show commands (lab/eos/show.py), the session record
and the error envelope (lab/eos/sessions.py), the HTTP(S) transport (lab/eos/eapi.py), the mode grammar
(lab/eos/grammar.py), the state it reports (lab/eos/state.py).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from rocefab.lab.configtree import ConfigTree
from rocefab.lab.eos import state as eos_state
from rocefab.lab.eos.commands import Batch
from rocefab.lab.eos.grammar import EOS_GRAMMAR
from rocefab.lab.eos.sessions import MAX_SAVED_SESSIONS, CliError, Session, failed
from rocefab.lab.faults import Knobs, Reachability
from rocefab.lab.wiring import BgpSpeaker, Wiring

__all__ = ["Drop", "EosDevice", "Faults"]

# A placeholder in the shape of a sha512-crypt hash; it hashes no password.
PLACEHOLDER_SECRET = "$6$rocefablab$placeholder.not.a.real.hash"
FACTORY_CONFIG = """hostname {name}
username admin privilege 15 role network-admin secret sha512 {secret}
management api http-commands
   no shutdown
interface Management1
"""


@dataclass
class Faults:
    """Misbehaviour a test switches on or off while the device runs."""

    reject_line: str | None = None  # regex: config lines matching it are rejected as invalid input
    delay_seconds: float = 0.0  # every answer comes this much later
    drop_on: str | None = None  # regex: the connection closes without an answer at the first matching command
    drop_after: bool = False  # with drop_on: run that command first (the change is made, the answer is lost)
    stale_session: bool = False  # a pending session `napalm_stale` exists, as left behind by a crashed run
    wrong_password: bool = False  # every login is refused, as after a password change


class Drop(Exception):
    """Close the connection without an answer."""


class EosDevice:
    # How a pending commit is confirmed from exec mode (NAPALM's confirm_commit): what `lose-confirm` never answers.
    KNOBS = Knobs(delay="delay_seconds", refuse_logins="wrong_password", reject="reject_line")
    CONFIRM_COMMAND = r"^configure session \S+ commit$"

    def __init__(self, name: str = "leaf1", *, model: str = "DCS-7060X6-64PE", version: str = "4.34.1F",
                 username: str = "admin", password: str = "admin") -> None:
        self.name = name
        self.model, self.version, self.username, self.password = model, version, username, password
        self.wiring: Wiring | None = None  # set when the device is part of a lab fabric
        self.faults = Faults()
        self.reach = Reachability()
        self.running = ConfigTree.parse(EOS_GRAMMAR, FACTORY_CONFIG.format(name=name, secret=PLACEHOLDER_SECRET))
        self.startup = self.running.text()
        self.flash: dict[str, str] = {}
        self.flash_dirs: set[str] = set()  # folders in /mnt/flash (rocefab's lock marks), empty
        self.sessions: dict[str, Session] = {}
        self.log: deque[tuple[str, list[str]]] = deque(maxlen=1000)  # (format, commands) per request
        self.lock = threading.RLock()
        digest = hashlib.sha256(name.encode()).hexdigest()
        self.serial, self.mac = f"JPE{digest[:8].upper()}", "00:1c:73:" + ":".join(digest[i:i + 2] for i in (8, 10, 12))
        self._boot_mono, self._boot_epoch = time.monotonic(), time.time()
        self._stale_planted = False  # the stale-session fault has left its session behind

    # -- the lab fabric's questions and the faults a person makes at the CLI (lab/eos/state.py) -----------------------
    def port_enabled(self, port: str) -> bool:
        return eos_state.port_enabled(self, port)

    def bgp_speaker(self) -> BgpSpeaker | None:
        return eos_state.bgp_speaker(self)

    def set_mtu(self, port: str, mtu: int) -> str:
        eos_state.set_mtu(self, port, mtu)
        return f"interface {port} / mtu {mtu}"

    def pfc_off(self, port: str, priority: int) -> str:
        eos_state.pfc_off(self, port)
        return f"interface {port} / no service-profile (the port loses PFC and DSCP trust)"

    def strict_off(self, priority: int) -> str:
        return eos_state.strict_off(self, priority)

    def snapshot(self) -> object:
        with self.lock:
            return self.running.copy()

    def restore(self, snapshot: object) -> None:
        assert isinstance(snapshot, ConfigTree)
        with self.lock:
            self.running = snapshot.copy()
            self.reach.clear()

    @property
    def hostname(self) -> str:
        node = self.running.root.child("hostname", block=False)
        return node.line.split()[1] if node else "localhost"

    def uptime(self) -> float:
        return time.monotonic() - self._boot_mono

    def new_shape(self) -> bool:
        """EOS >= 4.32 reports a commit timer at the top of `show configuration sessions`."""
        major, minor = (int(x) for x in re.findall(r"\d+", self.version)[:2])
        return (major, minor) >= (4, 32)

    def running_text(self, *, header: bool = True) -> str:
        head = f"! Command: show running-config\n! device: {self.hostname} ({self.model}, EOS-{self.version})\n!\n"
        return (head if header else "") + self.running.text()

    # --- sessions -------------------------------------------------------------------------------------------
    def commit(self, session: Session, timer_s: int | None = None) -> None:
        if session.state == "pendingCommitTimer" and timer_s is None:  # the confirming commit
            self._cancel(session)
        elif session.state != "pending":
            raise failed(f"% Cannot commit session {session.name} (state {session.state})")
        elif timer_s is None:
            self.running = session.config.copy()
        else:
            if any(s.state == "pendingCommitTimer" for s in self.sessions.values()):
                raise failed("% Another session has a commit timer pending")
            session.before, self.running = self.running, session.config.copy()
            session.state, session.commit_by = "pendingCommitTimer", self.uptime() + timer_s
            session.timer = threading.Timer(timer_s, self._expire, (session.name,))
            session.timer.daemon = True
            session.timer.start()
            return
        self._finish(session, "completed")

    def abort(self, session: Session) -> None:
        if session.state == "completed":
            raise failed(f"% Cannot abort session {session.name} (already completed)")
        if session.state == "pendingCommitTimer" and session.before is not None:
            self.running = session.before
        self._cancel(session)
        del self.sessions[session.name]

    def expire_pending_now(self) -> str:
        """Fault: every commit timer ends now, as if it ran out (the sessions' changes revert)."""
        with self.lock:
            waiting = [s.name for s in self.sessions.values() if s.state == "pendingCommitTimer"]
        self.expire_commit_timer_now()
        return f"{self.name}: commit timer of {', '.join(waiting)} ran out, the change reverted" if waiting else \
            f"{self.name}: no commit timer was pending; nothing changed"

    def expire_commit_timer_now(self) -> None:
        with self.lock:
            for s in list(self.sessions.values()):
                if s.state == "pendingCommitTimer":
                    self._expire(s.name)

    def _expire(self, name: str) -> None:
        with self.lock:
            session = self.sessions.get(name)
            if session is None or session.state != "pendingCommitTimer":
                return
            self._cancel(session)
            if session.before is not None:
                self.running = session.before
            self._finish(session, "aborted")

    def _finish(self, session: Session, state: str) -> None:
        session.state, session.completed_at = state, time.time()
        done = [s for s in self.sessions.values() if s.completed_at is not None]
        for old in sorted(done, key=lambda s: s.completed_at or 0)[:-MAX_SAVED_SESSIONS]:
            del self.sessions[old.name]

    @staticmethod
    def _cancel(session: Session) -> None:
        if session.timer is not None:
            session.timer.cancel()
            session.timer = None

    def _housekeeping(self) -> None:
        """Lazy side of the commit timer (in case no Timer thread runs) and the stale-session fault."""
        for s in list(self.sessions.values()):
            if s.state == "pendingCommitTimer" and s.commit_by is not None and s.commit_by <= self.uptime():
                self._expire(s.name)
        # The fault leaves one pending session behind, once: a client that aborts it has really cleared it.
        stale = self.sessions.get("napalm_stale")
        if self.faults.stale_session and not self._stale_planted:
            self.sessions["napalm_stale"] = Session("napalm_stale", self.running.copy(), "admin")
            self._stale_planted = True
        elif not self.faults.stale_session:
            self._stale_planted = False
            if stale is not None and stale.state == "pending":
                del self.sessions["napalm_stale"]

    def close(self) -> None:
        with self.lock:
            for s in self.sessions.values():
                self._cancel(s)

    # --- requests -------------------------------------------------------------------------------------------
    def run_cmds(self, cmds: list[Any], fmt: str, user: str) -> dict[str, Any]:
        """Run one runCmds request; the JSON-RPC `result` list, or an `error` object."""
        names = [c["cmd"] if isinstance(c, dict) else str(c) for c in cmds]
        with self.lock:
            self.log.append((fmt, names))
            self._housekeeping()
            batch = Batch(self, fmt, user)
            results: list[Any] = []
            for i, (cmd, name) in enumerate(zip(cmds, names, strict=True)):
                drop = bool(self.faults.drop_on and re.search(self.faults.drop_on, name))
                if (drop and not self.faults.drop_after) or self.reach.cut_before(name):
                    raise Drop
                try:
                    results.append(batch.run(name, cmd.get("input") if isinstance(cmd, dict) else None))
                except CliError as exc:
                    return {"error": {"code": exc.code,
                                      "message": f"CLI command {i + 1} of {len(cmds)} '{name}' failed: {exc.kind}",
                                      "data": [*results, {"errors": exc.errors}]}}
                if drop or self.reach.cut_after(name):
                    raise Drop
            return {"result": results}
