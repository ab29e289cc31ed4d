"""The kinds of error every other is one of, by the HTTP code it means:
the base ``CellbootException`` (500), ``NotFound``, ``Forbidden``,
``Conflict`` and ``Invalid``.

A module of its own so that the modules defining errors
(``cellboot.exception`` and ``cellboot.exception.resources``) build on
these without importing each other; every one is named, and imported,
as ``cellboot.exception.X``.
"""

# The module every error is known by (see ``__init_subclass__``).
PUBLIC_MODULE = 'cellboot.exception'


class CellbootException(Exception):
    """Base of every cellboot error; ``str()`` is the operator message."""

    msg_fmt = 'An unknown error occurred.'
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                # A wrong format argument must never hide the real error.
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # Named ``cellboot.exception.X`` whichever of its modules defines
        # it: RPC callers look a remote error up by that name
        # (``cellboot.rpc.ALLOWED_REMOTE_EXMODS``), and pickles, logs and
        # notifications name it so.
        if cls.__module__.startswith(PUBLIC_MODULE + '.'):
            cls.__module__ = PUBLIC_MODULE


class NotFound(CellbootException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class Forbidden(CellbootException):
    msg_fmt = 'Forbidden.'
    code = 403


class Conflict(CellbootException):
    msg_fmt = 'Resource already exists.'
    code = 409


class Invalid(CellbootException):
    msg_fmt = 'Invalid input: %(reason)s'
    code = 400


CellbootException.__module__ = PUBLIC_MODULE
