package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/internal/loopback"
)

// A three-server cluster and a client, every agent with acl { enabled }:
//
//   - the ACL system is bootstrapped with the CLI, policies applied from
//     files and tokens created with it;
//   - anonymous writes are refused with 403 through every server, the
//     Nomad Go client's included; a read-only token reads but cannot
//     register;
//   - a write token registers a job with the official Nomad Go client
//     (nomad.Config{SecretID}), reads it back, and rolls a new version out
//     with the drover CLI (-token); its logs are read from the client's
//     own endpoint, which the read-only token may not;
//   - a client node's secret does not act as another node;
//   - once the write token is deleted it fails at once through every
//     server, for writes and reads, and on the client's endpoint within
//     its token_ttl;
//   - no agent's log holds any of the secrets used.
func TestACLClusterTokensRolloutAndRevocation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four agent processes")
	}
	t.Setenv("NOMAD_TOKEN", "")
	t.Setenv("DROVER_TOKEN", "")
	dir := t.TempDir()
	type srv struct{ name, http, raft string }
	servers := make([]srv, 3)
	var joins []string
	for i := range servers {
		servers[i] = srv{fmt.Sprintf("s%d", i+1), loopback.Addr(t), loopback.Addr(t)}
		joins = append(joins, fmt.Sprintf("%q", servers[i].http))
	}
	var procs []*agentProc
	for _, s := range servers {
		cfg := filepath.Join(dir, s.name+".hcl")
		writeFile(t, cfg, fmt.Sprintf(`
name      = %q
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = "trace"
ports {
  http = %s
  raft = %s
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = [%s]
  join_token       = "e2e-acl-join-token"
}
acl {
  enabled = true
}
`, s.name, filepath.Join(dir, s.name), port(s.http), port(s.raft), strings.Join(joins, ", ")))
		procs = append(procs, startAgentProc(t, s.name, s.http, "-config", cfg))
	}
	clientHTTP := loopback.Addr(t)
	clientCfg := filepath.Join(dir, "c1.hcl")
	writeFile(t, clientCfg, fmt.Sprintf(`
name      = "c1"
data_dir  = %q
log_level = "trace"
ports {
  http = %s
}
client {
  enabled = true
  servers = [%s]
}
acl {
  enabled   = true
  token_ttl = "1s"
}
`, filepath.Join(dir, "c1"), port(clientHTTP), strings.Join(joins, ", "))+rawExecConfig)
	procs = append(procs, startAgentProc(t, "c1", clientHTTP, "-config", clientCfg))

	cli := func(token string, args ...string) (string, error) {
		t.Helper()
		env := []string{"DROVER_TOKEN=", "NOMAD_TOKEN="}
		if token != "" {
			env = []string{"DROVER_TOKEN=" + token, "NOMAD_TOKEN="}
		}
		return droverCLI(t, env, append(args, "-address", "http://"+servers[0].http)...)
	}
	secretRE := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`)
	accessorRE := regexp.MustCompile(`(?m)^Accessor ID\s+= ([0-9a-f-]{36})$`)

	// Bootstrap once a leader is elected; a second one is refused.
	var root string
	eventually(t, 60*time.Second, "the ACL bootstrap", func() error {
		out, err := cli("", "acl", "bootstrap")
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		m := secretRE.FindStringSubmatch(out)
		if m == nil {
			return fmt.Errorf("no secret in %q", out)
		}
		root = m[1]
		return nil
	})
	if out, err := cli("", "acl", "bootstrap"); err == nil || !strings.Contains(out, "ACL bootstrap already done") {
		t.Fatalf("second bootstrap: %v %s", err, out)
	}

	readonly := filepath.Join(dir, "readonly.hcl")
	writeFile(t, readonly, "namespace \"default\" {\n  policy = \"read\"\n}\nnode {\n  policy = \"read\"\n}\n")
	deployer := filepath.Join(dir, "deployer.hcl")
	writeFile(t, deployer, "namespace \"default\" {\n  policy = \"write\"\n}\nnode {\n  policy = \"read\"\n}\n")
	for name, path := range map[string]string{"readonly": readonly, "deployer": deployer} {
		if out, err := cli(root, "acl", "policy", "apply", name, path); err != nil {
			t.Fatalf("policy apply %s: %v %s", name, err, out)
		}
	}
	token := func(name, policy string) (secret, accessor string) {
		t.Helper()
		out, err := cli(root, "acl", "token", "create", "-name", name, "-policy", policy)
		s, a := secretRE.FindStringSubmatch(out), accessorRE.FindStringSubmatch(out)
		if err != nil || s == nil || a == nil {
			t.Fatalf("token create %s: %v %s", name, err, out)
		}
		return s[1], a[1]
	}
	reader, _ := token("reader", "readonly")
	writer, writerAccessor := token("writer", "deployer")

	api := func(addr, secret string) *apiclient.Client {
		c, err := apiclient.New(addr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetToken(secret)
		return c
	}
	// A follower checks a token for its local routes (/v1/jobs/parse,
	// ?stale reads) against its own copy, which trails the leader by its
	// replication lag: wait until every server knows the new tokens.
	for _, s := range servers {
		for _, secret := range []string{reader, writer} {
			eventually(t, 10*time.Second, "the tokens replicated to "+s.name, func() error {
				_, err := api(s.http, secret).Get(ctx(t), "/v1/acl/token/self", &apiclient.QueryOptions{AllowStale: true}, &struct{}{})
				return err
			})
		}
	}
	rootAPI := api(servers[0].http, root)
	eventually(t, 30*time.Second, "the client node ready", func() error {
		nodes, _, err := rootAPI.Nodes().List(ctx(t), nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("nodes %s", jsonString(nodes))
		}
		return nil
	})

	// Autopilot sees every server healthy: the servers' probes of each
	// other (/v1/agent/self) are signed with the join token.
	eventually(t, 30*time.Second, "autopilot's servers healthy", func() error {
		var health struct {
			Healthy bool
			Servers []struct {
				Name    string
				Healthy bool
			}
		}
		if _, err := rootAPI.Get(ctx(t), "/v1/operator/autopilot/health", nil, &health); err != nil {
			var se *apiclient.StatusError
			if !errors.As(err, &se) || se.Code != http.StatusTooManyRequests {
				return err
			}
		}
		if !health.Healthy || len(health.Servers) != 3 {
			return fmt.Errorf("health %s", jsonString(health))
		}
		return nil
	})

	spec := rolloutSpec{ID: "acl-web", Count: 2, Version: "1", Update: "      max_parallel = 1\n" + fastUpdate}
	// Anonymous and read-only writes are refused through every server.
	for _, s := range servers {
		for who, secret := range map[string]string{"anonymous": "", "reader": reader} {
			_, err := api(s.http, secret).Jobs().Register(ctx(t), spec.job(t))
			var se *apiclient.StatusError
			if !errors.As(err, &se) || se.Code != http.StatusForbidden || !strings.Contains(se.Msg, "Permission denied") {
				t.Fatalf("%s register through %s: %v", who, s.name, err)
			}
		}
		if _, _, err := api(s.http, reader).Jobs().List(ctx(t), nil); err != nil {
			t.Fatalf("reader lists jobs through %s: %v", s.name, err)
		}
	}
	anon, err := nomad.NewClient(&nomad.Config{Address: "http://" + servers[1].http})
	if err != nil {
		t.Fatal(err)
	}
	nomadJob, err := anon.Jobs().ParseHCL(spec.hcl(), true)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("anonymous parse with the Nomad client: %v", err)
	}

	// The write token, through the official Nomad Go client: parse,
	// register, read back.
	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + servers[1].http, SecretID: writer})
	if err != nil {
		t.Fatal(err)
	}
	if nomadJob, err = nc.Jobs().ParseHCL(spec.hcl(), true); err != nil {
		t.Fatalf("parse with the Nomad client: %v", err)
	}
	if _, _, err := nc.Jobs().Register(nomadJob, nil); err != nil {
		t.Fatalf("register with the Nomad client: %v", err)
	}
	info, _, err := nc.Jobs().Info(spec.ID, nil)
	if err != nil || info.ID == nil || *info.ID != spec.ID {
		t.Fatalf("job info with the Nomad client: %+v %v", info, err)
	}
	writerAPI := api(servers[2].http, writer)
	waitRollout(t, writerAPI, spec.ID, 0, "successful", 90*time.Second)

	// Version 2 with the drover CLI and -token, rolled out one at a time.
	spec.Version = "2"
	jobFile := filepath.Join(dir, "acl-web.hcl")
	writeFile(t, jobFile, spec.hcl())
	if out, err := droverCLI(t, nil, "job", "run", "-detach", "-token", writer, "-address", "http://"+servers[2].http, jobFile); err != nil {
		t.Fatalf("job run v2: %v %s", err, out)
	}
	waitRollout(t, writerAPI, spec.ID, 1, "successful", 90*time.Second)
	allocs, err := jobAllocs(t, writerAPI, spec.ID)
	if err != nil {
		t.Fatal(err)
	}
	run := runningAllocs(allocs, 1)
	if len(run) != 2 {
		t.Fatalf("running v2 allocs: %s", jsonString(allocs))
	}
	t.Cleanup(func() {
		for _, id := range run {
			killAllocProcs(id)
		}
	})

	// The client's own endpoint: read-logs for the write token, not for
	// the read-only one.
	logs := func(secret string) error {
		rc, err := api(clientHTTP, secret).AllocLogs(bounded(t, 10*time.Second), run[0], apiclient.LogsOptions{Task: "main"})
		if err != nil {
			return err
		}
		defer rc.Close()
		_, err = io.ReadAll(rc)
		return err
	}
	if err := logs(writer); err != nil {
		t.Fatalf("logs with the write token: %v", err)
	}
	for who, secret := range map[string]string{"reader": reader, "anonymous": ""} {
		var se *apiclient.StatusError
		if err := logs(secret); !errors.As(err, &se) || se.Code != http.StatusForbidden {
			t.Fatalf("logs as %s: %v", who, err)
		}
	}

	// The node's secret acts as the node, and not as another.
	nodeSecret, err := os.ReadFile(client.NodeSecretPath(filepath.Join(dir, "c1")))
	if err != nil {
		t.Fatal(err)
	}
	asNode := api(servers[0].http, strings.TrimSpace(string(nodeSecret)))
	var hb struct{ HeartbeatTTL time.Duration }
	if _, err := asNode.Put(ctx(t), "/v1/internal/node/"+allocs[0].NodeID+"/heartbeat", nil, &hb); err != nil {
		t.Fatalf("heartbeat as the node: %v", err)
	}
	var se *apiclient.StatusError
	if _, err := asNode.Put(ctx(t), "/v1/internal/node/"+nomadUUID()+"/heartbeat", nil, &hb); !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Fatalf("heartbeat as another node: %v", err)
	}
	if _, _, err := asNode.Jobs().List(ctx(t), nil); !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Fatalf("a node secret used as a token: %v", err)
	}

	// Revocation: the deletion returns, and the token fails through every
	// server at once, for a write and for a read.
	if out, err := cli(root, "acl", "token", "delete", writerAccessor); err != nil {
		t.Fatalf("token delete: %v %s", err, out)
	}
	for _, s := range servers {
		c := api(s.http, writer)
		_, err := c.Jobs().Register(ctx(t), spec.job(t))
		if !errors.As(err, &se) || se.Code != http.StatusForbidden || !strings.Contains(se.Msg, "ACL token not found") {
			t.Fatalf("revoked token writes through %s: %v", s.name, err)
		}
		if _, _, err := c.Jobs().List(ctx(t), nil); !errors.As(err, &se) || se.Code != http.StatusForbidden {
			t.Fatalf("revoked token reads through %s: %v", s.name, err)
		}
	}
	if _, _, err := nc.Jobs().Info(spec.ID, nil); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("revoked token with the Nomad client: %v", err)
	}
	// The client keeps what a token grants for token_ttl (1s here).
	eventually(t, 10*time.Second, "the revoked token refused by the client's endpoint", func() error {
		if err := logs(writer); !errors.As(err, &se) || se.Code != http.StatusForbidden {
			return fmt.Errorf("logs with the revoked token: %v", err)
		}
		return nil
	})

	// No agent logged a secret.
	secrets := map[string]string{"root": root, "reader": reader, "writer": writer, "node": strings.TrimSpace(string(nodeSecret))}
	for _, p := range procs {
		out := p.logs.String()
		if len(out) == 0 {
			t.Fatalf("%s logged nothing: the grep would prove nothing", p.name)
		}
		for name, secret := range secrets {
			if strings.Contains(out, secret) {
				t.Errorf("%s's log holds the %s secret", p.name, name)
			}
		}
	}
}

// nomadUUID is a node ID no node has.
func nomadUUID() string { return "00000000-0000-4000-8000-000000000001" }
