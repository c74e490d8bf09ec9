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

# pid_of prints the PID of a running agent started by this script, or
# nothing (a stale PID file, or a PID reused by another process, counts as
# not running).
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
	local a pid i
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
	# Each region elects its leader; then west joins east, which
	# federates the two regions.
	for ((i = 0; i < 100; i++)); do
		if "$bin" server join -address "http://127.0.0.1:${http[west]}" "127.0.0.1:${http[east]}" 2>/dev/null; then
			"$bin" server members -address "http://127.0.0.1:${http[east]}"
			return 0
		fi
		for a in "${agents[@]}"; do
			if [[ -z $(pid_of "$a") ]]; then
				echo "$a exited; last lines of $run/$a.log:" >&2
				tail -n 5 "$run/$a.log" >&2 || true
				rm -f "$run/$a.pid"
				return 1
			fi
		done
		sleep 0.2
	done
	echo "west could not join east; see $run/*.log" >&2
	return 1
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
	local a pid
	for a in "${agents[@]}"; do
		pid=$(pid_of "$a")
		if [[ -n $pid ]]; then
			printf '%-5s running  pid %-7s HTTP 127.0.0.1:%s\n' "$a" "$pid" "${http[$a]}"
		else
			printf '%-5s stopped\n' "$a"
		fi
	done
	if command -v curl >/dev/null; then
		echo "regions east knows: $(curl -fsS --max-time 2 "http://127.0.0.1:${http[east]}/v1/regions" 2>/dev/null || echo unreachable)"
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
