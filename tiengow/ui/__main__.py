"""``python -m tiengow.ui play ...`` (the ``tiengow play`` and ``show`` commands)."""

import sys

from . import main

sys.exit(main())
