"""What the sweepers' tests share. Not a test module."""

import threading

from cellboot import context as cb_context


def sweep_at_once(checks):
    """Run the checks' ``sweep_once`` at the same moment; their results.

    As several conductor processes sweeping on the same tick would.
    """
    barrier = threading.Barrier(len(checks))
    results = []

    def sweep(check):
        barrier.wait()
        results.append(check.sweep_once(cb_context.get_admin_context()))

    threads = [threading.Thread(target=sweep, args=(check,))
               for check in checks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results
