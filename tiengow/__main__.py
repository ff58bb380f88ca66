"""``python -m tiengow ...``: the ``tiengow`` command, also where its script is not on PATH."""

import sys

from tiengow.cli import main

sys.exit(main())
