"""Versioned notifications: what operators' tools hear of cellboot.

``events`` has one function per event (``instance_create``,
``flow_event``...), ``payloads`` the versioned payloads in Nova's
envelope, ``sender`` the thread that hands them to oslo.messaging's
Notifier so that no caller waits on the bus. Off unless
``[notifications] enabled`` (docs/operations.md, "Notifications").

This package sits low: it needs the configuration and oslo.messaging
only, so the flows' runner, the compute hosts and the builds' fates can
all call it.
"""

from cellboot.notifications.events import build_rescheduled  # noqa: F401
from cellboot.notifications.events import compute_exception  # noqa: F401
from cellboot.notifications.events import flow_event  # noqa: F401
from cellboot.notifications.events import instance_create  # noqa: F401
from cellboot.notifications.events import instance_delete  # noqa: F401
