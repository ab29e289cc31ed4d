"""Console-script entry points; each sub-package is one command.

Importing TaskFlow imports eventlet (if installed), which warns on
stderr that it is deprecated. A command's stderr is for the operator's
errors, and we never use eventlet, so that one warning is silenced here,
before any command imports TaskFlow.
"""

import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
