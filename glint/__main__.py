"""`python -m glint ...` is the `glint` command."""
import sys

from .cli import main

sys.exit(main())
