"""A local device lab: stateful emulators on 127.0.0.1 that speak each platform's real protocol, so NAPALM,
netmiko and SSH clients run unpatched against them."""
