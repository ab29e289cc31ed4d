"""CPU time of a deployment's processes, read from their own accounting.

Each service runs in a session of its own (``Processes`` starts it with
``start_new_session``), so "the service" is every process whose session
id is the service's pid: the CPU time of one is its ``utime + stime``
plus ``cutime + cstime``, the time of its children that it already
reaped (a child still running is a process of the session itself, so
nothing is counted twice). MariaDB's server is the ``mariadbd`` (or
``mysqld``) process; the whole machine is the non-idle time of
``/proc/stat``'s ``cpu`` line, which includes every other user of this
shared machine and the benchmark's own client.

Only counters are read here; rates, idle subtraction and per-boot
figures are the caller's (``Kinds.cost``).
"""

import os

# Clock ticks per second of /proc's CPU counters.
_TICKS = os.sysconf('SC_CLK_TCK')
_MS_PER_TICK = 1000.0 / _TICKS

MARIADB_NAMES = ('mariadbd', 'mysqld')

# Fields of /proc/PID/stat after the ")" that ends the command name:
# state is field 3 of the line, so field N is at index N - 3.
_SESSION = 6 - 3
_CPU_FIELDS = tuple(n - 3 for n in (14, 15, 16, 17))   # u, s, cu, cs


def _stat_fields(pid):
    """/proc/PID/stat's fields after the command name, or None if gone."""
    try:
        with open(f'/proc/{pid}/stat', 'rb') as stat:
            text = stat.read()
    except OSError:
        return None
    return text[text.rindex(b')') + 2:].split()


def _pids():
    return [int(name) for name in os.listdir('/proc') if name.isdigit()]


def _comm(pid):
    try:
        with open(f'/proc/{pid}/comm') as comm:
            return comm.read().strip()
    except OSError:
        return None


def find_mariadb():
    """The pid of this machine's MariaDB/MySQL server, or None."""
    for pid in _pids():
        if _comm(pid) in MARIADB_NAMES:
            return pid
    return None


def session_cpu_ms():
    """{session id: CPU ms of its processes and their reaped children}."""
    totals = {}
    for pid in _pids():
        fields = _stat_fields(pid)
        if fields is None:
            continue
        ticks = sum(int(fields[index]) for index in _CPU_FIELDS)
        session = int(fields[_SESSION])
        totals[session] = totals.get(session, 0) + ticks * _MS_PER_TICK
    return totals


def process_cpu_ms(pid):
    """CPU ms of one process and its reaped children (0 if it is gone)."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return sum(int(fields[index]) for index in _CPU_FIELDS) * _MS_PER_TICK


def machine_busy_ms():
    """Non-idle CPU ms of the whole machine (all CPUs) since boot."""
    with open('/proc/stat') as stat:
        values = [int(v) for v in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest* are
    # already inside user and nice).
    busy = sum(values[:8]) - values[3] - values[4]
    return busy * _MS_PER_TICK


class Kinds:
    """The deployment's processes grouped by kind, and their counters.

    ``services`` maps each kind (``super_conductors``, ``api``...) to a
    function returning the current pids of that kind's service
    processes (a service restarted has a new pid); ``mariadb_pid`` may
    be None (a server elsewhere: its kind is then left out).
    """

    MACHINE = 'machine'
    MARIADB = 'mariadb'
    # The deployment's own processes and the MariaDB server: on a shared
    # machine, steadier than MACHINE, which the others' load moves.
    DEPLOYMENT = 'deployment'

    def __init__(self, services, mariadb_pid):
        self.services = services
        self.mariadb_pid = mariadb_pid

    def sample(self):
        """{kind: CPU ms so far}, every kind read at the same moment."""
        sessions = session_cpu_ms()
        sample = {kind: sum(sessions.get(pid, 0.0) for pid in pids())
                  for kind, pids in self.services.items()}
        if self.mariadb_pid is not None:
            sample[self.MARIADB] = process_cpu_ms(self.mariadb_pid)
        sample[self.DEPLOYMENT] = sum(sample.values())
        sample[self.MACHINE] = machine_busy_ms()
        return sample


def rates(first, last, seconds):
    """{kind: CPU ms per second} between two samples ``seconds`` apart."""
    return {kind: (last[kind] - first[kind]) / seconds for kind in first}


def cost_per_boot(first, last, seconds, idle_rates, boots):
    """{kind: CPU ms per boot}, the idle rate over ``seconds`` taken off.

    Rounded to 0.1 ms; can come out slightly negative for a kind that
    did next to nothing while the machine's other load fell.
    """
    return {kind: round((last[kind] - first[kind]
                         - idle_rates.get(kind, 0.0) * seconds) / boots, 1)
            for kind in first}
