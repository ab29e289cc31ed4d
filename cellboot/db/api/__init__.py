"""The API database: models, migrations and its transaction context."""
