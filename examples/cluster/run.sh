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

# pid_of prints the PID of a running agent started by this script, or
# nothing. A PID file whose process is gone, or is no longer a drover
# agent (the PID was reused), counts as not running.
pid_of() {
	local f="$run/$1.pid" pid
	[[ -f $f ]] || return 0
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] || return 0
	if kill -0 "$pid" 2>/dev/null && [[ $(ps -o args= -p "$pid" 2>/dev/null) == *"agent -config $here/$1.hcl"* ]]; then
		echo "$pid"
	fi
}

start() {
	if [[ ! -x $bin ]]; then
		echo "no drover binary at $bin: run 'make build' or set DROVER_BIN" >&2
		exit 1
	fi
	mkdir -p "$run"
	local a pid
	for a in "${agents[@]}"; do
		pid=$(pid_of "$a")
		if [[ -n $pid ]]; then
			echo "$a already running (pid $pid)"
			continue
		fi
		nohup "$bin" agent -config "$here/$a.hcl" >>"$run/$a.log" 2>&1 </dev/null &
		echo $! >"$run/$a.pid"
		echo "$a started (pid $!, HTTP 127.0.0.1:${http[$a]}, log $run/$a.log)"
	done
	# An agent that exits at once (a bad configuration, a port in use)
	# is reported now rather than by the next status.
	sleep 1
	local failed=0
	for a in "${agents[@]}"; do
		if [[ -z $(pid_of "$a") ]]; then
			echo "$a exited; last lines of $run/$a.log:" >&2
			tail -n 5 "$run/$a.log" >&2 || true
			rm -f "$run/$a.pid"
			failed=1
		fi
	done
	return $failed
}

stop() {
	local a pid i
	for a in "${agents[@]}"; do
		pid=$(pid_of "$a")
		if [[ -z $pid ]]; then
			rm -f "$run/$a.pid"
			echo "$a not running"
			continue
		fi
		kill -TERM "$pid"
		for ((i = 0; i < stop_wait * 10; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "$a did not stop in ${stop_wait}s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$run/$a.pid"
		echo "$a stopped"
	done
}

status() {
	local a pid leader
	for a in "${agents[@]}"; do
		pid=$(pid_of "$a")
		if [[ -n $pid ]]; then
			printf '%-8s running  pid %-7s HTTP 127.0.0.1:%s\n' "$a" "$pid" "${http[$a]}"
		else
			printf '%-8s stopped\n' "$a"
		fi
	done
	if command -v curl >/dev/null; then
		for a in server1 server2 server3; do
			leader=$(curl -fsS --max-time 2 "http://127.0.0.1:${http[$a]}/v1/status/leader" 2>/dev/null) || continue
			echo "leader (Raft address): $leader"
			return 0
		done
		echo "leader: none reachable"
	fi
}

# kill_tasks ends the task processes of allocations under $run: those
# whose environment names an allocation directory there.
kill_tasks() {
	local p dir n=0
	for p in /proc/[0-9]*; do
		dir=$(tr '\0' '\n' 2>/dev/null <"$p/environ" | sed -n 's/^NOMAD_ALLOC_DIR=//p') || continue
		if [[ $dir == "$run"/* ]]; then
			kill -TERM "${p#/proc/}" 2>/dev/null && n=$((n + 1))
		fi
	done
	echo "ended $n task processes"
}

case ${1:-} in
start) start ;;
stop) stop ;;
status) status ;;
clean)
	stop
	kill_tasks
	rm -rf "$run"
	echo "removed $run"
	;;
*)
	echo "usage: $0 start|stop|status|clean" >&2
	exit 2
	;;
esac
