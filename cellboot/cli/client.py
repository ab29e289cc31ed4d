"""The REST API as the CLI sees it: JSON in, JSON out, one error type.

Every failure — the API's nova-shaped error bodies, a refused
connection, an answer that is not JSON — becomes a ``CLIError`` with a
one-line message and the exit code a script can test (see
``cellboot.cli.exit_codes``).

A 503 with ``Retry-After`` is the API saying "not now, nothing was
changed" (a database or cell that did not answer, every request slot
busy): urllib3's ``Retry`` sends the request again after the time it
asks for (capped), ``ATTEMPTS`` times in all, each retry told on stderr
in one line.
"""

import sys
import urllib.parse

import requests
from requests import adapters
from urllib3 import exceptions as urllib3_exceptions
from urllib3.util import retry

from cellboot.cli import exit_codes

DEFAULT_URL = 'http://127.0.0.1:8774/v2.1'

# Seconds to wait for one answer; a healthy API answers in milliseconds.
TIMEOUT = 30

# Attempts of a request the API answers 503 with Retry-After, and the
# longest pause between two, whatever the API asks: a database blip
# lasts seconds, a longer outage is the user's to wait out.
ATTEMPTS = 3
MAX_RETRY_AFTER = 10
# Seconds waited for a Retry-After that is neither seconds nor a date.
UNREADABLE_RETRY_AFTER = 1


class CLIError(Exception):
    """A failure to show the user in one line, and the exit code."""

    def __init__(self, message, code=exit_codes.ERROR):
        super().__init__(message)
        self.message = message
        self.code = code


def _error_message(response):
    """The message of a nova-shaped error body, else the HTTP reason."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and len(body) == 1:
        detail = next(iter(body.values()))
        if isinstance(detail, dict) and detail.get('message'):
            return str(detail['message'])
    return f'HTTP {response.status_code} {response.reason}'


def _exit_code(status):
    if status in (401, 403):
        return exit_codes.AUTH
    if status == 404:
        return exit_codes.NOT_FOUND
    if status < 500:
        return exit_codes.BAD_REQUEST
    return exit_codes.ERROR


class RetryAfter(retry.Retry):
    """Retry what the API answers 503 with ``Retry-After``, and say so.

    Any method: such an answer says that nothing was changed. Nothing
    else is retried (a refused connection is the user's to see at once).
    """

    RETRY_AFTER_STATUS_CODES = frozenset({503})

    @classmethod
    def for_attempts(cls, attempts):
        return cls(total=attempts - 1, connect=0, read=False, other=0,
                   redirect=0, allowed_methods=None, raise_on_status=False,
                   respect_retry_after_header=True)

    def parse_retry_after(self, retry_after):
        """Seconds to wait; an unreadable value waits one second.

        The API sends whole seconds; a proxy may send anything. A value
        urllib3 cannot read would end the command with a confusing
        error about the URL, so it is read as the shortest sensible wait
        instead (the attempts stay bounded).
        """
        try:
            return super().parse_retry_after(retry_after)
        except urllib3_exceptions.InvalidHeader:
            return UNREADABLE_RETRY_AFTER

    def get_retry_after(self, response):
        seconds = super().get_retry_after(response)
        return None if seconds is None else min(seconds, MAX_RETRY_AFTER)

    def sleep_for_retry(self, response):
        seconds = self.get_retry_after(response)
        if seconds is not None:
            # ``history`` holds the answers so far, this one included.
            print(f'cellboot: the API answered {response.status} '
                  f'(unavailable); retrying in {seconds:g} s (attempt '
                  f'{len(self.history) + 1} of '
                  f'{len(self.history) + 1 + self.total})', file=sys.stderr)
        return super().sleep_for_retry(response)


class Client:
    """Requests to one API endpoint with one token."""

    def __init__(self, url=DEFAULT_URL, token=None,
                 timeout=TIMEOUT, attempts=ATTEMPTS):
        self.url = url.rstrip('/')
        self.token = token
        self.timeout = timeout
        self._session = requests.Session()
        retrying = adapters.HTTPAdapter(
            max_retries=RetryAfter.for_attempts(attempts))
        for scheme in ('http://', 'https://'):
            self._session.mount(scheme, retrying)

    def request(self, method, path, body=None, params=None):
        """The decoded JSON answer (None when it has no body)."""
        try:
            response = self._session.request(
                method, self.url + path, json=body, params=params,
                headers={'X-Auth-Token': self.token,
                         'Accept': 'application/json'},
                timeout=self.timeout)
        except requests.ConnectionError:
            raise CLIError(f'cannot reach the cellboot API at {self.url}: '
                           f'is it running? (set --url or CELLBOOT_URL)',
                           exit_codes.UNREACHABLE)
        except requests.Timeout:
            raise CLIError(f'the cellboot API at {self.url} did not answer '
                           f'within {self.timeout} s',
                           exit_codes.UNREACHABLE)
        except requests.RequestException as exc:
            raise CLIError(f'cannot use the API URL {self.url}: {exc}',
                           exit_codes.USAGE)
        if response.status_code >= 400:
            raise CLIError(_error_message(response),
                           _exit_code(response.status_code))
        if not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise CLIError(f'{self.url}{path} answered something that is '
                           f'not JSON: is --url a cellboot API (ending in '
                           f'/v2.1)?')

    def get(self, path, **params):
        return self.request('GET', path, params=params or None)

    def post(self, path, body):
        return self.request('POST', path, body=body)

    def delete(self, path):
        return self.request('DELETE', path)

    def put(self, path, body):
        return self.request('PUT', path, body=body)

    def get_all(self, path, key, **params):
        """Every item of a paged list ``key``, page after page.

        Follows the ``KEY_links`` "next" links (the API pages every
        list, see docs/api.md); only their query is taken, the
        request goes to this client's URL.
        """
        items, seen = [], set()
        answer = self.get(path, **params) or {}
        while True:
            items += answer.get(key, [])
            following = [link for link in answer.get(f'{key}_links') or ()
                         if link.get('rel') == 'next']
            if not following:
                return items
            query = dict(urllib.parse.parse_qsl(
                urllib.parse.urlsplit(following[0].get('href', '')).query))
            if not query.get('marker') or query['marker'] in seen:
                raise CLIError(f'{self.url}{path} answered a next link '
                               f'that goes nowhere new: {following[0]}')
            seen.add(query['marker'])
            answer = self.get(path, **query) or {}
