"""Deploy: diff, dry-run, staged push and rollback of a rendered fabric, one `DeviceSession` per device."""
