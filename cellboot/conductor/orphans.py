"""Orphan build requests: accepted boots whose cast was lost."""


class OrphanBuildRequests:
    """The super conductor's check (being built)."""

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        return {}
