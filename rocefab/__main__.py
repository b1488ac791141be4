"""`python -m rocefab` runs the command line."""

from rocefab.cli import main

main()
