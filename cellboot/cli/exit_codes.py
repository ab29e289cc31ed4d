"""Exit codes of ``cellboot``, for scripts (documented in docs/cli.md).

0 success; 1 an error of the API or of the command (the message says
which); 2 bad usage (arguments, URL, token); 3 not found; 4 the API
cannot be reached; 5 refused: missing or wrong token, or an admin-only
request; 6 bad request (the API refused the input); 7 ``--wait`` or the
demo ended with a server that is not ACTIVE.
"""

OK = 0
ERROR = 1
USAGE = 2
NOT_FOUND = 3
UNREACHABLE = 4
AUTH = 5
BAD_REQUEST = 6
NOT_ACTIVE = 7
