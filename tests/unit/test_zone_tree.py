"""``zone.depth_first`` and ``validate_name``: no database needed."""

from cellboot import exception
from cellboot.objects import zone as zone_obj
from tests import base


def _zone(uuid, parent=None):
    return zone_obj.Zone(uuid=uuid, name=uuid, parent_uuid=parent)


class DepthFirstTest(base.TestCase):

    def test_a_cycle_is_listed_once_at_the_top_level(self):
        zones = [_zone('a', 'b'), _zone('b', 'a'), _zone('c')]
        listed = zone_obj.depth_first(zones)
        self.assertEqual([(0, 'c'), (0, 'a'), (1, 'b')],
                         [(depth, z.uuid) for depth, z in listed])

    def test_a_zone_whose_parent_is_missing_is_at_the_top_level(self):
        listed = zone_obj.depth_first([_zone('a', 'gone')])
        self.assertEqual([(0, 'a')],
                         [(depth, z.uuid) for depth, z in listed])


class ValidateNameTest(base.TestCase):

    def test_good_names_pass(self):
        for name in ('r', 'region 1', 'é' * 255, 'eu-west/az-1'):
            self.assertEqual(name, zone_obj.validate_name(name))

    def test_bad_names_say_why(self):
        for name, words in (('', 'empty'), (None, 'empty'),
                            ('x' * 256, '255'), ('a\x00b', 'printable'),
                            ('\tx', 'printable'), (' x', 'space'),
                            ('00000000-0000-0000-0000-000000000000',
                             'uuid')):
            exc = self.assertRaises(exception.InvalidZoneName,
                                    zone_obj.validate_name, name)
            self.assertIn(words, str(exc), name)
