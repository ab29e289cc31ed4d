"""Notifications leave the process from one thread of their own.

oslo.messaging's Notifier sends in the caller's thread, and retries the
connection for as long as ``retry`` says: a compute host that sent its
``instance.create.end`` itself would wait on a broker that is down,
with its build. So ``send`` only puts the notification on a bounded
queue, and a daemon thread hands it to the Notifier with a bounded
retry (``[notifications] retry``). A notification that cannot be sent
is dropped and logged (at most one WARNING per ``_WARN_EVERY`` seconds,
with the count); a full queue drops the newest the same way. What is
still queued when the process exits is lost: notifications are for
watching, the databases hold the record.

The Notifier is made for the configuration in force (bus, driver,
topics, retry), and made again when that changes (tests).
"""

import queue
import threading
import time

from oslo_log import log as logging
import oslo_messaging
from oslo_messaging.notify import notifier as om_notifier

from cellboot.conf import CONF

LOG = logging.getLogger(__name__)

DEFAULT_DRIVER = 'messagingv2'
_WARN_EVERY = 30.0

# oslo.messaging registers its group only when it makes a notifier; its
# options are read before that (to know which), and set by tests.
CONF.register_opts(om_notifier._notifier_opts,
                   group='oslo_messaging_notifications')


class _Sender:

    def __init__(self):
        self._lock = threading.Lock()
        self._queue = None
        self._thread = None
        self._notifiers = {}
        self._dropped = 0
        self._warned_at = None

    def send(self, ctxt, publisher_id, event_type, priority, payload):
        """Queue one notification; never raises, never blocks."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._queue = queue.Queue(CONF.notifications.max_queued)
                self._thread = threading.Thread(
                    target=self._run, args=(self._queue,), daemon=True,
                    name='cellboot-notifications')
                self._thread.start()
            target = self._queue
        try:
            target.put_nowait((ctxt, publisher_id, event_type, priority,
                               payload))
        except queue.Full:
            self._drop(event_type, 'too many notifications are waiting '
                       '([notifications] max_queued)')

    def flush(self, timeout=10.0):
        """Wait until every queued notification was sent or dropped;
        whether they were, within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        target = self._queue
        while target is not None and target.unfinished_tasks:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def _run(self, source):
        while True:
            item = source.get()
            try:
                self._deliver(*item)
            except Exception as exc:
                self._drop(item[2], exc)
            finally:
                source.task_done()

    def _deliver(self, ctxt, publisher_id, event_type, priority, payload):
        notifier = self._notifier().prepare(publisher_id=publisher_id)
        getattr(notifier, priority.lower())(ctxt, event_type, payload)

    def _notifier(self):
        group = CONF.oslo_messaging_notifications
        key = (group.transport_url or CONF.transport_url,
               tuple(group.driver or (DEFAULT_DRIVER,)),
               tuple(CONF.notifications.versioned_notifications_topics),
               CONF.notifications.retry)
        notifier = self._notifiers.get(key)
        if notifier is None:
            for old in self._notifiers.values():
                # The configuration changed: the old bus is let go.
                old.transport.cleanup()
            transport = oslo_messaging.get_notification_transport(
                CONF, url=key[0])
            # None: the drivers of [oslo_messaging_notifications].
            notifier = oslo_messaging.Notifier(
                transport, driver=None if group.driver else DEFAULT_DRIVER,
                topics=list(key[2]), retry=key[3])
            self._notifiers = {key: notifier}
        return notifier

    def _drop(self, event_type, why):
        now = time.monotonic()
        with self._lock:
            self._dropped += 1
            if self._warned_at is not None and \
                    now - self._warned_at < _WARN_EVERY:
                return
            self._warned_at, dropped, self._dropped = now, self._dropped, 0
        LOG.warning('Notification %s not sent (%d dropped since the last '
                    'warning): %s', event_type, dropped, why)


_SENDER = _Sender()
send = _SENDER.send
flush = _SENDER.flush
