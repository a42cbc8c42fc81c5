"""Surfaces: the only I/O layer: the `gpu-advisor` command (cli/) and the Slack app (slack/)."""
