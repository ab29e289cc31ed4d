"""The named rows of the host states: resource classes and traits.

A ``HostStates`` keeps one row per resource class in its resource
arrays and one boolean row per trait in ``has_trait``. Which rows exist
is learnt from the hosts: VCPU, MEMORY_MB and DISK_GB are rows 0 to 2
from the start (``host_batch.BASE_CLASSES``), and a class or trait gets
a row the first time an inventory or a host names it, so a fleet of
three classes and no trait pays for nothing more. Rows are only ever
appended: a row number, once given, stays valid (the memoized masks
keyed by it too) until the next full load builds new states.
"""

import numpy as np

from cellboot.scheduler import host_batch

RESOURCE_ARRAYS = host_batch.RESOURCE_COLUMNS + ('free', 'cell_free')


class NamedRows:
    """Mixin of ``HostStates``: its class and trait rows."""

    def _init_rows(self):
        self.classes = list(host_batch.BASE_CLASSES)
        self.rc_position = {rc: i for i, rc in enumerate(self.classes)}
        self.traits = []
        self.trait_position = {}
        self.has_trait = np.zeros((0, 0), dtype=bool)

    def add_classes(self, names):
        """Give each resource class of ``names`` not known yet a row:
        no host has any of it until an inventory says so."""
        new = [rc for rc in dict.fromkeys(names) if rc not in self.rc_position]
        if not new:
            return
        for rc in new:
            self.rc_position[rc] = len(self.classes)
            self.classes.append(rc)
        for name in RESOURCE_ARRAYS:
            values = getattr(self, name)
            setattr(self, name, np.concatenate(
                [values, np.zeros((len(new), values.shape[1]))]))
        self._memo.clear()

    def _aligned(self, columns):
        """``columns`` (``host_batch.Columns``) with this object's rows."""
        self.add_classes(columns.classes)
        if columns.classes == self.classes:
            return dict(columns)
        rows = [self.rc_position[rc] for rc in columns.classes]
        aligned = {}
        for name, values in columns.items():
            full = np.zeros((len(self.classes), values.shape[1]))
            full[rows] = values
            aligned[name] = full
        return aligned

    def add_traits(self, names):
        """Give each trait of ``names`` not known yet a row (no host)."""
        new = [t for t in dict.fromkeys(names) if t not in self.trait_position]
        if not new:
            return
        for trait in new:
            self.trait_position[trait] = len(self.traits)
            self.traits.append(trait)
        self.has_trait = np.concatenate([self.has_trait, np.zeros(
            (len(new), self.has_trait.shape[1]), dtype=bool)])
        self._memo.clear()

    def _trait_rows(self, names, matrix, count):
        """``matrix`` (rows named by ``names``) with this object's rows."""
        self.add_traits(names)
        full = np.zeros((len(self.traits), count), dtype=bool)
        if names:
            full[[self.trait_position[t] for t in names]] = matrix
        return full

    def vector(self, resources):
        """``{rc: amount}`` as a float array over ``classes`` (a class
        not known yet gets a row)."""
        self.add_classes(resources)
        vector = np.zeros(len(self.classes))
        for rc, amount in resources.items():
            vector[self.rc_position[rc]] = amount
        return vector

    def knows_classes(self, resources):
        """Whether every class of ``resources`` has a row."""
        return all(rc in self.rc_position for rc in resources)

    def set_traits(self, pos, traits):
        """Replace host ``pos``'s traits with ``traits`` (names)."""
        self.add_traits(traits)
        self.has_trait[:, pos] = False
        if traits:
            rows = [self.trait_position[t] for t in traits]
            self.has_trait[rows, pos] = True
        self._memo.clear()

    def traits_of(self, pos):
        return sorted(self.traits[i]
                      for i in np.flatnonzero(self.has_trait[:, pos]))
