"""`rocefab lab fault`: break a running lab the way fabrics break, and mend it again.

Faults are of two kinds. Some are what a person does at a device's CLI (an MTU set by hand, a port that lost its
lossless profile, a NIC switched to PCP trust): the emulator's config or the fake host's state changes, so a
`rocefab diff` sees them too. Others live in the cabling and optics (a pulled cable, two cables swapped, an optic
training at a lower speed, a BGP peer that stops answering): only the devices' operational state shows them.
`clear` returns every device to its state before the first fault, and the wiring to the plan's.

The lab process serves these over a Unix socket in the lab folder (one JSON request per connection), so the
command line can reach the emulators it does not run itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import socketserver
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocefab.lab.wiring import Wiring

SOCKET = "control.sock"
MAX_REQUEST_BYTES = 64 * 1024


class FaultError(ValueError):
    """A fault that cannot be made: an unknown kind, a device or port the lab does not have, a bad value."""


@dataclass(frozen=True, slots=True)
class FaultKind:
    name: str
    args: tuple[str, ...]  # argument names, for the usage line
    on_switch: bool
    on_host: bool
    # A fault of the management plane, made for a deploy run to meet: `clear` mends only the reachability, never
    # the device's config (what a run committed meanwhile stays, a commit awaiting its confirm stays pending).
    deploy: bool = False


KINDS = {k.name: k for k in (
    FaultKind("mtu", ("PORT|NETDEV", "BYTES"), True, True),  # set an interface's MTU by hand
    FaultKind("pfc-off", ("PORT",), True, False),  # take PFC off a switch port (NVUE: off the RoCE priority)
    FaultKind("speed", ("PORT", "GBPS"), True, False),  # the port's optic trains at a lower speed
    FaultKind("link-down", ("PORT",), True, False),  # pull the port's cable
    FaultKind("miscable", ("PORT", "PORT"), True, False),  # swap the cables of two ports
    FaultKind("bgp-down", ("PEER",), True, False),  # the BGP session to PEER (a device name) stops answering
    FaultKind("trust-pcp", ("NETDEV",), False, True),  # the NIC trusts PCP instead of DSCP (mlnx_qos --trust pcp)
    FaultKind("ecn-off", ("NETDEV",), False, True),  # DCQCN off: every ECN enable of the NIC written 0
    FaultKind("global-pause", ("NETDEV",), False, True),  # 802.3x global pause on (ethtool -A rx on tx on)
    FaultKind("dscp-map", ("DSCP", "PRIORITY"), True, False),  # map a DSCP to another priority (NVUE switches)
    FaultKind("nic-dscp-map", ("NETDEV", "DSCP", "PRIORITY"), False, True),  # the NIC maps a DSCP to another priority
    FaultKind("strict-off", ("PRIORITY",), True, False),  # the queue of PRIORITY leaves strict priority
    FaultKind("unreachable", (), True, True),  # the management address stops answering
    FaultKind("pause-storm", ("PORT",), True, False),  # the far end of PORT pauses it without end
    FaultKind("drops", ("PORT",), True, False),  # the lossless queue of PORT drops packets
    FaultKind("errors", ("PORT",), True, False),  # PORT receives corrupted frames (0.01 % of packets)
    # the far end of PORT pauses it without end and PORT's PFC watchdog keeps shutting the queue
    FaultKind("watchdog-storm", ("PORT",), True, False),
    FaultKind("ecn-marks", ("PORT",), True, False),  # PORT's egress is congested: 5 % of its RoCE packets ECN-marked
    FaultKind("bond-leave", ("NETDEV",), False, True),  # a port leaves its bond (ip link set nomaster)
    FaultKind("no-address", ("NETDEV",), False, True),  # the interface loses its addresses (ip address flush)
    FaultKind("tos-reset", ("RDMA_DEVICE",), False, True),  # rdma_cm's default ToS back to 0, as after a driver reload
    FaultKind("nccl-set", ("KEY=VALUE",), False, True),  # a site line at the top of /etc/nccl.conf overrides a key
    FaultKind("firmware", ("NETDEV", "VERSION"), False, True),  # the NIC card of NETDEV runs another firmware release
    FaultKind("peermem-unload", (), False, True),  # nvidia_peermem unloaded (GPUDirect RDMA off)
    FaultKind("retransmits", ("RDMA_DEVICE",), False, True),  # the RDMA device retransmits 0.1 % of what it sends
    FaultKind("host-pause-storm", ("NETDEV",), False, True),  # the NIC port pauses its leaf without end
    # the switch stops answering when a commit's confirm arrives, before running it: the commit stays pending
    FaultKind("lose-confirm", (), True, False, deploy=True),
    # a commit awaiting its confirm reverts now, as when its window closes (nothing pending: nothing happens)
    FaultKind("expire-confirm", (), True, False, deploy=True),
    # the management connection is lost when a command matching PATTERN arrives (unrun); silent until --clear
    FaultKind("drop-at", ("PATTERN",), True, True, deploy=True),
    FaultKind("delay", ("SECONDS",), True, True, deploy=True),  # every answer this much later
    FaultKind("reject", ("PATTERN",), True, False, deploy=True),  # config matching PATTERN refused as invalid
    FaultKind("wrong-password", (), True, True, deploy=True),  # every login refused, as after a password change
)}


def usage() -> str:
    return "; ".join(f"{k.name} {' '.join(k.args)}" for k in KINDS.values())


@dataclass
class FaultBook:
    """The faults made so far in one lab, and each device's state from before the first of them."""

    wiring: Wiring
    pristine: Wiring
    emulators: dict[str, Any]
    roce_priority: int
    made: list[str] = field(default_factory=list)
    snapshots: dict[str, object] = field(default_factory=dict)
    reached: set[str] = field(default_factory=set)  # devices with a deploy fault: `clear` mends their reachability
    lock: threading.Lock = field(default_factory=threading.Lock)

    def make(self, device: str, kind: str, args: list[str]) -> str:
        spec = KINDS.get(kind)
        if spec is None:
            raise FaultError(f"no fault kind {kind!r}; kinds: {usage()}")
        if device not in self.emulators:
            raise FaultError(f"the lab has no device {device!r}")
        emulator = self.emulators[device]
        is_host = not hasattr(emulator, "bgp_speaker")
        if (is_host and not spec.on_host) or (not is_host and not spec.on_switch):
            raise FaultError(f"{kind} is a {'switch' if spec.on_switch else 'host'} fault; {device} is a "
                             f"{'host' if is_host else 'switch'}")
        if len(args) != len(spec.args):
            raise FaultError(f"usage: {kind} {' '.join(spec.args)}")
        with self.lock:
            if spec.deploy:
                self.reached.add(device)
            elif device not in self.snapshots:
                self.snapshots[device] = emulator.snapshot()
            said = self._make(device, emulator, kind, args)
            self.made.append(f"{device} {kind} {' '.join(args)}".strip())
        return said

    def _make(self, device: str, emulator: Any, kind: str, args: list[str]) -> str:
        number = _number(args[1], kind) if kind in ("mtu", "speed") else 0
        try:
            if kind in ("pause-storm", "drops", "errors", "watchdog-storm", "ecn-marks"):
                if self.wiring.peer(device, args[0]) is None:
                    raise FaultError(f"{device} {args[0]} has no cable in this lab")
                {"pause-storm": self.wiring.counters.storm, "drops": self.wiring.counters.drop,
                 "errors": self.wiring.counters.error, "watchdog-storm": self.wiring.counters.watchdog,
                 "ecn-marks": self.wiring.counters.congest}[kind]((device, args[0]))
                said = {"pause-storm": "its link partner pauses it without end", "drops": "its lossless queue drops",
                        "errors": "it receives corrupted frames",
                        "watchdog-storm": "a pause storm its PFC watchdog keeps shutting the lossless queue for",
                        "ecn-marks": "its egress is congested and marks ECN"}[kind]
                return f"{device} {args[0]}: {said}"
            if kind == "unreachable":
                emulator.reach.down = True
                return f"{device} stops answering on its management address"
            if kind == "lose-confirm":
                emulator.reach.down_on, emulator.reach.down_after = emulator.CONFIRM_COMMAND, False
                return f"{device} stops answering when a commit's confirm arrives; the commit stays pending"
            if kind == "expire-confirm":
                return str(emulator.expire_pending_now())
            if kind == "drop-at":
                re.compile(args[0])
                emulator.reach.down_on, emulator.reach.down_after = args[0], False
                return f"{device} stops answering when a command matching {args[0]!r} arrives"
            if kind in ("delay", "reject", "wrong-password"):
                value = args[0] if args else ""
                if kind == "delay" and not 0 <= float(value) <= 600:
                    raise FaultError("delay: SECONDS from 0 to 600")
                if kind == "reject":
                    re.compile(value)
                emulator.KNOBS.make(emulator, kind, value)
                return {"delay": f"{device}: every answer {value} s late",
                        "reject": f"{device}: config matching {value!r} refused as invalid",
                        "wrong-password": f"{device}: every login refused, as after a password change"}[kind]
            if kind == "dscp-map":
                return str(emulator.set_dscp(_number(args[0], kind, low=0), _number(args[1], kind, low=0)))
            if kind == "strict-off":
                return str(emulator.strict_off(_number(args[0], kind, low=0)))
            if kind == "nic-dscp-map":
                _number(args[1], kind, low=0), _number(args[2], kind, low=0)
                return str(emulator.host_fault("dscp-map", args))
            if kind == "mtu":
                return str(emulator.set_mtu(args[0], number))
            if kind == "pfc-off":
                return str(emulator.pfc_off(args[0], self.roce_priority))
            if kind == "speed":
                self.wiring.slow(device, args[0], number)
                return f"{device} {args[0]} trains at {number}G"
            if kind == "link-down":
                self.wiring.pull(device, args[0])
                return f"cable out of {device} {args[0]}"
            if kind == "miscable":
                self.wiring.swap(device, args[0], args[1])
                return f"cables of {device} {args[0]} and {args[1]} swapped"
            if kind == "bgp-down":
                if args[0] not in self.emulators:
                    raise FaultError(f"the lab has no device {args[0]!r}")
                self.wiring.bgp_down.add((device, args[0]))
                return f"BGP between {device} and {args[0]} stops answering"
            said = str(emulator.host_fault(kind, args))
            far = self.wiring.peer(device, args[0]) if kind == "host-pause-storm" else None
            if far is not None:  # the NIC's pause frames arrive at its leaf's port
                self.wiring.counters.storm(far)
            return said
        except FaultError:
            raise
        except re.error as exc:
            raise FaultError(f"{kind}: not a regular expression: {exc}") from None
        except ValueError as exc:
            raise FaultError(str(exc)) from None
        except AttributeError:  # the emulator of this platform does not model that change
            raise FaultError(f"{kind} is not modelled for {device}'s platform in the lab") from None

    def clear(self) -> str:
        with self.lock:
            for device, snapshot in self.snapshots.items():
                self.emulators[device].restore(snapshot)
            for device in self.reached:  # the management plane as it was; the config as it is now
                emulator = self.emulators[device]
                emulator.reach.clear()
                if hasattr(emulator, "KNOBS"):
                    emulator.KNOBS.clear(emulator)
            self.wiring.clear(self.pristine)
            count = len(self.made)
            self.made.clear()
            self.snapshots.clear()
            self.reached.clear()
        return f"cleared {count} fault(s)"


def _number(text: str, kind: str, *, low: int = 1) -> int:
    if not text.isdigit() or not low <= int(text) < 1_000_000:
        raise FaultError(f"{kind}: {text!r} is not a whole number from {low}")
    return int(text)


# -- the socket ----------------------------------------------------------------------------------------------------
def serve(folder: Path, book: FaultBook) -> Callable[[], None]:
    """Serve `book` on folder/control.sock in a thread; the returned function stops it."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            raw = self.rfile.readline(MAX_REQUEST_BYTES)
            try:
                request = json.loads(raw)
                if request.get("clear"):
                    reply = {"ok": True, "said": book.clear()}
                else:
                    said = book.make(str(request["device"]), str(request["kind"]), [str(a) for a in request["args"]])
                    reply = {"ok": True, "said": said}
            except FaultError as exc:
                reply = {"ok": False, "error": str(exc)}
            except (ValueError, KeyError, TypeError):
                reply = {"ok": False, "error": "malformed request"}
            self.wfile.write(json.dumps(reply).encode() + b"\n")

    path = folder / SOCKET
    path.unlink(missing_ok=True)
    server = socketserver.ThreadingUnixStreamServer(str(path), Handler)
    os.chmod(path, 0o600)  # noqa: PTH101 - only the lab's owner may break it
    thread = threading.Thread(target=server.serve_forever, name="lab-control", daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()

    return stop


def request(folder: Path, body: dict[str, Any], timeout_s: float = 30) -> dict[str, Any]:
    """Send one request to the lab served from `folder`; its reply."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(folder / SOCKET))
        sock.sendall(json.dumps(body).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    reply: dict[str, Any] = json.loads(data)
    return reply
