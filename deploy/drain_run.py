"""apply --drain: the switches whose change is beyond hitless go in waves of their own, the drain plan's steps;
around each such wave the switches are drained (and their neighbours read until the traffic has moved), then
committed and verified as any wave, then undrained (and the neighbours read until every path is back). A wave
that fails leaves its switches drained and says so; so does a drain or undrain whose routes do not agree in time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rocefab.deploy.drain import SessionFactory, set_maintenance, wait_for_neighbours, wait_until_quiet
from rocefab.deploy.fleet import WaveHooks
from rocefab.deploy.inventory import Access
from rocefab.renderers.plan import FabricPlan


def drain_waves(waves: Sequence[Sequence[str]], steps: Sequence[Sequence[str]]) -> list[list[str]]:
    """The rollout's waves with each drain step made a wave of its own, placed before the rest of the wave that
    held its first switch.

    >>> drain_waves([["leaf1-a", "leaf1-b"], ["gpu001"], ["spine1", "spine2"]], [["leaf1-a"], ["leaf1-b", "spine2"]])
    [['leaf1-a'], ['leaf1-b', 'spine2'], ['gpu001'], ['spine1']]
    """
    step_of = {name: i for i, step in enumerate(steps) for name in step}
    placed: set[int] = set()
    out: list[list[str]] = []
    for wave in waves:
        for name in wave:
            i = step_of.get(name)
            if i is not None and i not in placed:
                placed.add(i)
                out.append(list(steps[i]))
        rest = [name for name in wave if name not in step_of]
        if rest:
            out.append(rest)
    return out


def drain_hooks(plan: FabricPlan, accesses: Sequence[Access], sessions: SessionFactory, run_id: str,
                steps: Sequence[Sequence[str]], timeout_s: float, say: Callable[[str], None]) -> WaveHooks:
    """Drain before each drain step's wave, undrain after it passed; anything else is left as it is and said."""
    by_name = {a.name: a for a in accesses}
    draining = {tuple(step) for step in steps}

    def names(wave: Sequence[str]) -> str:
        return ", ".join(wave)

    def before(wave: Sequence[str]) -> str | None:
        if tuple(wave) not in draining:
            return None
        changed = set_maintenance([by_name[n] for n in wave], sessions, run_id, drain=True)
        drained = [c.name for c in changed if c.error is None]
        failed = [f"{c.name}: {c.error}" for c in changed if c.error is not None]
        if failed:
            left = f"; left drained: {', '.join(drained)} (rocefab undrain --only {','.join(drained)})" if drained \
                else ""
            return f"drain failed: {'; '.join(failed)}{left}"
        rows = wait_for_neighbours(plan, accesses, sessions, run_id, set(wave), set(wave), timeout_s)
        if any(r.failed for r in rows):
            late = "; ".join(f"{r.device} {r.port}: {r.observed} (expected {r.expected})" for r in rows if r.failed)
            return (f"drained {names(wave)}, but the neighbours' routes did not move within {timeout_s:g} s ({late}); "
                    f"left drained (rocefab undrain --only {','.join(wave)})")
        say(f"drained {names(wave)}: " + (f"{len(rows)} route(s) on {len({r.device for r in rows})} neighbour(s) moved"
                                          if rows else "no planned route runs through it: nothing to move"))
        quiet = wait_until_quiet(plan, accesses, sessions, run_id, set(wave), timeout_s)
        if any(r.failed for r in quiet):
            busy = "; ".join(f"{r.device}: {r.observed}" for r in quiet if r.failed)
            return (f"drained {names(wave)} and the routes moved, but the lossless queue was not quiet within "
                    f"{timeout_s:g} s ({busy}); left drained (rocefab undrain --only {','.join(wave)})")
        for r in quiet:
            say(f"{r.device}: lossless queue {'quiet' if r.verdict.value == 'pass' else 'not judged'}: {r.observed} "
                f"(expected {r.expected})")
        return None

    def after(wave: Sequence[str], passed: bool) -> str | None:
        if tuple(wave) not in draining:
            return None
        if not passed:
            return (f"left drained: the wave did not pass; rocefab undrain --only {','.join(wave)} once the "
                    "switch is as it should be")
        changed = set_maintenance([by_name[n] for n in wave], sessions, run_id, drain=False)
        failed = [f"{c.name}: {c.error}" for c in changed if c.error is not None]
        if failed:
            return f"committed and verified, but undrain failed: {'; '.join(failed)}"
        rows = wait_for_neighbours(plan, accesses, sessions, run_id, set(wave), set(), timeout_s)
        if any(r.failed for r in rows):
            late = "; ".join(f"{r.device} {r.port}: {r.observed} (expected {r.expected})" for r in rows if r.failed)
            return f"committed, verified and undrained, but the neighbours' routes are not all back: {late}"
        say(f"undrained {names(wave)}: " + (f"{len(rows)} route(s) on {len({r.device for r in rows})} neighbour(s) back"
                                            if rows else "no planned route runs through it: nothing to bring back"))
        return None

    return WaveHooks(before, after)
