"""What endpoint classes share: declaring the errors callers expect.

oslo.messaging logs every exception an endpoint raises as a server-side
failure, with its traceback, unless the method declares it expected. A
scheduler answering NoValidHost is doing its job, so its endpoint
declares the domain errors a caller is meant to handle. oslo.messaging's
own decorator hides the method's signature; this one keeps it, so that
the method can still be read (and checked against docs/rpc.md).
"""

import functools

import oslo_messaging


def expected_errors(*errors):
    """Declare ``errors`` expected: sent back as themselves, logged once."""

    def decorate(method):
        wrapped = oslo_messaging.expected_exceptions(*errors)(method)
        return functools.wraps(method)(wrapped)

    return decorate
