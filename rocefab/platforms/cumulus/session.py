"""NVIDIA Cumulus Linux through its own CLI: `nv config replace|diff|apply|detach` over SSH.

There is no maintained NAPALM driver for NVUE, so this one speaks to `nv` directly: the rendered YAML is
uploaded over SFTP and staged as the pending revision, `nv config diff` is the device's own diff, and
`nv config apply --confirm` gives the same revert window as an EOS commit timer. Always `-y`: without it
`nv config apply` stops at a prompt.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import yaml

from rocefab.deploy import unified
from rocefab.deploy.preserve import ReplacePreview, nvue_replace_preview
from rocefab.deploy.session import DeployError, PendingCommit
from rocefab.deploy.ssh import Result, SshDeviceSession
from rocefab.models.loader import load_yaml12
from rocefab.renderers.natural import natural_key

if TYPE_CHECKING:
    from rocefab.deploy.verify.observation import NextHop, Observation, PortCounters

# Files in the login's home directory on the switch (SFTP and exec both start there), named per run.
FILE_PREFIX = "rocefab-"
# Parts of the applied config that belong to the switch, not the fabric: a replace that omitted
# `system aaa` would delete the login accounts.
PRESERVED_SYSTEM_KEYS = ("aaa", "api", "ssh-server", "config", "control-plane", "global", "timezone", "ntp")
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _set_tree(document: Any) -> dict[str, Any]:
    if not isinstance(document, list):
        return {}
    tree: dict[str, Any] = {}
    for part in document:
        if isinstance(part, dict) and isinstance(part.get("set"), dict):
            tree.update(part["set"])
    return tree


def device_local_paths(applied: dict[str, Any], candidate: dict[str, Any]) -> list[tuple[str, str]]:
    """The applied config's (section, key) pairs a replace with `candidate` keeps: accounts, management
    access and addressing, and each service the candidate does not render on its own (so rendering NTP
    replaces the device's NTP but leaves its SNMP server, communities included)."""
    paths = [("system", key) for key in PRESERVED_SYSTEM_KEYS
             if key in applied.get("system", {}) and key not in candidate.get("system", {})]
    paths += [("service", name) for name in applied.get("service", {}) if name not in candidate.get("service", {})]
    # maintenance mode is the switch's state in operation, not the fabric's design: a push keeps it drained
    for section, key in (("interface", "eth0"), ("vrf", "mgmt"), ("maintenance", "unit")):
        if key in applied.get(section, {}) and key not in candidate.get(section, {}):
            paths.append((section, key))
    return paths


def carry_device_local(applied: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    """The candidate with the applied config's accounts, management access and services carried over."""
    merged = dict(candidate)
    for section, key in device_local_paths(applied, candidate):
        merged[section] = {**merged.get(section, {}), key: applied[section][key]}
    return merged


def without_paths(tree: dict[str, Any], paths: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """`tree` without the (section, key) subtrees `paths` names."""
    trimmed = dict(tree)
    for section, key in paths:
        if isinstance(trimmed.get(section), dict) and key in trimmed[section]:
            trimmed[section] = {k: v for k, v in trimmed[section].items() if k != key}
    return trimmed


def breakout_only(applied: dict[str, Any], candidate: dict[str, Any]) -> dict[str, Any]:
    """The applied config plus just the candidate's new port breakouts (NVUE applies breakouts before QoS
    can land on the new ports)."""
    result = dict(applied)
    interfaces = dict(result.get("interface", {}))
    changed = False
    for name, settings in candidate.get("interface", {}).items():
        breakout = settings.get("link", {}).get("breakout") if isinstance(settings, dict) else None
        current = interfaces.get(name, {}).get("link", {}).get("breakout")
        if breakout and breakout != current:
            entry = dict(interfaces.get(name, {}))
            entry["link"] = {**entry.get("link", {}), "breakout": breakout}
            entry.setdefault("type", "swp")
            interfaces[name] = entry
            changed = True
    if not changed:
        return {}
    result["interface"] = interfaces
    return result


def _paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Flatten a set tree the way `nv set` commands address it."""
    out: list[tuple[str, ...]] = []
    for key, value in tree.items():
        path = (*prefix, str(key))
        if isinstance(value, dict) and value:
            out.extend(_paths(value, path))
        else:
            out.append((*path, str(value)) if not isinstance(value, dict) else path)
    return out


_PLAIN = re.compile(r"[\w@%+=:,./-]+")


def _word(text: str) -> str:
    if _PLAIN.fullmatch(text):
        return text
    return f'"{text}"' if not re.search(r'["$`\\!]', text) else shlex.quote(text)


def set_lines(tree: dict[str, Any]) -> list[str]:
    """A set tree as the `nv set` commands that build it, one per leaf, in natural order of their paths.

    >>> set_lines({"interface": {"swp10": {"link": {"mtu": 9216}}, "swp2": {"description": "leaf1 Eth1"}}})
    ['nv set interface swp2 description "leaf1 Eth1"', 'nv set interface swp10 link mtu 9216']
    """
    leaves: list[list[str]] = []

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, [*path, str(key)])
        elif isinstance(node, dict) or node is None:
            leaves.append(path)
        else:
            leaves.append([*path, str(node)])

    walk(tree, [])
    leaves.sort(key=lambda words: tuple(natural_key(w) for w in words))
    return [" ".join(["nv set", *map(_word, words)]) for words in leaves]


def _dump(tree: dict[str, Any]) -> str:
    return str(yaml.dump([{"set": tree}], Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000))


class CumulusSession(SshDeviceSession):
    _preview: ReplacePreview | None = None  # of the replace staged last
    _local: tuple[tuple[str, str], ...] = ()  # the device-local paths of the last load
    commit_confirm: ClassVar[bool] = True
    can_rollback: ClassVar[bool] = True

    @property
    def _candidate_file(self) -> str:
        return f"{FILE_PREFIX}{self.run_id}.candidate.yaml"

    @property
    def _previous_file(self) -> str:
        return f"{FILE_PREFIX}{self.run_id}.previous.yaml"

    def _nv(self, *args: str, expect: tuple[int, ...] = (0,)) -> Result:
        command = "nv " + " ".join(shlex.quote(a) for a in args)
        result = self.ssh.run(command)
        if result.status not in expect:
            detail = (result.stderr or result.stdout).strip().splitlines()
            said = " | ".join(detail[-3:]) or "(no output)"
            raise DeployError(self.name, f"'{command}' exited {result.status}: {said}")
        return result

    def open(self) -> None:
        self._connect()
        self._candidate: dict[str, Any] | None = None
        self._previous: dict[str, Any] | None = None
        self._confirm_pending = False
        self._settled = True  # False from a commit until it is confirmed or rolled back

    def pending_commits(self) -> list[PendingCommit]:
        from rocefab.platforms.cumulus.pending import pending, unsettled_runs

        result = self._nv("config", "apply", "--confirm-status", expect=tuple(range(256)))
        return pending(result.status, result.stdout + result.stderr, unsettled_runs(self.ssh.listdir()))

    def settle_pending(self, pending: PendingCommit, keep: bool) -> None:
        self._nv("config", "apply", "--confirm-yes" if keep else "--confirm-no")
        if pending.run is not None:  # that run's restore point is no longer needed: its commit is settled
            with contextlib.suppress(DeployError):
                self.ssh.remove(f"{FILE_PREFIX}{pending.run}.previous.yaml")

    def cleanup_leftovers(self) -> list[str]:
        ours = {self._candidate_file, self._previous_file}
        stale = [f for f in self.ssh.listdir() if f.startswith(FILE_PREFIX) and f.endswith(".yaml") and f not in ours]
        for name in stale:
            self.ssh.remove(name)
        return [f"removed {name}, left by an earlier run" for name in stale]

    def close(self) -> None:
        """Remove this run's files. The pre-commit config stays while a commit of this session is neither
        confirmed nor rolled back: a fresh session of the same run may still need it to roll back."""
        if self._ssh is not None:
            with contextlib.suppress(DeployError):
                self.ssh.remove(self._candidate_file)
                if getattr(self, "_settled", True):
                    self.ssh.remove(self._previous_file)
        super().close()

    def _applied(self) -> dict[str, Any]:
        return _set_tree(load_yaml12(self._nv("config", "show", "-o", "yaml").stdout))

    def running_config(self) -> str:
        return self._nv("config", "show", "-o", "yaml").stdout

    def observe(self, device: Any) -> Observation:
        from rocefab.platforms.cumulus import SPEC, observe

        shown = self._nv("show", "interface", "-o", "json").stdout
        neighbors = self._nv("show", "vrf", "default", "router", "bgp", "neighbor", "-o", "json").stdout
        mlag = self._nv("show", "mlag", "-o", "json").stdout
        try:
            return observe.observe(shown, neighbors, mlag, self._applied(), self.name, SPEC.default_dscp_classes,
                                   [p.name for p in device.ports])
        except ValueError as exc:
            raise DeployError(self.name, f"unreadable show output: {exc}") from None

    def routes(self, device: Any, prefixes: Sequence[str]) -> dict[str, tuple[NextHop, ...]]:
        from rocefab.platforms.cumulus import observe

        out = {}
        for prefix in prefixes:
            result = self.ssh.run(observe.route_command(prefix))
            if result.status != 0:
                said = (result.stderr or result.stdout).strip().splitlines()
                raise DeployError(self.name, f"vtysh exited {result.status}: {' | '.join(said[-2:]) or '(no output)'}")
            try:
                out[prefix] = observe.route(json.loads(result.stdout or "{}"), prefix)
            except ValueError as exc:
                raise DeployError(self.name, f"unreadable vtysh output: {exc}") from None
        return out

    def counters(self, device: Any) -> dict[str, PortCounters]:
        from rocefab.platforms.cumulus import counters as reader

        def answer(words: tuple[str, ...]) -> str:
            # A view this release does not have (the watchdog before 5.6, `counters qos` before 5.5) is refused:
            # its fields stay not reported, and the other views are still read.
            result = self._nv(*words, expect=(0, 1))
            return result.stdout if result.status == 0 else ""

        shown = {}
        for p in device.ports:
            general, qos, watchdog = (answer(words) for words in reader.commands(p.name))
            shown[p.name] = (general, qos, watchdog)
        try:
            return reader.parse(shown)
        except (ValueError, TypeError, AttributeError) as exc:
            raise DeployError(self.name, f"unreadable counters: {exc}") from None

    def backup(self) -> str:
        tree = self._applied()
        system = {k: v for k, v in tree.get("system", {}).items() if k not in PRESERVED_SYSTEM_KEYS}
        local = {"system": system} if system else {}
        kept = {k: v for k, v in tree.items() if k not in ("system", "service")} | local
        return _dump(kept)

    def load(self, candidate: str, replace: bool = True) -> None:
        tree = _set_tree(load_yaml12(candidate))
        if not tree:
            raise DeployError(self.name, "the candidate is not an NVUE `- set:` document")
        applied = self._applied()
        self._preview = nvue_replace_preview(applied, tree, carry_device_local) if replace else None
        # The device-local parts are the same before and after; the diff leaves them out, hashes and
        # communities with them.
        self._local = tuple(device_local_paths(applied, tree))
        if replace:
            tree = carry_device_local(applied, tree)
        self._candidate, self._previous = tree, applied
        self.ssh.upload(_dump(tree), self._candidate_file, mode=0o600)
        self._nv("config", "replace" if replace else "patch", self._candidate_file)

    def replace_preview(self) -> ReplacePreview | None:
        return self._preview

    def diff(self) -> str:
        """NVUE's own diff decides whether anything changes; it is shown as the applied and the pending
        revision in `nv set` form, one line per setting, so a changed value is its old line and its new one
        (NVUE's `nv set`/`nv unset` commands say what to run, not what was there)."""
        if not self._nv("config", "diff", "-o", "commands").stdout.strip():
            return ""
        applied = self._previous if self._previous is not None else self._applied()
        pending = _set_tree(load_yaml12(self._nv("config", "show", "-r", "pending", "-o", "yaml").stdout))
        return unified.from_lines(self.name, set_lines(without_paths(applied, self._local)),
                                  set_lines(without_paths(pending, self._local)))

    def commit(self, confirm_seconds: int | None = None) -> None:
        if self._candidate is None or self._previous is None:
            raise DeployError(self.name, "nothing staged")
        # Keep the pre-commit config on the switch so a rollback can replace back to it.
        self.ssh.upload(_dump(self._previous), self._previous_file, mode=0o600)
        self._settled = False
        first = breakout_only(self._previous, self._candidate)
        if first:
            # New breakouts go in on their own first; the staged candidate is re-staged afterwards.
            self._nv("config", "detach")
            self.ssh.upload(_dump(first), self._candidate_file, mode=0o600)
            self._nv("config", "replace", self._candidate_file)
            self._nv("config", "apply", "-y")
            self.ssh.upload(_dump(self._candidate), self._candidate_file, mode=0o600)
            self._nv("config", "replace", self._candidate_file)
        if confirm_seconds:
            self._nv("config", "apply", "-y", "--confirm", f"{confirm_seconds}s")
            self._confirm_pending = True
        else:
            self._nv("config", "apply", "-y")

    def verify(self, candidate: str) -> str:
        """Every setting staged must now be applied (NVUE adds keys of its own, so applied may hold more)."""
        if self._candidate is None:
            return ""
        applied = set(_paths(self._applied()))
        missing = [" ".join(path) for path in _paths(self._candidate) if path not in applied]
        return "\n".join(f"missing after apply: nv set {line}" for line in missing)

    def confirm(self) -> None:
        if self._confirm_pending:
            self._nv("config", "apply", "--confirm-yes")
            self._confirm_pending = False
        self._settled = True

    def discard(self) -> None:
        self._nv("config", "detach")

    def rollback(self) -> None:
        if self._confirm_pending:
            self._nv("config", "apply", "--confirm-no")
            self._confirm_pending = False
            if not self._breakouts_applied():
                self._settled = True
                return
        # Breakouts change in an apply of their own, on the way back as on the way in: first everything else
        # back to before while the ports stay broken out, then the breakouts.
        previous = self._previous if self._previous is not None else _set_tree(
            load_yaml12(self.ssh.download(self._previous_file)))
        first = breakout_only(previous, self._applied())
        if first:
            self.ssh.upload(_dump(first), self._candidate_file, mode=0o600)
            self._nv("config", "replace", self._candidate_file)
            self._nv("config", "apply", "-y")
        self._nv("config", "replace", self._previous_file)
        self._nv("config", "apply", "-y")
        self._settled = True

    def _breakouts_applied(self) -> bool:
        return bool(self._previous is not None and self._candidate is not None
                    and breakout_only(self._previous, self._candidate))
