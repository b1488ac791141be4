"""The lab's NVIDIA Cumulus Linux emulator: NVUE over SSH, its revisions, schema and show commands."""
