"""`python -m bot` is `gpu-advisor`."""
from bot.surfaces.cli.main import main

main()
