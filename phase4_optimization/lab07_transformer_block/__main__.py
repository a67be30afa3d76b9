import sys

from .lab import main

sys.exit(main())
