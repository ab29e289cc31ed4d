"""Cell databases: models, migrations and their transaction contexts."""
