#!/usr/bin/env bash
# Runs two federated regions on 127.0.0.1: east (HTTP 4746) and west (HTTP
# 4756), one agent each (a server and a client), each in the background
# with its log and PID file under /tmp/drover-regions.
#
#   examples/regions/run.sh start    start the agents not already running, then join west to east
#   examples/regions/run.sh stop     stop the agents this script started (SIGTERM, then SIGKILL)
#   examples/regions/run.sh status   show each agent and the regions east knows
#   examples/regions/run.sh clean    stop, kill the tasks the clients left running, remove /tmp/drover-regions
#
# Then, for instance:
#   bin/drover job run -address http://127.0.0.1:4746 examples/regions/web-west.hcl
#   bin/drover job status -address http://127.0.0.1:4746 -region west web-west
#   bin/drover job run -address http://127.0.0.1:4746 examples/regions/web-both.hcl
#   bin/drover job status -address http://127.0.0.1:4746 web-both
#
# The binary is bin/drover at the top of the repository (make build), or
# $DROVER_BIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${DROVER_BIN:-$repo/bin/drover}
run=/tmp/drover-regions
agents=(east west)
declare -A http=([east]=4746 [west]=4756)
stop_wait=${STOP_WAIT:-15} # seconds before SIGKILL

# shellcheck source=../lib.sh
. "$here/../lib.sh"

start() {
	start_agents
	# Each region elects its leader; then west joins east, which
	# federates the two regions.
	local i
	for ((i = 0; i < 100; i++)); do
		if "$bin" server join -address "http://127.0.0.1:${http[west]}" "127.0.0.1:${http[east]}" 2>/dev/null; then
			"$bin" server members -address "http://127.0.0.1:${http[east]}"
			return 0
		fi
		check_exited || return 1
		sleep 0.2
	done
	echo "west could not join east; see $run/*.log" >&2
	return 1
}

status() {
	agent_table
	if command -v curl >/dev/null; then
		echo "regions east knows: $(curl -fsS --max-time 2 "http://127.0.0.1:${http[east]}/v1/regions" 2>/dev/null || echo unreachable)"
	fi
}

dispatch "$@"
