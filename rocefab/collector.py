"""Keep Python's cycle collector out of the way while the command line builds and renders a plan.

Planning a 1,024-node fabric allocates some half a million long-lived objects (ports, links, addresses)
and rendering it as many short-lived strings; none of them form reference cycles, so reference counting
frees everything. Left on, the collector walks the whole growing plan again and again: a third of the
planning time of a 4,096-node fabric. The command line pauses it for those phases. On the way out, what
exists is moved to the permanent generation (`gc.freeze`), or the first collection after the pause would
walk it all once more; reference counting still frees those objects as usual.

This is a policy for a short-lived process, so it lives here and not in the library: a long-running
caller of `renderers` keeps its own collector settings.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
