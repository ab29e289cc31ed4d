"""argparse types the command lines share (the CLI's and the benchmarks').

One wording for a refused value, so that a script's user reads the same
error whichever command refused it.
"""

import argparse


def positive_int(text):
    """A whole number of at least 1, for ``add_argument(type=...)``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f'must be a whole number of at '
                                         f'least 1, not {text!r}')
    return value
