"""The `gpu-advisor` command: ask, chat, estimate, kb, audit, doctor, serve (click)."""

# -h is --help on every command and group. Set on each group that is defined apart (audit, slack), not only inherited
# from `gpu-advisor`'s context: click keeps a command's help option once built, so a group first run on its own (as
# the tests of bot/surfaces/cli/audit.py do) would keep a --help-only option.
HELP = {"help_option_names": ["-h", "--help"]}
