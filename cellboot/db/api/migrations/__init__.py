"""The api database's alembic tree (driven by cellboot.db.migration)."""
