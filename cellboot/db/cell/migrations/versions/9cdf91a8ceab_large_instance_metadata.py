"""Instance metadata in MEDIUMTEXT on MySQL.

Revision ID: 9cdf91a8ceab
Revises: c84b45172373
Create Date: 2026-11-24 01:30:00.000000

``instances.metadata`` holds a server's metadata as JSON with every
character outside ASCII escaped: metadata the API accepts (128 keys
and values of 255 characters) can need more than TEXT's 64 KiB on
MySQL/MariaDB, and the instance then cannot be created in its cell (nor
buried in cell0). MEDIUMTEXT (16 MiB) holds any of it. Other backends'
text columns have no such limit and are left as they are.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '9cdf91a8ceab'
down_revision = 'c84b45172373'
branch_labels = None
depends_on = None


def upgrade():
    if op.get_bind().dialect.name != 'mysql':
        return
    op.alter_column('instances', 'metadata', type_=mysql.MEDIUMTEXT(),
                    existing_type=sa.Text(), existing_nullable=True)
