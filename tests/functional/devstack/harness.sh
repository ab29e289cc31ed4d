#!/bin/bash
#
# A stand-in for devstack that runs cellboot's devstack plugin for real.
#
#   harness.sh stack     sources settings, then plugin.sh for
#                        stack install, post-config, extra, test-config
#   harness.sh unstack   sources settings, then plugin.sh unstack
#   harness.sh clean     sources settings, then plugin.sh clean
#
# as stack.sh, unstack.sh and clean.sh do (in that order, in one shell per
# command). Only the devstack functions in STANDS_IN_FOR are defined, each
# doing the real work: databases on MariaDB through the mysql client,
# edits of ini files, services in the background with a pid file and a log
# each, RabbitMQ URLs on the test's own vhosts (rabbitmqctl makes those the
# plugin adds). The plugin runs under
# `set -o errexit -o nounset`, and a command that is neither a program nor
# one of these functions (another devstack function, say
# is_service_enabled) fails the run: the plugin may use no other devstack
# function, nor a devstack variable that is not in DEVSTACK_VARIABLES.
#
# Environment (the test sets it):
#   HARNESS_DIR           required: pids/, logs/ and the xtrace go here
#   HARNESS_RABBIT_VHOST  required: the RabbitMQ vhost of the transport URL
#                         (what devstack's default vhost is here)
#   HARNESS_PLUGIN_DIR    the plugin's devstack/ (default: this repository's)
#   CELLBOOT_MYSQL_ADMIN_URL  host:port:user:password of MariaDB's
#                         administrator (default 127.0.0.1:3306:root:)
#   HARNESS_VENV          the virtualenv to install into (default: .venv)
#   and any CELLBOOT_* variable of settings.

set -o errexit -o nounset -o pipefail -o errtrace

# The devstack functions the plugin may use: exactly these are defined.
STANDS_IN_FOR=(define_plugin enable_service setup_develop recreate_database
               database_connection_url iniset iniset_rpc_backend
               rpc_backend_add_vhost get_transport_url run_process
               stop_process)
# The devstack variables the plugin may read: exactly these are set.
# shellcheck disable=SC2034
DEVSTACK_VARIABLES=(DEST DATA_DIR SERVICE_HOST SERVICE_LISTEN_ADDRESS
                    ENABLED_SERVICES DISABLED_SERVICES GLOBAL_VENV
                    DEVSTACK_VENV DATABASE_TYPE DATABASE_HOST DATABASE_USER
                    DATABASE_PASSWORD RABBIT_HOST RABBIT_USERID
                    RABBIT_PASSWORD)

# Seconds a service may take to stop after SIGTERM before SIGKILL.
STOP_TIMEOUT=30

_HARNESS_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_HARNESS_REPO=$(cd "$_HARNESS_HERE/../../.." && pwd)
_HARNESS_PLUGIN_DIR=${HARNESS_PLUGIN_DIR:-$_HARNESS_REPO/devstack}
_HARNESS_DIR=${HARNESS_DIR:?HARNESS_DIR must name the run directory}
_HARNESS_VHOST=${HARNESS_RABBIT_VHOST:?HARNESS_RABBIT_VHOST must be set}
_HARNESS_UNKNOWN=$_HARNESS_DIR/unknown-commands
mkdir -p "$_HARNESS_DIR/pids" "$_HARNESS_DIR/logs" "$_HARNESS_DIR/data"

# -- devstack's variables ------------------------------------------------------
# (read by the sourced plugin, which shellcheck does not follow)
# shellcheck disable=SC2034
{

IFS=: read -r DATABASE_HOST _HARNESS_DB_PORT DATABASE_USER DATABASE_PASSWORD \
    <<<"${CELLBOOT_MYSQL_ADMIN_URL:-127.0.0.1:3306:root:}"
# The mysql client takes the port from here (devstack has no variable).
export MYSQL_TCP_PORT=$_HARNESS_DB_PORT
DATABASE_TYPE=mysql
DEST=$(dirname "$_HARNESS_REPO")
DATA_DIR=$_HARNESS_DIR/data
SERVICE_HOST=127.0.0.1
SERVICE_LISTEN_ADDRESS=127.0.0.1
ENABLED_SERVICES=
DISABLED_SERVICES=
GLOBAL_VENV=True
DEVSTACK_VENV=${HARNESS_VENV:-$_HARNESS_REPO/.venv}
RABBIT_HOST=127.0.0.1
RABBIT_USERID=guest
RABBIT_PASSWORD=guest
}
# devstack clones the plugin to $DEST/cellboot; here it is this checkout.
export CELLBOOT_DIR=${CELLBOOT_DIR:-$_HARNESS_REPO}

# -- the devstack functions ----------------------------------------------------

# define_plugin NAME: devstack records the plugin's name.
define_plugin() {
    _HARNESS_PLUGIN=$1
}

# enable_service SERVICE...: added to ENABLED_SERVICES unless disabled.
enable_service() {
    local service
    for service in "$@"; do
        [[ ,$DISABLED_SERVICES, == *,$service,* ]] && continue
        _harness_enabled "$service" && continue
        ENABLED_SERVICES=${ENABLED_SERVICES:+$ENABLED_SERVICES,}$service
    done
}

# setup_develop DIR: the project in DIR installed editable in the venv.
# Already so (the test runs from that venv): nothing to do.
setup_develop() {
    local dir
    dir=$(cd "$1" && pwd)
    if "$DEVSTACK_VENV/bin/python" - "$dir" <<'EOF'
import json
import sys
from importlib import metadata

url = 'file://' + sys.argv[1]
for dist in metadata.distributions():
    raw = dist.read_text('direct_url.json')
    if raw:
        info = json.loads(raw)
        if info.get('url') == url and \
                info.get('dir_info', {}).get('editable'):
            sys.exit(0)
sys.exit(1)
EOF
    then
        echo "setup_develop: $dir is installed editable in $DEVSTACK_VENV"
        return 0
    fi
    "$DEVSTACK_VENV/bin/python" -m pip install -q -c "$dir/constraints.txt" \
        -e "$dir"
}

_harness_mysql() {
    MYSQL_PWD=$DATABASE_PASSWORD mysql -u"$DATABASE_USER" -h"$DATABASE_HOST" \
        "$@"
}

# recreate_database NAME: dropped if it exists, created empty.
recreate_database() {
    _harness_mysql -e "DROP DATABASE IF EXISTS \`$1\`;
                       CREATE DATABASE \`$1\` CHARACTER SET utf8mb4;"
}

# database_connection_url NAME: the SQLAlchemy URL of database NAME.
database_connection_url() {
    echo "mysql+pymysql://$DATABASE_USER:$DATABASE_PASSWORD@$DATABASE_HOST:$_HARNESS_DB_PORT/$1?charset=utf8mb4"
}

# iniset FILE SECTION OPTION VALUE: OPTION set in [SECTION] (both made if
# missing), the rest of the file as it was.
iniset() {
    local file=$1
    [[ -e $file ]] || : >"$file"
    SECTION=$2 OPTION=$3 VALUE=$4 awk '
        function put() { print ENVIRON["OPTION"] " = " ENVIRON["VALUE"]; done = 1 }
        function blank_lines() { for (; blanks > 0; blanks--) print "" }
        /^[ \t]*$/ { blanks++; next }
        /^\[.*\][ \t]*$/ {
            if (here && !done) put()
            blank_lines()
            here = ($0 ~ "^\\[" ENVIRON["SECTION"] "\\][ \t]*$")
            print; next
        }
        { blank_lines() }
        here && $0 ~ "^[ \t]*" ENVIRON["OPTION"] "[ \t]*=" {
            if (!done) put()
            next
        }
        { print }
        END {
            if (here && !done) put()
            blank_lines()
            if (!done) { print ""; print "[" ENVIRON["SECTION"] "]"; put() }
        }' "$file" >"$file.harness-new"
    mv "$file.harness-new" "$file"
}

# get_transport_url [VHOST]: the URL of the bus (of VHOST, if given; the
# test's own vhost stands for devstack's default one).
get_transport_url() {
    echo "rabbit://$RABBIT_USERID:$RABBIT_PASSWORD@$RABBIT_HOST:5672/${1:-$_HARNESS_VHOST}"
}

# iniset_rpc_backend PACKAGE FILE [SECTION [VHOST]]: the transport URL of
# the bus (of VHOST, if given).
iniset_rpc_backend() {
    iniset "$2" "${3:-DEFAULT}" transport_url "$(get_transport_url "${4:-}")"
}

# rpc_backend_add_vhost VHOST: the vhost made on the broker (if missing),
# RABBIT_USERID given every right on it. The test deletes it.
rpc_backend_add_vhost() {
    if ! rabbitmqctl -q list_vhosts | grep -qx -- "$1"; then
        rabbitmqctl -q add_vhost "$1"
    fi
    rabbitmqctl -q set_permissions -p "$1" "$RABBIT_USERID" '.*' '.*' '.*'
}

# run_process SERVICE COMMAND: COMMAND in the background, in a session of
# its own, output to logs/SERVICE.log, pid in pids/SERVICE.pid; nothing
# for a service that is not enabled.
run_process() {
    local service=$1 command=$2
    _harness_enabled "$service" || return 0
    setsid bash -c "exec $command" >"$_HARNESS_DIR/logs/$service.log" 2>&1 \
        </dev/null &
    echo $! >"$_HARNESS_DIR/pids/$service.pid"
    echo "run_process: $service started, pid $!"
}

# stop_process SERVICE: SIGTERM to its process group, SIGKILL after
# STOP_TIMEOUT s; returns once it is gone.
stop_process() {
    local service=$1 pid_file pid waited=0
    _harness_enabled "$service" || return 0
    pid_file=$_HARNESS_DIR/pids/$service.pid
    [[ -f $pid_file ]] || return 0
    pid=$(<"$pid_file")
    kill -TERM -- "-$pid" 2>/dev/null || true
    while _harness_alive "$pid"; do
        if ((waited >= STOP_TIMEOUT * 10)); then
            echo "stop_process: $service ignored SIGTERM, killing it" >&2
            kill -KILL -- "-$pid" 2>/dev/null || true
        fi
        sleep 0.1
        waited=$((waited + 1))
    done
    rm -f "$pid_file"
    echo "stop_process: $service stopped"
}

# -- the harness's own helpers (the plugin may not call them) ------------------

_harness_enabled() {
    [[ ,$ENABLED_SERVICES, == *,$1,* ]]
}

# True while PID runs (a zombie nobody reaped yet counts as gone).
_harness_alive() {
    local state
    state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    [[ $state != Z* ]]
}

# bash calls this for a command it cannot find: record it, and fail.
command_not_found_handle() {
    echo "harness: '$1' is neither a program nor a devstack function this" \
         "harness provides (${STANDS_IN_FOR[*]})" | tee -a "$_HARNESS_UNKNOWN" >&2
    return 127
}

# The handler runs in a subshell and may have been called in a condition,
# where a failure does not stop the script: look at its record.
_harness_check_unknown() {
    if [[ -s $_HARNESS_UNKNOWN ]]; then
        echo "harness: the plugin used what this harness does not provide:" >&2
        cat "$_HARNESS_UNKNOWN" >&2
        exit 3
    fi
}

_harness_phase() {
    local started=$EPOCHREALTIME
    echo "harness: plugin.sh $*"
    # devstack sources plugin.sh inside a function, with these arguments.
    # shellcheck source=/dev/null
    source "$_HARNESS_PLUGIN_DIR/plugin.sh" "$@"
    _harness_check_unknown
    echo "harness: plugin.sh $* took" \
         "$(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $started }") s"
}

_harness_settings() {
    # shellcheck source=/dev/null
    source "$_HARNESS_PLUGIN_DIR/settings"
    _harness_check_unknown
}

# -- main ----------------------------------------------------------------------

rm -f "$_HARNESS_UNKNOWN"
exec {_harness_xtrace}>>"$_HARNESS_DIR/logs/harness.xtrace"
BASH_XTRACEFD=$_harness_xtrace
trap '_harness_check_unknown' EXIT
PS4='+ ${EPOCHREALTIME} '
set -o xtrace

_harness_settings
case ${1:-} in
    stack)
        for _harness_step in install post-config extra test-config; do
            _harness_phase stack "$_harness_step"
        done ;;
    unstack)
        _harness_phase unstack ;;
    clean)
        _harness_phase clean ;;
    *)
        echo "usage: harness.sh stack|unstack|clean" >&2
        exit 2 ;;
esac
echo "harness: $1 done (plugin ${_HARNESS_PLUGIN:-?})"
