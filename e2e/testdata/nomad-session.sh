#!/usr/bin/env bash
# A shell session written for Nomad's CLI, as runbooks and scripts use it.
# The e2e test runs it unchanged with drover as `nomad` on PATH and
# NOMAD_ADDR pointing at a dev agent.
set -euo pipefail
# grep reads its whole input (no -q): with pipefail, a writer cut off by an
# early exit would fail the session.

cat > session.hcl <<'HCL'
job "session" {
  group "g" {
    task "web" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello-from-session; echo oops-on-stderr >&2; exec sleep 600"]
      }
      resources {
        cpu    = 50
        memory = 32
        disk   = 64
      }
    }
  }
}
HCL

nomad namespace apply dev
nomad job run -detach -namespace dev session.hcl

status=""
for _ in $(seq 1 120); do
  status=$(nomad job status -namespace dev -t '{{range .Allocations}}{{.ClientStatus}}{{end}}' session)
  [ "$status" = running ] && break
  sleep 0.25
done
[ "$status" = running ] || { echo "allocation not running: $status" >&2; exit 1; }

alloc=$(nomad job status -namespace dev -t '{{range .Allocations}}{{.ID}}{{end}}' session)
for _ in $(seq 1 40); do
  nomad alloc logs -task web "$alloc" | grep hello-from-session >/dev/null && break
  sleep 0.25
done
nomad alloc logs -task web "$alloc" | grep hello-from-session >/dev/null
nomad alloc logs -stderr -task web "$alloc" | grep oops-on-stderr >/dev/null
nomad alloc logs -namespace dev -job -task web -tail -n 1 session | grep hello-from-session >/dev/null

nomad job status -json -namespace dev session | grep '"ID": "session"' >/dev/null
nomad alloc status -stats "$alloc" | grep 'Resource Utilization' >/dev/null
nomad alloc status -short "$alloc" | grep '^web ' >/dev/null
nomad node status -self -stats | grep 'Memory Stats' >/dev/null
nomad job status -namespace dev -short session | grep 'Namespace *= dev' >/dev/null
nomad namespace list | grep '^dev' >/dev/null
nomad namespace status -t '{{.Name}}' dev | grep -x dev >/dev/null
nomad namespace apply -description "the session's namespace" dev
nomad namespace status dev | grep "^Description *= the session's namespace" >/dev/null
nomad job inspect -namespace dev -hcl session | grep 'hello-from-session' >/dev/null
nomad node pool list | grep '^default' >/dev/null
nomad node pool list -json | grep '"Name": "all"' >/dev/null

nomad job stop -namespace dev -purge -detach -yes session
nomad system gc
nomad system reconcile summaries
echo session-ok
