"""What a build was sent with, kept for sending it again.

Revision ID: 5e1c0a7d2b3f
Revises: 9cdf91a8ceab
Create Date: 2026-11-24 07:40:00.000000

``instances.build_args`` holds, as JSON, what the last
``build_and_run_instance`` of a build carried besides the instance (the
alternates, the request spec, the retry state), and
``instances.build_recasts`` how often the cell conductors have sent it
again to the same host: a cast that a broker lost is re-sent, or the
build moved to an alternate, from these alone, since a cell conductor
reads only its cell's database (``cellboot.conductor.untaken_builds``).
MEDIUMTEXT on MySQL/MariaDB, like ``metadata``, because the request spec
carries the server's metadata and hints. Rows written before this
revision have none: their builds are re-sent without alternates.
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

revision = '5e1c0a7d2b3f'
down_revision = '9cdf91a8ceab'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column(
            'build_args',
            sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mysql', 'mariadb'),
            nullable=True))
        batch.add_column(sa.Column('build_recasts', sa.Integer,
                                   nullable=False, server_default='0'))
