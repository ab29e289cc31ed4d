"""Database access: the API, cell and flow databases, and how to reach them.

The API and cell databases go through oslo.db's enginefacade; TaskFlow's
flow database has a plain SQLAlchemy engine of its own (``flow_db``, which
says why). docs/architecture.md describes the three kinds.
"""
