#!/usr/bin/env bash
# demo.sh — drover's first run: a dev agent in the background, the rolling
# example, then its second version rolled out live with the deployment
# table. The agent is stopped on exit, whatever happens. Needs only the
# drover binary (BIN, default bin/drover) and python3 (the example's web
# server, and a free port).
set -euo pipefail

BIN=${BIN:-bin/drover}
JOB=${JOB:-examples/rolling.hcl}
[[ -x $BIN ]] || { echo "demo: $BIN not built (make build)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "demo: python3 is needed" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/drover-demo.XXXXXX")
log=$tmp/agent.log
agent=

stop_agent() {
	if [[ -n $agent ]] && kill -0 "$agent" 2>/dev/null; then
		echo "==> Stopping the agent (its allocations stop with it)"
		kill -INT "$agent" 2>/dev/null || true
		for _ in $(seq 1 150); do
			kill -0 "$agent" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$agent" 2>/dev/null || true
		wait "$agent" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap stop_agent EXIT
trap 'exit 130' INT TERM

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
http=127.0.0.1:$(free_port)
raft=127.0.0.1:$(free_port)
export DROVER_ADDR=http://$http NOMAD_ADDR=

echo "==> Starting a dev agent on $http (log: $log)"
"$BIN" agent -dev -http-addr "$http" -raft-addr "$raft" -node demo >"$log" 2>&1 &
agent=$!

# Wait (at most 30s) for the agent's client node to be ready.
if ! python3 - "$DROVER_ADDR" <<'PY'
import json, sys, time, urllib.request
deadline = time.time() + 30
while time.time() < deadline:
    try:
        with urllib.request.urlopen(sys.argv[1] + "/v1/nodes", timeout=2) as r:
            if any(n.get("Status") == "ready" for n in json.load(r)):
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.2)
sys.exit(1)
PY
then
	echo "demo: the agent did not become ready; its log:" >&2
	cat "$log" >&2
	exit 1
fi

echo
echo "==> drover job run $JOB   (version 1: four web servers)"
"$BIN" job run "$JOB"
echo
echo "==> drover job run -var version=2 $JOB   (a rolling update, two at a time)"
"$BIN" job run -var version=2 "$JOB"
echo
echo "==> Done. The deployment above replaced every allocation, two at a time,"
echo "    each batch after the previous one was healthy (plus the stagger)."
