"""What every cellboot command line shares with the operator.

``output`` (results on stdout, one ``ERROR:`` line on stderr, errors
told in the operator's words) and ``parsing`` (parsers whose errors are
one line, the shared exit codes). Used by the console scripts of
``cellboot.cmd``, the user CLI (``cellboot.cli``), ``cellboot
all-in-one`` and the daemons' runner (``cellboot.service_runner``); kept
out of ``cmd/`` so that those import a library, not an entry point.
"""
