"""Operations on NVUE configuration trees (nested dicts in NVUE's YAML shape) for the lab's Cumulus emulator: merge
and remove a `set`/`unset` document, the `nv set` lines of a tree, the diff between two trees, the 5.14
breakout/QoS apply caveat, and the stand-in hash NVUE keeps for an account's password.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shlex
from collections.abc import Iterator
from typing import Any

from rocefab.lab.cumulus.schema import EXCLUSIVE, SCHEMA, Node, Tree, step


def merge(dst: Tree, src: Tree, node: Node = SCHEMA) -> None:
    if node.key in EXCLUSIVE and src:
        dst.clear()
    for name, value in src.items():
        child = step(node, name)[1]
        if isinstance(value, dict) and isinstance(dst.get(name), dict):
            merge(dst[name], value, child)
        else:
            dst[name] = copy.deepcopy(value)


def remove(dst: Tree, src: Tree) -> None:
    for name, value in src.items():
        if name in dst:
            if isinstance(value, dict) and isinstance(dst[name], dict):
                remove(dst[name], value)
            else:  # null (or a value) names what goes
                del dst[name]


def nest(path: list[str], leaf: Any) -> Tree:
    tree: Any = leaf
    for word in reversed(path):
        tree = {word: tree}
    result: Tree = tree
    return result


def leaves(tree: Tree, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, value) per printable line: scalar leaves and bare maps (value None)."""
    for name, value in tree.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, (*path, name))
        else:
            yield (*path, name), None if isinstance(value, dict) else value


def _quote(word: object) -> str:
    text = str(word)
    if text and re.fullmatch(r"[\w@%+=:,./-]+", text):
        return text
    return f'"{text}"' if not re.search(r'["$`\\!]', text) else shlex.quote(text)


def commands(tree: Tree, verb: str = "set") -> list[str]:
    """`nv set` (or `nv unset`) lines of a tree, as `nv config show -o commands` prints them."""
    return [" ".join(["nv", verb, *map(_quote, path), *([] if value is None else [_quote(value)])])
            for path, value in leaves(tree)]


def diff(old: Tree, new: Tree) -> tuple[Tree, Tree]:
    """(unset, set) documents that turn `old` into `new`; a removed subtree is one unset, not one per leaf."""
    unset: Tree = {}
    set_: Tree = {}
    for name, before in old.items():
        if name not in new:
            unset[name] = None
        elif isinstance(before, dict) and isinstance(new[name], dict):
            u, s = diff(before, new[name])
            if u:
                unset[name] = u
            if s:
                set_[name] = s
        elif before != new[name]:
            set_[name] = copy.deepcopy(new[name])
    for name, after in new.items():
        if name not in old:
            set_[name] = copy.deepcopy(after)
    return unset, set_


def dig(tree: Any, *path: str) -> Any:
    for word in path:
        tree = tree.get(word) if isinstance(tree, dict) else None
    return tree


def breakout_qos_conflict(old: Tree, new: Tree) -> str | None:
    """The 5.14 caveat: a breakout change and a QoS change must not go in one apply (see the module docstring)."""
    ports = sorted(set(old.get("interface", {})) | set(new.get("interface", {})))
    changed = [p for p in ports if dig(old, "interface", p, "link", "breakout") != dig(new, "interface", p, "link",
                                                                                           "breakout")]
    qos = old.get("qos") != new.get("qos") or any(dig(old, "interface", p, "qos") != dig(new, "interface", p, "qos")
                                                  for p in ports)
    if not (changed and qos):
        return None
    return (f"Config invalid at interface.{changed[0]}.link.breakout: breakout of {', '.join(changed)} and QoS "
            "configuration change in the same apply; apply the breakout first (nv config apply), then the QoS "
            "configuration in a second apply")


def lab_hash(username: str, password: str) -> str:
    """A crypt-shaped stand-in for the account's SHA-512 hash (not crypt(3)); the salt is fixed per user so the
    same password gives the same config and re-applying it is not a change."""
    salt = hashlib.sha256(username.encode()).hexdigest()[:16]
    return f"$6${salt}${hashlib.sha512(f'{salt}{password}'.encode()).hexdigest()}"


def hash_passwords(tree: Tree) -> None:
    """NVUE keeps only the hash of `password`."""
    for name, user in (dig(tree, "system", "aaa", "user") or {}).items():
        if isinstance(user, dict) and "password" in user:
            user["hashed-password"] = lab_hash(name, str(user.pop("password")))
