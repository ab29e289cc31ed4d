"""BUILD timeouts: instances whose compute host never answered."""


class BuildTimeouts:
    """The cell conductor's check (being built)."""

    def __init__(self, manager):
        self.manager = manager

    def sweep_once(self, context):
        return {}
