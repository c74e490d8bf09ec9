# shellcheck shell=bash
# The helpers the examples/*/run.sh scripts share: start agents in the
# background, find, stop and list them, end the tasks their clients left
# running, and dispatch start|stop|status|clean.
#
# A script sets, before sourcing this file:
#   here       its directory, where each agent's <name>.hcl lies
#   bin        the drover binary
#   run        the directory of the agents' logs and PID files
#   agents     the agents' names
#   http       an associative array: agent name → HTTP port on 127.0.0.1
#   stop_wait  seconds stop waits after SIGTERM before SIGKILL
# and defines start and status (which may use start_agents, check_exited
# and agent_table); dispatch "$@" then runs the command asked for.

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

# start_agents starts in the background each agent not already running.
start_agents() {
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
}

# check_exited reports each agent that is no longer running, with the last
# lines of its log, and removes its PID file. It fails if any had exited.
check_exited() {
	local a failed=0
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

# stop stops the agents this script started: SIGTERM, then SIGKILL after
# stop_wait seconds.
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

# agent_table prints a line per agent: running (its PID and HTTP address)
# or stopped.
agent_table() {
	local a pid w=0
	for a in "${agents[@]}"; do
		if ((${#a} > w)); then
			w=${#a}
		fi
	done
	w=$((w + 1))
	for a in "${agents[@]}"; do
		pid=$(pid_of "$a")
		if [[ -n $pid ]]; then
			printf '%-*s running  pid %-7s HTTP 127.0.0.1:%s\n' "$w" "$a" "$pid" "${http[$a]}"
		else
			printf '%-*s stopped\n' "$w" "$a"
		fi
	done
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

# dispatch runs the command named by its first argument.
dispatch() {
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
}
