"""Alembic environment of the api database tree.

Run by ``cellboot.db.migration`` on a connection it has checked; the
tree records its revision in its own version table (see models).
"""

from alembic import context

from cellboot.db.api import models
from cellboot.db import migration

migration.run_environment(context, models.Base.metadata, models.VERSION_TABLE)
