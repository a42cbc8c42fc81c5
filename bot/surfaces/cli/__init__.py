"""The `gpu-advisor` command: ask, chat, estimate, kb, audit, doctor, serve (click)."""
