"""The planner's network arithmetic is ipaddress's, for every IPv4 interface."""

from __future__ import annotations

from ipaddress import IPv4Address, ip_interface

from hypothesis import given
from hypothesis import strategies as st

from rocefab.renderers.plan import network_of


@given(st.integers(0, 2**32 - 1), st.integers(0, 32))
def test_network_of_is_ipaddress(address: int, length: int) -> None:
    interface = f"{IPv4Address(address)}/{length}"
    assert network_of(interface) == str(ip_interface(interface).network)
