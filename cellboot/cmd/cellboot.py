"""``cellboot``: the user CLI (``cellboot.cli``) and ``all-in-one``."""

import sys

from cellboot.allinone import command as all_in_one
from cellboot import cli


def main(argv=None):
    return cli.main(argv, extra_commands=[all_in_one.register])


if __name__ == '__main__':
    sys.exit(main())
