"""``python -m cellboot.cmd.manage``: the same as ``cellboot-manage``."""

import sys

from cellboot.cmd.manage import main

sys.exit(main())
