"""argparse types the command lines share (the CLI's and the benchmarks').

One wording for a refused value, so that a script's user reads the same
error whichever command refused it.
"""

import argparse


def _at_least(text, minimum):
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(f'must be a whole number of at '
                                         f'least {minimum}, not {text!r}')
    return value


def positive_int(text):
    """A whole number of at least 1, for ``add_argument(type=...)``."""
    return _at_least(text, 1)


def non_negative_int(text):
    """A whole number of at least 0, for ``add_argument(type=...)``."""
    return _at_least(text, 0)


def seconds_at_least(minimum):
    """A type for a duration in seconds of at least ``minimum``."""
    def seconds(text):
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is None or not value >= minimum or value == float('inf'):
            raise argparse.ArgumentTypeError(
                f'must be a number of seconds of at least {minimum:g}, '
                f'not {text!r}')
        return value
    return seconds
