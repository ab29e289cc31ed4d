"""Build requests and request specs in MEDIUMTEXT on MySQL.

Revision ID: 237bf1d57ee6
Revises: 9723f953f734
Create Date: 2026-11-24 01:30:00.000000

``build_requests.instance`` holds a server's metadata and
``request_specs.spec`` its scheduler hints, as JSON with every
character outside ASCII escaped: a request the API accepts can need
more than TEXT's 64 KiB on MySQL/MariaDB, and the row then cannot be
written. MEDIUMTEXT (16 MiB) holds any of them. Other backends' text
columns have no such limit and are left as they are.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '237bf1d57ee6'
down_revision = '9723f953f734'
branch_labels = None
depends_on = None

_COLUMNS = (('build_requests', 'instance'), ('request_specs', 'spec'))


def upgrade():
    if op.get_bind().dialect.name != 'mysql':
        return
    for table, column in _COLUMNS:
        op.alter_column(table, column, type_=mysql.MEDIUMTEXT(),
                        existing_type=sa.Text(), existing_nullable=False)
