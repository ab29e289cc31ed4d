"""What a server's owner may read about why its build failed.

A fault has two readers. Its owner reads ``message``: one of the fixed
sentences below, which say what happened in the owner's terms and never
name a host, a cell, an exception class or a database error. An
administrator also reads ``details``: the failure as the services saw
it (the host, the driver's reason, the last failure of a reschedule).
Every writer of a fault goes through ``describe``, so the split is made
once, where the fault is written.

Faults written by earlier versions of cellboot kept the operator's text
in ``message``. ``for_user`` is what the API shows a user of any fault:
a message that is one of these sentences as it is, any other one read
by what it starts with, or by its code, into one of them. Old rows
therefore need no migration to be safe, and neither do the rows that an
older service still writes during a rolling upgrade.
"""

from cellboot import exception

NO_VALID_HOST = ('No valid host was found. There are not enough hosts '
                 'available.')
RETRIES_EXCEEDED = ('Exceeded maximum number of retries. Exhausted all '
                    'hosts available for retrying build failures.')
BUILD_ABORTED = 'The build was aborted: it cannot succeed on any host.'
BUILD_INTERRUPTED = ('The build was interrupted: the host building the '
                     'server restarted.')
BUILD_TIMED_OUT = 'The build did not finish in time.'
BUILD_NOT_FINISHED = 'The build could not be finished.'
# An operator gave up on the build's flow (``flowrun.abandoning``).
BUILD_ABANDONED = 'The build was abandoned by an operator.'
INTERNAL_ERROR = ('The server could not be built because of an internal '
                  'error.')

# What an owner reads of the events of a server's actions that say why
# its build went elsewhere (``for_event``); the services' own words are
# the events' details, for administrators.
HOST_FAILED = 'The build failed on the host chosen for it.'
RESCHEDULED = ('The build failed on a host and was retried on another '
               'host.')
HANDED_BACK = ('No host of this cell could build the server; it was '
               'handed back to be tried in another cell.')
NOT_TAKEN = ('The host chosen for the build did not take it; the build '
             'was rescheduled.')
RECAST = 'The build was sent to its host again.'

# A request refused for what it asks (``exception.BuildRefused``): its
# sentence names what, from the door's fixed list, and is shown as it is.
REFUSED = 'The request asks for what this cloud cannot build: '

MESSAGES = frozenset({NO_VALID_HOST, RETRIES_EXCEEDED, BUILD_ABORTED,
                      BUILD_INTERRUPTED, BUILD_TIMED_OUT, BUILD_NOT_FINISHED,
                      BUILD_ABANDONED, INTERNAL_ERROR})

# Which sentence an error of a class becomes (the first match wins:
# subclasses first).
_BY_CLASS = (
    (exception.MaxRetriesExceeded, RETRIES_EXCEEDED),
    (exception.NoValidHost, NO_VALID_HOST),
    (exception.HostMappingNotFound, NO_VALID_HOST),
    (exception.BuildAbortedFailure, BUILD_ABORTED),
)

# How the operator's texts of this and earlier versions start, and the
# sentence each stands for. Matched against a failure that lost its
# class (a persisted flow's) and against old faults' messages.
_BY_START = (
    ('Exceeded maximum number of retries', RETRIES_EXCEEDED),
    ('No valid host was found', NO_VALID_HOST),
    ('Build timed out', BUILD_TIMED_OUT),
    ('The boot flow ', BUILD_NOT_FINISHED),
    ('An operator (', BUILD_ABANDONED),
)
# ... and what they hold further on.
_BY_CONTENT = (
    (' aborted: ', BUILD_ABORTED),
    (' restarted while building', BUILD_INTERRUPTED),
    (' is not mapped to any cell', NO_VALID_HOST),
)


def _by_text(text):
    text = str(text or '')
    if text in MESSAGES or text.startswith(REFUSED):
        return text
    for start, message in _BY_START:
        if text.startswith(start):
            return message
    for part, message in _BY_CONTENT:
        if part in text:
            return message
    return None


def for_user(code, message):
    """The message of a fault (code, message) fit for its owner."""
    return _by_text(message) or (NO_VALID_HOST if code == 400
                                 else INTERNAL_ERROR)


def describe(error, message=None):
    """``(code, message, details)`` of the fault for ``error``.

    ``error`` is an exception or an operator's text; ``message``, when
    given, is the owner's sentence (one of this module's). ``details``
    is the whole operator's text, for administrators.
    """
    details = str(error)
    code = getattr(error, 'code', None) or 500
    if message is None:
        for cls, sentence in _BY_CLASS:
            if isinstance(error, cls):
                message = sentence
                break
    if message is None:
        message = for_user(code, details)
    return code, message, details


def for_event(sentence, failed, details):
    """What an action event's owner reads of why it happened, or None.

    ``sentence`` is the event's own (one of this module's, chosen by the
    caller for the event's name), ``failed`` whether its result is an
    error. A failed event without one reads as a fault would
    (``for_user`` of its details); an event that went well says nothing
    more unless it has a sentence.
    """
    if sentence is not None:
        return sentence
    if failed:
        return for_user(None, details)
    return None
