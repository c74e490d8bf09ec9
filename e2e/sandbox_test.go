package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// The sandbox tests (sandbox_*_test.go) attack an agent as a job's
// author would: with a token that may only submit jobs in one namespace.

// sandboxAgent is one agent, server and client, with ACLs on and raw_exec:
// its process, base URL, data directory and the management token's
// headers.
type sandboxAgent struct {
	proc    *agentProc
	base    string
	dataDir string
	mgmt    map[string]string
}

// sandboxStart starts the agent named name, with clientHCL added inside
// its client block, bootstraps its ACLs and creates namespace dev.
func sandboxStart(t *testing.T, name, clientHCL string) *sandboxAgent {
	t.Helper()
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", "")
	dir := t.TempDir()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	a := &sandboxAgent{base: "http://" + httpAddr, dataDir: filepath.Join(dir, "data")}
	cfg := filepath.Join(dir, "agent.hcl")
	writeFile(t, cfg, fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
%s
}
acl {
  enabled = true
}
`, name, a.dataDir, port(httpAddr), port(raftAddr), clientHCL)+rawExecConfig)
	a.proc = startAgentProc(t, name, httpAddr, "-config", cfg)
	c := a.proc.client()
	var boot *structs.ACLToken
	eventually(t, 60*time.Second, "the ACL bootstrap", func() error {
		var err error
		boot, err = c.ACLBootstrap(ctx(t), "")
		return err
	})
	c.SetToken(boot.SecretID)
	a.proc.waitNodeReadyWith(c, 1)
	a.mgmt = map[string]string{"X-Nomad-Token": boot.SecretID}
	// The sandbox jobs and variables live in namespace dev.
	if code, out := rawRequest(t, "PUT", a.base+"/v1/namespace", `{"Name":"dev"}`, a.mgmt); code != 200 {
		t.Fatalf("namespace dev: %d %s", code, out)
	}
	return a
}

// token makes a client token with the given policies (each applied
// first, named <name>-pN) and returns its headers.
func (a *sandboxAgent) token(t *testing.T, name string, rules ...string) map[string]string {
	t.Helper()
	var names []string
	for i, r := range rules {
		pn := fmt.Sprintf("%s-p%d", name, i)
		body, _ := json.Marshal(structs.ACLPolicy{Name: pn, Rules: r})
		if code, out := rawRequest(t, "PUT", a.base+"/v1/acl/policy/"+pn, string(body), a.mgmt); code != 200 {
			t.Fatalf("policy %s: %d %s", pn, code, out)
		}
		names = append(names, pn)
	}
	body, _ := json.Marshal(structs.ACLToken{Name: name, Type: structs.ACLTokenTypeClient, Policies: names})
	code, out := rawRequest(t, "PUT", a.base+"/v1/acl/token", string(body), a.mgmt)
	var tok structs.ACLToken
	if code != 200 || json.Unmarshal([]byte(out), &tok) != nil || tok.SecretID == "" {
		t.Fatalf("token %s: %d %s", name, code, out)
	}
	return map[string]string{"X-Nomad-Token": tok.SecretID}
}

// sandboxJobBody is the registration body of an HCL job.
func sandboxJobBody(t *testing.T, src string) string {
	t.Helper()
	job, _, err := jobspec.Parse("job.hcl", []byte(src), jobspec.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"Job": job})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
