package main

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/agent"
	"github.com/droverhq/drover/internal/loopback"
)

// operator debug against a dev agent (a server and a client in-process,
// real Raft on loopback): a 2s capture every 1s leaves Nomad's bundle,
// archived in the current directory, with the cluster's state, the
// metrics, the profiles and the log of the server and of the client.
func TestOperatorDebugBuildsTheArchive(t *testing.T) {
	a, err := agent.New(agent.Config{Dev: true, HTTPAddr: loopback.Addr(t), RaftAddr: loopback.Addr(t), NodeName: "dev",
		Logger: hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "dev", Output: testLogWriter{t}, Level: hclog.Info})})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	t.Cleanup(func() { _ = a.Shutdown() })
	addr := "http://" + a.HTTPAddr()
	waitUntil(t, "the dev client's node", func() error {
		if code, out, errOut := runCLI(t, "", "node", "status", "-address", addr); code != 0 || !strings.Contains(out, "ready") {
			return fmt.Errorf("node status: %d %q %q", code, out, errOut)
		}
		return nil
	})

	t.Chdir(t.TempDir())
	code, out, errOut := runBounded(t, "", "operator", "debug", "-address", addr,
		"-duration", "2s", "-interval", "1s", "-pprof-duration", "1s", "-event-topic", "all")
	t.Logf("out:\n%s\nerr:\n%s", out, errOut)
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	for _, want := range []string{"Starting debugger...", "Servers: (1/1) [dev", "Clients: (1/1) [", "Capture interval 0001", "Created debug archive: nomad-debug-"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	i := strings.Index(out, "Created debug archive: ")
	if i < 0 {
		t.Fatal("no archive")
	}
	archive := strings.TrimSpace(out[i+len("Created debug archive: "):])
	files := tarFiles(t, archive)
	stamped := strings.TrimSuffix(archive, ".tar.gz")
	has := func(pattern string) string {
		t.Helper()
		for name, body := range files {
			if ok, _ := filepath.Match(stamped+"/"+pattern, name); ok && len(body) > 0 {
				return body
			}
		}
		t.Errorf("the archive has no %s (files: %v)", pattern, keys(files))
		return ""
	}
	for _, f := range []string{"cluster/agent-self.json", "cluster/members.json", "cluster/nodes.json", "cluster/namespaces.json",
		"cluster/regions.json", "cluster/node-pools.json", "index.json",
		"interval/0000/jobs.json", "interval/0000/allocations.json", "interval/0000/evaluations.json",
		"interval/0000/deployments.json", "interval/0001/nodes.json"} {
		if body := has(f); strings.Contains(body, `"Error"`) {
			t.Errorf("%s holds an error: %s", f, body)
		}
	}
	if m := has("interval/0000/metrics.json"); !strings.Contains(m, "Gauges") {
		t.Errorf("metrics.json: %.200s", m)
	}
	for _, dir := range []string{"server/*", "client/*"} {
		has(dir + "/profile_0000.prof")
		has(dir + "/heap_0000.prof")
		if g := has(dir + "/goroutine-debug2_0000.txt"); !strings.Contains(g, "goroutine ") {
			t.Errorf("%s goroutines: %.200s", dir, g)
		}
		if l := has(dir + "/monitor.log"); strings.Contains(l, "monitor:") {
			t.Errorf("%s log: %.300s", dir, l)
		}
	}
}

// With -output the bundle is a directory there, and no archive is
// built; an agent that refuses its profiles (no enable_debug, ACLs off)
// leaves a note and the rest of the bundle.
func TestOperatorDebugOutputDirectory(t *testing.T) {
	c := newCLICluster(t)
	cwd := t.TempDir()
	t.Chdir(cwd)
	out := t.TempDir()
	code, stdout, errOut := runBounded(t, "", "operator", "debug", "-address", c.addr, "-output", out,
		"-duration", "1s", "-interval", "1s", "-server-id", "leader", "-node-id", c.node.ID[:8])
	if code != 0 {
		t.Fatalf("code %d, out %q, err %q", code, stdout, errOut)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "nomad-debug-*"))
	if len(dirs) != 1 || !strings.Contains(stdout, "Created debug directory: "+dirs[0]) {
		t.Fatalf("bundle directories %v, out %q", dirs, stdout)
	}
	for _, f := range []string{"cluster/nodes.json", "cluster/members.json", "interval/0000/jobs.json", "server/leader/monitor.log", "client/" + c.node.ID + "/monitor.log", "index.json"} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("bundle: %v", err)
		}
	}
	if !strings.Contains(stdout, "Servers: (1/1) [leader]") || !strings.Contains(stdout, "Clients: (1/1) ["+c.node.ID+"]") {
		t.Errorf("summary %q", stdout)
	}
	if !strings.Contains(errOut, "Pprof retrieval requires agent:write ACL or enable_debug=true.") {
		t.Errorf("stderr %q", errOut)
	}
	if archives, _ := filepath.Glob(filepath.Join(cwd, "*.tar.gz")); len(archives) != 0 {
		t.Errorf("archives %v with -output", archives)
	}
}

// Bad flags give Nomad's errors, exit 1, before any capture.
func TestOperatorDebugRefusesBadFlags(t *testing.T) {
	c := newCLICluster(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-duration", "1s", "-interval", "2s"}, "Error parsing interval: 2s is greater than duration 1s"},
		{[]string{"-duration", "soon"}, "Error parsing duration: soon"},
		{[]string{"-server-id", "nosuch"}, "Failed to retrieve servers, 0 members found in list: nosuch"},
		{[]string{"-node-id", "ffff"}, "Failed to retrieve clients, 0 nodes found in list: ffff"},
		{[]string{"-log-lookback", "1h"}, "no journald or log history"},
		{[]string{"-consul-http-addr", "x"}, "drover has no Consul integration"},
		{[]string{"-vault-address", "x"}, "drover has no Vault integration"},
	} {
		out := t.TempDir()
		args := append([]string{"operator", "debug", "-address", c.addr, "-output", out, "-duration", "1s", "-interval", "1s"}, tc.args...)
		code, _, errOut := runBounded(t, "", args...)
		if code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// tarFiles reads a .tar.gz: each file's name and contents.
func tarFiles(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = string(b)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
