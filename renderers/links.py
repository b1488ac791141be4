"""Routed fabric links between tiers: ports on both ends, a /31 or BGP unnumbered, and the BGP sessions."""

from __future__ import annotations

from collections.abc import Sequence

from rocefab.models.resolve import Role
from rocefab.renderers.drafts import PlanState, SwitchDraft, address
from rocefab.renderers.plan import BgpNeighbor, Endpoint, LinkKind, PortRole, SwitchPort
from rocefab.renderers.ports import AllocationError, Port

# BGP peer group a neighbor of each tier belongs to.
GROUP = {Role.SUPERSPINE: "SUPERSPINES", Role.SPINE: "SPINES", Role.LEAF: "LEAVES"}


def uplinks(state: PlanState, lower: SwitchDraft, ports: Sequence[Port], uppers: Sequence[SwitchDraft],
            per_upper: int) -> None:
    """Uplink i of a leaf (or spine) goes to the (i // per_upper)-th switch of the tier above."""
    purpose = f"downlink to {lower.name}"
    # BGP unnumbered where both ends support it: asked of the catalogue per upper switch, not per link
    lower_can = state.intent.underlay.unnumbered == "auto" and lower.model.spec.bgp_unnumbered
    upper_can: dict[str, bool] = {}
    for i, mine in enumerate(ports):
        upper = uppers[i // per_upper]
        theirs = upper.allocator.next_port(mine.speed_gbps, purpose)
        unnumbered = upper_can.get(upper.name)
        if unnumbered is None:
            unnumbered = upper_can[upper.name] = lower_can and upper.model.spec.bgp_unnumbered
        connect(state, lower, mine, upper, theirs, unnumbered)


def connect(state: PlanState, lower: SwitchDraft, mine: Port, upper: SwitchDraft, theirs: Port,
            unnumbered: bool) -> None:
    """A routed fabric link: BGP unnumbered if `unnumbered` (both ends support it), a /31 otherwise."""
    lower_ip = upper_ip = None
    if not unnumbered:
        net = state.intent.underlay.p2p_subnet
        if 2 * state.p2p_next + 1 >= net.num_addresses:
            raise AllocationError("address-pool-too-small", f"underlay.p2p_subnet {net} ran out of /31s",
                                  "use a larger p2p_subnet")
        upper_addr, lower_addr = address(net, 2 * state.p2p_next), address(net, 2 * state.p2p_next + 1)
        state.p2p_next += 1
        upper_ip, lower_ip = f"{upper_addr}/31", f"{lower_addr}/31"
    # Each name pair, endpoint and description is made once and shared by the port, the session and the link
    # that show it: records are never changed once made, and this runs for every fabric link (196,608 of them
    # in a 98,304-GPU fabric).
    lower_end, upper_end = Endpoint(lower.name, mine.name), Endpoint(upper.name, theirs.name)
    to_upper, to_lower = f"{upper.name} {theirs.name}", f"{lower.name} {mine.name}"
    lower.ports.append(SwitchPort(
        mine.name, mine.cage, PortRole.UPLINK, mine.speed_gbps, mine.lanes, mine.broken_out,
        upper_end, to_upper, lower_ip, unnumbered,
    ))
    upper.ports.append(SwitchPort(
        theirs.name, theirs.cage, PortRole.DOWNLINK, theirs.speed_gbps, theirs.lanes, theirs.broken_out,
        lower_end, to_lower, upper_ip, unnumbered,
    ))
    lower.neighbors.append(BgpNeighbor(
        upper.name, upper.asn, to_upper, GROUP[upper.role],
        mine.name if unnumbered else None, upper_ip.split("/")[0] if upper_ip else None,
    ))
    upper.neighbors.append(BgpNeighbor(
        lower.name, lower.asn, to_lower, GROUP[lower.role],
        theirs.name if unnumbered else None, lower_ip.split("/")[0] if lower_ip else None,
    ))
    state.link(LinkKind.FABRIC, lower_end, upper_end, mine.speed_gbps)
