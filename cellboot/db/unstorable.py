"""Text a MySQL connection cannot store: a client error, not a crash.

oslo.db connects to MySQL with ``charset=utf8`` unless the URL says
otherwise, and MySQL's ``utf8`` holds the Basic Multilingual Plane only:
a character beyond it (an emoji) in a string column makes the server
refuse the statement with error 1366 ("Incorrect string value"). oslo.db
18 passes that on as a bare ``DBError``; the filter below makes it
oslo.db's ``DBDataError``, which the API answers 400 (the request
wrote nothing: the statement failed inside its transaction). A
deployment that wants such characters stored sets ``?charset=utf8mb4``
in its database URLs.
"""

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import exc_filters
import sqlalchemy

MESSAGE = ('A value holds a character this database cannot store (beyond '
           'the Basic Multilingual Plane, such as an emoji); nothing was '
           'changed.')


@exc_filters.filters('mysql', sqlalchemy.exc.DataError, r".*\(1366\b")
def _mysql_incorrect_string(error, match, engine_name, is_disconnect):
    raise db_exc.DBDataError(error)
