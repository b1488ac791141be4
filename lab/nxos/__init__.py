"""The lab's Cisco NX-OS emulator: NX-API over HTTPS and the SSH CLI, its grammar and show commands."""
