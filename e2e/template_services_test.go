package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
)

// appJob is a service of count 2 whose template renders a variable and its
// own port; each start copies the rendered file to out, named by alloc and
// time, so that the test sees every (re)start and what it rendered.
func appJob(out, version string) string {
	return fmt.Sprintf(`
job "app" {
  update {
    max_parallel     = 1
    min_healthy_time = "1s"
    healthy_deadline = "30s"
  }
  group "app" {
    count = 2
    network {
      port "http" {}
    }
    service {
      name     = "app"
      provider = "nomad"
      port     = "http"
      tags     = ["v%[2]s"]
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cp local/app.env %[1]s/${NOMAD_ALLOC_ID}.$(date +%%s%%N) && exec /usr/bin/python3 -m http.server ${NOMAD_PORT_http} --bind 127.0.0.1"]
      }
      env {
        VERSION = "%[2]s"
      }
      template {
        data        = <<EOT
PASSWORD={{ with nomadVar "nomad/jobs/app" }}{{ .password }}{{ end }}
PORT={{ env "NOMAD_PORT_http" }}
EOT
        destination = "local/app.env"
        change_mode = "restart"
      }
    }
  }
}
`, out, version)
}

// watcherJob renders the instances of the service "app" and copies the
// file to out every 200ms.
func watcherJob(out string) string {
	return fmt.Sprintf(`
job "watcher" {
  group "w" {
    task "w" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do cp local/upstreams %[1]s/upstreams.tmp && mv %[1]s/upstreams.tmp %[1]s/upstreams; sleep 0.2; done"]
      }
      template {
        data        = "{{ range nomadService \"app\" }}{{ .Address }}:{{ .Port }}\n{{ end }}"
        destination = "local/upstreams"
        change_mode = "noop"
      }
    }
  }
}
`, out)
}

// starts reads what each start of an app alloc rendered: alloc ID → the
// rendered files, oldest first.
func starts(t *testing.T, dir string) map[string][]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	out := map[string][]string{}
	for _, e := range entries {
		alloc, _, ok := strings.Cut(e.Name(), ".")
		if !ok || strings.HasPrefix(e.Name(), "upstreams") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[alloc] = append(out[alloc], string(b))
	}
	return out
}

// serviceAddrs is what GET /v1/service/app answers, as host:port lines,
// sorted.
func serviceAddrs(t *testing.T, p *agentProc) []string {
	t.Helper()
	code, body := rawRequest(t, "GET", "http://"+p.httpAddr+"/v1/service/app", "", nil)
	if code != 200 {
		t.Fatalf("GET /v1/service/app: %d %s", code, body)
	}
	var regs []struct {
		Address string
		Port    int
		AllocID string
	}
	if err := json.Unmarshal([]byte(body), &regs); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range regs {
		out = append(out, fmt.Sprintf("%s:%d", r.Address, r.Port))
	}
	sort.Strings(out)
	return out
}

func upstreams(dir string) []string {
	b, _ := os.ReadFile(filepath.Join(dir, "upstreams"))
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}

// On a dev agent with real processes: a job whose template renders a
// variable and its own port is restarted with the new value when the
// variable changes; a second job's template follows the first job's
// service instances through a rollout; the service is deregistered when
// its job stops, and the follower's file empties.
func TestTemplateVariablesAndServicesEndToEnd(t *testing.T) {
	p := startDevAgent(t)
	templateScenario(t, p, p)
}

// The same on three servers and a client: the variable is written and the
// jobs run through one follower, the registrations read through the other
// server, and the client's templates read from the server it talks to.
func TestTemplateVariablesAndServicesOnThreeServers(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	dir := t.TempDir()
	procs, addrs := startThreeServers(t, dir, "")
	clientHTTP := loopback.Addr(t)
	startAgentProc(t, "c1", clientHTTP, "-client", "-data-dir", filepath.Join(dir, "c1"),
		"-servers", strings.Join(addrs, ","), "-http-addr", clientHTTP, "-node", "c1")
	procs[0].waitNodeReady(1)
	writer := findFollower(t, procs)
	reader := procs[0]
	if reader == writer {
		reader = procs[1]
	}
	templateScenario(t, writer, reader)
}

// templateScenario runs the scenario: the CLI against w, the
// registrations read from r.
func templateScenario(t *testing.T, w, r *agentProc) {
	p := w
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if o, err := p.cli(t, "var", "put", "nomad/jobs/app", "password=s1"); err != nil {
		t.Fatalf("var put: %v %s", err, o)
	}
	appFile := filepath.Join(dir, "app.hcl")
	writeFile(t, appFile, appJob(out, "1"))
	if o, err := p.cli(t, "job", "run", appFile); err != nil {
		t.Fatalf("job run app: %v %s", err, o)
	}
	// Each alloc started once with the variable and its own port.
	var first map[string][]string
	eventually(t, 60*time.Second, "two allocs rendered s1 and their ports", func() error {
		first = starts(t, out)
		if len(first) != 2 {
			return fmt.Errorf("%d allocs started", len(first))
		}
		for id, rs := range first {
			if !strings.Contains(rs[0], "PASSWORD=s1\n") || !strings.Contains(rs[0], "PORT=") {
				return fmt.Errorf("alloc %s rendered %q", id, rs[0])
			}
		}
		return nil
	})
	ports := map[string]bool{}
	for _, rs := range first {
		ports[strings.TrimSpace(rs[0][strings.Index(rs[0], "PORT=")+5:])] = true
	}
	if len(ports) != 2 {
		t.Fatalf("the two allocs rendered the same port: %v", first)
	}
	eventually(t, 30*time.Second, "the two instances registered", func() error {
		if got := serviceAddrs(t, r); len(got) != 2 {
			return fmt.Errorf("registered %v", got)
		}
		return nil
	})
	for _, a := range serviceAddrs(t, r) {
		_, port, _ := strings.Cut(a, ":")
		if !ports[port] {
			t.Fatalf("registration %s is not a port the allocs rendered (%v)", a, ports)
		}
	}

	// The follower renders the instances.
	watchFile := filepath.Join(dir, "watcher.hcl")
	writeFile(t, watchFile, watcherJob(out))
	if o, err := p.cli(t, "job", "run", watchFile); err != nil {
		t.Fatalf("job run watcher: %v %s", err, o)
	}
	eventually(t, 60*time.Second, "the watcher lists app's instances", func() error {
		if got, want := upstreams(out), serviceAddrs(t, r); strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("watcher has %v, registered %v", got, want)
		}
		return nil
	})

	// A new value of the variable: each alloc renders it again and is
	// restarted (a second start, same alloc).
	if o, err := p.cli(t, "var", "put", "-force", "nomad/jobs/app", "password=s2"); err != nil {
		t.Fatalf("var put s2: %v %s", err, o)
	}
	eventually(t, 60*time.Second, "both allocs restarted with s2", func() error {
		now := starts(t, out)
		for id := range first {
			rs := now[id]
			if len(rs) < 2 || !strings.Contains(rs[len(rs)-1], "PASSWORD=s2\n") {
				return fmt.Errorf("alloc %s: %d starts, last %q", id, len(rs), rs[len(rs)-1])
			}
		}
		return nil
	})

	// A rollout replaces the instances; the watcher follows.
	before := serviceAddrs(t, r)
	writeFile(t, appFile, appJob(out, "2"))
	if o, err := p.cli(t, "job", "run", appFile); err != nil {
		t.Fatalf("job run app v2: %v %s", err, o)
	}
	eventually(t, 90*time.Second, "the watcher lists the new instances", func() error {
		now := serviceAddrs(t, r)
		if len(now) != 2 || strings.Join(now, ",") == strings.Join(before, ",") {
			return fmt.Errorf("registered %v (before %v)", now, before)
		}
		if got := upstreams(out); strings.Join(got, ",") != strings.Join(now, ",") {
			return fmt.Errorf("watcher has %v, registered %v", got, now)
		}
		return nil
	})

	// Stopping app deregisters it; the watcher's list empties.
	if o, err := p.cli(t, "job", "stop", "app"); err != nil {
		t.Fatalf("job stop: %v %s", err, o)
	}
	eventually(t, 60*time.Second, "app deregistered and the watcher's list empty", func() error {
		if now := serviceAddrs(t, r); len(now) != 0 {
			return fmt.Errorf("still registered: %v", now)
		}
		if got := upstreams(out); len(got) != 0 {
			return fmt.Errorf("watcher still lists %v", got)
		}
		return nil
	})
}
