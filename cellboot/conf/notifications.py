"""The ``[notifications]`` group: versioned notifications for operators.

cellboot tells the outside world what happens to servers and flows the
way Nova does: versioned notifications (``instance.create.end``,
``flow.revert``...) sent through oslo.messaging's Notifier, whose own
``[oslo_messaging_notifications]`` group gives the bus
(``transport_url``, default: ``[DEFAULT] transport_url``) and the
driver. Off by default: nothing is sent, and nothing is built, unless
``enabled`` is true (docs/operations.md, "Notifications").
"""

from oslo_config import cfg

notifications_group = cfg.OptGroup(
    'notifications',
    title='Notifications',
    help='Versioned notifications of servers and flows, sent through '
         'oslo.messaging (the bus and driver are those of '
         '[oslo_messaging_notifications]).')

notifications_opts = [
    cfg.BoolOpt('enabled',
                default=False,
                help='Send versioned notifications (instance.create.*, '
                     'instance.delete.*, compute_task.build_instances.error, '
                     'compute.exception, flow.*). A notification that '
                     'cannot be sent is logged and dropped; it never fails '
                     'or delays a build.'),
    cfg.ListOpt('versioned_notifications_topics',
                default=['versioned_notifications'],
                help='Topics the notifications are sent on (as Nova\'s '
                     'option of the same name). The driver is '
                     '[oslo_messaging_notifications] driver, messagingv2 '
                     'when it is not set.'),
    cfg.IntOpt('retry',
               default=1,
               min=0,
               help='Connection retries of one notification before it is '
                    'dropped (oslo.messaging\'s Notifier retry; its own '
                    'default, retrying for ever, would hold every later '
                    'notification behind a broker that is down).'),
    cfg.IntOpt('max_queued',
               default=1000,
               min=1,
               help='Notifications waiting to be sent, at most: they are '
                    'sent by a thread of their own so that no build waits '
                    'on the bus; past this many, new ones are dropped '
                    '(and logged) until the bus catches up.'),
]


def register_opts(conf):
    conf.register_group(notifications_group)
    conf.register_opts(notifications_opts, group=notifications_group)


def list_opts():
    return {notifications_group: notifications_opts}
