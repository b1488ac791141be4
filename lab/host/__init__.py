"""The lab's GPU hosts: a fake sysfs/proc under a folder, the host tools' stubs and their server, SSH."""
