"""`python -m linsvm` runs the `linsvm` command group."""
from .cli import main

main()
