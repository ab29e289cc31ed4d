"""Setting up cells: mapping them, and discovering their compute hosts.

``mappings`` maps cell0 and the cells, checks a new cell's URLs and bus,
deletes a cell and tells where an instance is mapped; ``discovery``
gives every compute host of a cell its host mapping. They are what
``cellboot-manage cell_v2`` runs, and what ``cellboot all-in-one`` and
the tests' deployments run to set up cells the way an operator does:
plain functions on a context, returning objects and raising domain
errors, that leave printing and exit codes to the command.
"""
