"""Where a rail leaf's host /31s live: one aligned block per leaf inside its rail's slice of `host_subnet`, so that
one prefix (the leaf's BGP aggregate) covers exactly that leaf's host links and no other leaf's.

Within rail r's slice, leaf block b (its place in the rail over all pods) starts at b x `block_size` addresses;
server i of the leaf takes the /31 at offset 2i (leaf side first, the NIC second). The block holds as many /31s as
the leaf has host ports, rounded up to a power of two, so it is aligned and its addresses do not move when servers
are added later. When servers per leaf are a power of two, the blocks sit back to back.
"""

from __future__ import annotations

from ipaddress import IPv4Network


def block_size(nodes_per_leaf: int) -> int:
    """Addresses in one leaf's block: a /31 for each of its servers, rounded up to a power of two.

    >>> block_size(64), block_size(48), block_size(1)
    (128, 128, 2)
    """
    return 1 << (2 * nodes_per_leaf - 1).bit_length()


def leaf_block(rail_slice: IPv4Network, block: int, nodes_per_leaf: int) -> IPv4Network:
    """The aligned block of leaf `block` of a rail.

    >>> str(leaf_block(IPv4Network("10.128.0.0/15"), 3, 64))
    '10.128.1.128/25'
    """
    size = block_size(nodes_per_leaf)
    return IPv4Network((int(rail_slice.network_address) + block * size, 33 - size.bit_length()))


def aggregate(block: IPv4Network, hosts: int) -> IPv4Network:
    """The smallest prefix covering the /31s of a leaf's first `hosts` servers: the block's start is aligned to the
    block, so also to any smaller power of two.

    >>> str(aggregate(IPv4Network("10.128.1.128/25"), 64)), str(aggregate(IPv4Network("10.128.1.128/25"), 3))
    ('10.128.1.128/25', '10.128.1.128/29')
    """
    assert 0 < 2 * hosts <= block.num_addresses, "the leaf's servers fit its block"
    return IPv4Network((int(block.network_address), 33 - block_size(hosts).bit_length()))
