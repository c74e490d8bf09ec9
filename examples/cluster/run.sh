#!/usr/bin/env bash
# Runs a local drover cluster: three servers and three clients (in zones
# a, b and c, by their meta zone), all on 127.0.0.1, each in the
# background with its log and PID file under /tmp/drover-cluster.
#
#   examples/cluster/run.sh start    build nothing; start the agents not already running
#   examples/cluster/run.sh stop     stop the agents this script started (SIGTERM, then SIGKILL)
#   examples/cluster/run.sh status   show each agent and the cluster's leader
#   examples/cluster/run.sh clean    stop, kill the tasks the clients left running, remove /tmp/drover-cluster
#
# Stopping a client leaves its tasks running, as in production: a
# restarted client re-attaches to them. clean ends them too.
#
# The binary is bin/drover at the top of the repository (make build), or
# $DROVER_BIN.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${DROVER_BIN:-$repo/bin/drover}
run=/tmp/drover-cluster
agents=(server1 server2 server3 client1 client2 client3)
declare -A http=([server1]=4646 [server2]=4656 [server3]=4666 [client1]=4676 [client2]=4686 [client3]=4696)
stop_wait=${STOP_WAIT:-15} # seconds before SIGKILL

# shellcheck source=../lib.sh
. "$here/../lib.sh"

start() {
	start_agents
	# An agent that exits at once (a bad configuration, a port in use)
	# is reported now rather than by the next status.
	sleep 1
	check_exited
}

status() {
	local a leader
	agent_table
	if command -v curl >/dev/null; then
		for a in server1 server2 server3; do
			leader=$(curl -fsS --max-time 2 "http://127.0.0.1:${http[$a]}/v1/status/leader" 2>/dev/null) || continue
			echo "leader (Raft address): $leader"
			return 0
		done
		echo "leader: none reachable"
	fi
}

dispatch "$@"
