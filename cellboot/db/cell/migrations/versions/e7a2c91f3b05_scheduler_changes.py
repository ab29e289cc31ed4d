"""The change feed of a cell's schedulers.

Revision ID: e7a2c91f3b05
Revises: d41c7e2a9b10
Create Date: 2026-12-06 17:50:00.000000

``scheduler_changes``: what the cell's schedulers claimed, released,
updated, and their build-failure counts, by sequence, so that each
scheduler of the cell learns the others' changes before its next
decision rather than at its next full reload (``cellboot.scheduler.
sync``). Empty at first; a scheduler starts from its tail.
"""

from alembic import op
import sqlalchemy as sa

revision = 'e7a2c91f3b05'
down_revision = 'd41c7e2a9b10'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'scheduler_changes',
        sa.Column('seq', sa.BigInteger().with_variant(sa.Integer, 'sqlite'),
                  primary_key=True, autoincrement=True),
        sa.Column('kind', sa.String(16), nullable=False),
        sa.Column('key', sa.String(36), nullable=False),
        sa.Column('value', sa.String(255), nullable=True),
        sa.Column('origin', sa.String(36), nullable=True),
        sa.Column('at', sa.Double, nullable=False),
        sqlite_autoincrement=True,
    )
