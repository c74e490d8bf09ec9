package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
)

// fedJoinToken is the join token the federated regions of these tests
// share.
const fedJoinToken = "e2e-federation-join-token"

// startRegionDevAgent runs a dev agent (a server and a client) of region,
// with the federation's join token, serverExtra in its server block and
// extra at the top level.
func startRegionDevAgent(t *testing.T, region, serverExtra, extra string, args ...string) *agentProc {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), region+".hcl")
	writeFile(t, cfg, fmt.Sprintf(`
region = %q
server {
  join_token = %q
  %s
}
%s
`, region, fedJoinToken, serverExtra, extra))
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	p := startAgentProc(t, region, httpAddr, append([]string{"-dev", "-config", cfg, "-http-addr", httpAddr,
		"-raft-addr", raftAddr, "-node", region + "-1", "-log-level", "debug"}, args...)...)
	return p
}

// regionsOf reads GET /v1/regions from the agent.
func regionsOf(t *testing.T, c *apiclient.Client) ([]string, error) {
	return c.Regions(ctx(t))
}

// rawGet sends GET path to the agent and returns the status and body.
func rawGet(t *testing.T, p *agentProc, path, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(bounded(t, 30*time.Second), http.MethodGet, "http://"+p.httpAddr+path, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Two regions, a dev agent each, federated with `drover server join`:
//
//   - /v1/regions lists both, sorted, from each;
//   - a job whose region is west, registered through east, is stored and
//     runs in west, and east holds no copy;
//   - `drover job status -region west` through east's address shows it;
//   - a region nobody knows is a 400 naming it;
//   - with east's server gone, west keeps serving its job, and a request
//     from west for east answers a 5xx naming east within the hold.
func TestFederationTwoRegionsForwardAndSurvive(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east, west := startFederatedPair(t)

	// A job of region west, submitted through east.
	job := parseJob(t, "testdata/echo.hcl")
	job.ID, job.Name, job.Region = "fed-west", "fed-west", "west"
	registerJob(t, east.client(), job)
	wc := west.client()
	var allocID string
	eventually(t, 30*time.Second, "the job running in west", func() error {
		allocs, err := jobAllocs(t, wc, job.ID)
		if err != nil {
			return err
		}
		run := runningAllocs(allocs, 0)
		if len(run) != 1 {
			return fmt.Errorf("%d running: %s", len(run), jsonString(allocs))
		}
		if allocs[0].NodeName != "west-1" {
			return fmt.Errorf("placed on %q", allocs[0].NodeName)
		}
		allocID = run[0]
		return nil
	})
	t.Cleanup(func() { killAllocProcs(allocID) })
	if code, body, err := rawGet(t, east, "/v1/job/"+job.ID, ""); err != nil || code != http.StatusNotFound {
		t.Fatalf("east holds the job of west: %d %v %s", code, err, body)
	}
	if code, body, err := rawGet(t, east, "/v1/job/"+job.ID+"?region=west", ""); err != nil || code != http.StatusOK ||
		!strings.Contains(body, `"Region":"west"`) {
		t.Fatalf("reading the job through east with ?region=west: %d %v %s", code, err, body)
	}

	// The CLI's -region, through east's address.
	out, err := east.cli(t, "job", "status", "-region", "west", job.ID)
	if err != nil || !strings.Contains(out, "fed-west") || !strings.Contains(out, "running") {
		t.Fatalf("job status -region west through east: %v\n%s", err, out)
	}
	out, err = east.cli(t, "job", "status", "-region", "nowhere", job.ID)
	if err == nil || !strings.Contains(out, `No path to region "nowhere"`) {
		t.Fatalf("job status -region nowhere: %v\n%s", err, out)
	}

	// East gone: west serves its job; a request for east fails, bounded,
	// naming it.
	east.interrupt()
	if code, body, err := rawGet(t, west, "/v1/job/"+job.ID, ""); err != nil || code != http.StatusOK {
		t.Fatalf("west without east: %d %v %s", code, err, body)
	}
	if run := runningAllocs(allocsOf(t, wc, job.ID), 0); len(run) != 1 {
		t.Fatalf("west's job not running without east: %v", run)
	}
	start := time.Now()
	code, body, err := rawGet(t, west, "/v1/jobs?region=east", "")
	if err != nil {
		t.Fatal(err)
	}
	if code < 500 || !strings.Contains(body, `region "east"`) {
		t.Fatalf("a request for the region that is gone: %d %s", code, body)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Fatalf("the request for the region that is gone took %s", took)
	}
}

// Two regions with ACLs, east authoritative: the west's leader
// replicates east's policies and global tokens with its replication token
// (east's bootstrap token); a token created with -global in east then
// works in west, a token that is not global does not, a global token
// created through west is made in east, a namespace made in east appears
// in west, a global token of a role made in east grants the role's policy
// in west, an auth method and binding rule created through west are made
// in east and replicate back, a login in west with that method (its
// tokens global) is made in east and its token works in both, and a
// policy deleted in east is deleted in west.
func TestFederationReplicatesACLsFromTheAuthoritativeRegion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	east := startRegionDevAgent(t, "east", `authoritative_region = "east"`, "", "-acl-enabled")
	eventually(t, 15*time.Second, "east's leader", func() error {
		_, err := east.client().Status().Leader(ctx(t))
		return err
	})
	secretRE := regexp.MustCompile(`(?m)^Secret ID\s+= ([0-9a-f-]{36})$`)
	out, err := east.cli(t, "acl", "bootstrap")
	m := secretRE.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("acl bootstrap: %v\n%s", err, out)
	}
	mgmt := m[1]

	west := startRegionDevAgent(t, "west", `authoritative_region = "east"`, fmt.Sprintf("acl {\n  replication_token = %q\n}\n", mgmt),
		"-acl-enabled")
	eventually(t, 15*time.Second, "west's leader", func() error {
		_, err := west.client().Status().Leader(ctx(t))
		return err
	})

	policy := filepath.Join(t.TempDir(), "readjobs.hcl")
	writeFile(t, policy, `namespace "default" { policy = "read" }`+"\n")
	if out, err := east.cli(t, "acl", "policy", "apply", "-token", mgmt, "readjobs", policy); err != nil {
		t.Fatalf("policy apply: %v\n%s", err, out)
	}
	createToken := func(via *agentProc, global bool) string {
		args := []string{"acl", "token", "create", "-token", mgmt, "-name", "reader", "-policy", "readjobs"}
		if global {
			args = append(args, "-global")
		}
		out, err := via.cli(t, args...)
		if err != nil {
			t.Fatalf("token create: %v\n%s", err, out)
		}
		m := secretRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("token create answer: %s", out)
		}
		return m[1]
	}
	global, local := createToken(east, true), createToken(east, false)

	out, err = east.cli(t, "server", "join", "-token", mgmt, west.httpAddr)
	if err != nil || !strings.Contains(out, "Joined 1 servers successfully") {
		t.Fatalf("server join: %v\n%s", err, out)
	}
	eventually(t, 20*time.Second, "the global token working in west", func() error {
		code, body, err := rawGet(t, west, "/v1/jobs", global)
		if err != nil {
			return err
		}
		if code != http.StatusOK {
			return fmt.Errorf("%d %s", code, body)
		}
		return nil
	})
	if code, body, _ := rawGet(t, west, "/v1/jobs", local); code != http.StatusForbidden {
		t.Fatalf("east's local token in west: %d %s", code, body)
	}
	// East's bootstrap token is global: west's operators use it too.
	if code, body, _ := rawGet(t, west, "/v1/acl/policy/readjobs", mgmt); code != http.StatusOK {
		t.Fatalf("the replicated policy in west: %d %s", code, body)
	}

	// A global token created through west is made in east, and comes
	// back to west by replication.
	viaWest := createToken(west, true)
	if code, body, _ := rawGet(t, east, "/v1/jobs", viaWest); code != http.StatusOK {
		t.Fatalf("a global token created through west, in east: %d %s", code, body)
	}
	eventually(t, 20*time.Second, "the token created through west working in west", func() error {
		if code, body, err := rawGet(t, west, "/v1/jobs", viaWest); err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %v %s", code, err, body)
		}
		return nil
	})

	// A namespace replicates too.
	if out, err := east.cli(t, "namespace", "apply", "-token", mgmt, "-description", "the ops team", "ops"); err != nil {
		t.Fatalf("namespace apply: %v\n%s", err, out)
	}
	eventually(t, 20*time.Second, "the namespace in west", func() error {
		code, body, err := rawGet(t, west, "/v1/namespace/ops", mgmt)
		if err != nil || code != http.StatusOK || !strings.Contains(body, "the ops team") {
			return fmt.Errorf("%d %v %s", code, err, body)
		}
		return nil
	})

	// A role created in east, linked to a global token, grants its policy
	// in west: the role replicates with its ID, which the token links.
	policy2 := filepath.Join(t.TempDir(), "viarole.hcl")
	writeFile(t, policy2, `namespace "default" { policy = "read" }`+"\n")
	if out, err := east.cli(t, "acl", "policy", "apply", "-token", mgmt, "viarole", policy2); err != nil {
		t.Fatalf("policy apply: %v\n%s", err, out)
	}
	if out, err := east.cli(t, "acl", "role", "create", "-token", mgmt, "-name", "readers", "-policy", "viarole"); err != nil {
		t.Fatalf("role create: %v\n%s", err, out)
	}
	out, err = east.cli(t, "acl", "token", "create", "-token", mgmt, "-name", "by-role", "-global", "-role-name", "readers")
	m = secretRE.FindStringSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("token create -role-name: %v\n%s", err, out)
	}
	byRole := m[1]
	eventually(t, 20*time.Second, "the global token of a role working in west", func() error {
		if code, body, err := rawGet(t, west, "/v1/jobs", byRole); err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %v %s", code, err, body)
		}
		return nil
	})

	// An auth method and a binding rule created through west are made in
	// east and replicate back; a login in west with the method, whose
	// tokens are global, is made in east, and its token works in west.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	method, _ := json.Marshal(map[string]any{"Name": "fed", "Type": "JWT", "TokenLocality": "global", "MaxTokenTTL": "1h",
		"Config": map[string]any{"JWTValidationPubKeys": []string{string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))},
			"BoundAudiences": []string{"drover-e2e"}, "ListClaimMappings": map[string]string{"groups": "groups"}}})
	mgmtHeader := map[string]string{"X-Nomad-Token": mgmt}
	if code, out := rawRequest(t, "PUT", "http://"+west.httpAddr+"/v1/acl/auth-method", string(method), mgmtHeader); code != http.StatusOK {
		t.Fatalf("auth method through west: %d %s", code, out)
	}
	if code, out := rawRequest(t, "PUT", "http://"+west.httpAddr+"/v1/acl/binding-rule",
		`{"AuthMethod":"fed","Selector":"\"eng\" in list.groups","BindType":"role","BindName":"readers"}`, mgmtHeader); code != http.StatusOK {
		t.Fatalf("binding rule through west: %d %s", code, out)
	}
	if code, body, _ := rawGet(t, east, "/v1/acl/auth-method/fed", mgmt); code != http.StatusOK {
		t.Fatalf("the auth method created through west, in east: %d %s", code, body)
	}
	eventually(t, 20*time.Second, "the auth method and binding rule in west", func() error {
		if code, body, err := rawGet(t, west, "/v1/acl/auth-method/fed", mgmt); err != nil || code != http.StatusOK {
			return fmt.Errorf("auth method: %d %v %s", code, err, body)
		}
		if code, body, err := rawGet(t, west, "/v1/acl/binding-rules", mgmt); err != nil || code != http.StatusOK || !strings.Contains(body, `"fed"`) {
			return fmt.Errorf("binding rules: %d %v %s", code, err, body)
		}
		return nil
	})
	jwtToken, err := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"sub": "alice", "aud": "drover-e2e", "groups": []string{"eng"}, "exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	code, out := rawRequest(t, "PUT", "http://"+west.httpAddr+"/v1/acl/login", `{"AuthMethodName":"fed","LoginToken":"`+jwtToken+`"}`, nil)
	var login struct {
		SecretID string
		Global   bool
	}
	if json.Unmarshal([]byte(out), &login); code != http.StatusOK || login.SecretID == "" || !login.Global {
		t.Fatalf("login through west: %d %s", code, out)
	}
	if code, body, _ := rawGet(t, east, "/v1/jobs", login.SecretID); code != http.StatusOK {
		t.Fatalf("the login's token in east: %d %s", code, body)
	}
	eventually(t, 20*time.Second, "the login's token working in west", func() error {
		if code, body, err := rawGet(t, west, "/v1/jobs", login.SecretID); err != nil || code != http.StatusOK {
			return fmt.Errorf("%d %v %s", code, err, body)
		}
		return nil
	})

	// A deletion replicates too.
	if out, err := east.cli(t, "acl", "policy", "delete", "-token", mgmt, "readjobs"); err != nil {
		t.Fatalf("policy delete: %v\n%s", err, out)
	}
	eventually(t, 20*time.Second, "the policy deleted in west", func() error {
		code, body, err := rawGet(t, west, "/v1/acl/policy/readjobs", mgmt)
		if err != nil {
			return err
		}
		if code != http.StatusNotFound {
			return errors.New(body)
		}
		return nil
	})
}
