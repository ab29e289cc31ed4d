"""The board a conductor uses, and what an operator reads when it cannot."""

from cellboot import exception
from cellboot.flowrun import jobboard
from tests import base


class BoardSettingsTest(base.TestCase):

    def test_boards_are_named_after_the_namespace_kind_and_cell(self):
        self.flags(namespace='region1', group='jobboard')
        self.assertEqual(('region1.boot', 'region1.cell.cell2.reschedule'),
                         (jobboard.board_name('boot'),
                          jobboard.board_name('reschedule', 'cell2')))

    def test_an_unreachable_redis_is_one_line_without_its_password(self):
        self.flags(url='redis://:s3cret@127.0.0.1:1/0', group='jobboard')
        error = self.assertRaises(
            jobboard.JobboardUnavailable, jobboard.connect, 'boot',
            'sqlite://')
        self.assertIn('Cannot use the jobboard at redis://127.0.0.1:1/0: ',
                      str(error))
        self.assertNotIn('s3cret', str(error))
        self.assertNotIn('\n', str(error))

    def test_a_url_that_is_not_redis_is_a_configuration_error(self):
        self.flags(url='http://127.0.0.1/', group='jobboard')
        error = self.assertRaises(exception.ConfigurationError,
                                  jobboard.connect, 'boot', 'sqlite://')
        self.assertIn('[jobboard] url', str(error))
