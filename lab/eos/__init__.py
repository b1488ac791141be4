"""The lab's Arista EOS emulator: eAPI over HTTP(S), its CLI grammar, sessions and show commands."""
