"""Loading the virt driver that [compute] driver names."""

from cellboot.compute.virt import driver
from cellboot.compute.virt import fake
from cellboot import exception
from tests import base


class NotADriver:
    pass


class LoadDriverTest(base.TestCase):

    def test_short_name_loads_the_registered_driver(self):
        self.assertIsInstance(driver.load_driver('fake', 'h1'),
                              fake.FakeDriver)

    def test_dotted_path_loads_that_class(self):
        loaded = driver.load_driver('cellboot.compute.virt.fake.FakeDriver',
                                    'h1')
        self.assertIsInstance(loaded, fake.FakeDriver)

    def test_driver_knows_its_host(self):
        self.assertEqual('h1', driver.load_driver('fake', 'h1').host)

    def test_unknown_name_is_a_configuration_error_naming_it(self):
        exc = self.assertRaises(exception.ComputeDriverNotFound,
                                driver.load_driver, 'libvirt', 'h1')
        self.assertIn("'libvirt'", str(exc))

    def test_unknown_module_is_a_configuration_error(self):
        self.assertRaises(exception.ComputeDriverNotFound,
                          driver.load_driver, 'no.such.module.Driver', 'h1')

    def test_class_that_is_not_a_driver_is_refused(self):
        exc = self.assertRaises(exception.ComputeDriverNotFound,
                                driver.load_driver, f'{__name__}.NotADriver',
                                'h1')
        self.assertIn('not a ComputeDriver subclass', str(exc))

    def test_driver_errors_are_configuration_errors(self):
        self.assertTrue(issubclass(exception.ComputeDriverNotFound,
                                   exception.ConfigurationError))
