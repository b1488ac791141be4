"""A run imports its device drivers and readers before its worker threads start (deploy/preload.py): two workers
importing NAPALM, netmiko and paramiko for the first time at once can deadlock on their import locks, and a device
whose session met that was reported unreadable (seen as a rare read failure of the mixed lab under load). Each
check runs in a fresh interpreter, where nothing is imported yet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

MODULES = ["napalm", "netmiko", "paramiko", "pyeapi", *(f"rocefab.platforms.{kind}.{name}" for kind in
           ("eos", "nxos", "cumulus", "host") for name in ("session", "observe", "counters"))]


def fresh(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_fleet_imports_its_kinds_drivers_in_the_thread_that_builds_it() -> None:
    fresh(f"""
        import sys, threading
        from pathlib import Path
        from rocefab.deploy.fleet import Fleet, Target
        from rocefab.deploy.inventory import Access, Secret, Transport
        from rocefab.deploy.targets import open_session
        assert "napalm" not in sys.modules and "paramiko" not in sys.modules
        def access(name, kind, transport):
            return Access(name, kind, "127.0.0.1", transport, 1, 1, "u", Secret("p"), "https", True, None, True,
                          Path("known_hosts"), 5, False)
        kinds = [("eos", Transport.EAPI), ("nxos", Transport.NXAPI), ("cumulus", Transport.NVUE_SSH),
                 ("host", Transport.SSH)]
        targets = [Target(access(kind, kind, transport), "") for kind, transport in kinds]
        Fleet(targets, open_session)
        assert threading.active_count() == 1
        missing = [m for m in {MODULES!r} if m not in sys.modules]
        assert not missing, missing
    """)


def test_verify_imports_its_kinds_drivers_before_its_workers() -> None:
    fresh(f"""
        import sys
        from pathlib import Path
        from rocefab.deploy.inventory import Access, Secret, Transport
        from rocefab.deploy.verify import run
        seen = {{}}
        def sessions(access, run_id):  # what a worker meets first: which modules are there by then
            seen[access.name] = [m for m in {MODULES!r} if m not in sys.modules]
            raise RuntimeError("no device here")
        def access(name, kind, transport):
            return Access(name, kind, "127.0.0.1", transport, 1, 1, "u", Secret("p"), "https", True, None, True,
                          Path("known_hosts"), 5, False)
        from rocefab.renderers.pipeline import check_file
        plan = check_file(Path("intents/lab.yaml"), "t").plan
        accesses = [access("spine1", "cumulus", Transport.NVUE_SSH), access("leaf1-a", "eos", Transport.EAPI),
                    access("gpu001", "host", Transport.SSH)]
        run.read_fleet(plan, accesses, sessions, "run")
        assert seen and all(m.startswith(("napalm", "netmiko", "rocefab.platforms.nxos")) for v in seen.values()
                            for m in v), seen
    """)
