"""Database access: one enginefacade per database kind (DESIGN §3)."""
