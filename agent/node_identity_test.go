package agent

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// With client_introduction strict, a client registers with an
// introduction token the servers signed; it then holds a node identity,
// whose claims a server answers by forwarding to the node, and which the
// node renews when asked.
func TestNodeIdentityAndIntroduction(t *testing.T) {
	cfg := testConfig(t, "s1", 1)
	cfg.ClientIntroduction = config.ClientIntroduction{Enforcement: "strict"}
	s := startAgentWith(t, cfg)
	waitLeader(t, s)
	api := nomadAPI(t, s)

	var intro *nomad.ACLIdentityClientIntroductionTokenResponse
	waitFor(t, "an introduction token", func() (err error) {
		intro, _, err = api.ACLIdentity().CreateClientIntroductionToken(&nomad.ACLIdentityClientIntroductionTokenRequest{NodeName: "c1", TTL: time.Minute}, nil)
		return err
	})

	// Without the token the servers refuse a new node.
	req, _ := http.NewRequest("PUT", "http://"+s.HTTPAddr()+"/v1/internal/node/register",
		strings.NewReader(`{"Node":{"ID":"`+structs.GenerateUUID()+`","Name":"c9","Datacenter":"dc1","Status":"ready"}}`))
	req.Header.Set("X-Nomad-Token", structs.GenerateUUID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("register without a token: %d", resp.StatusCode)
	}

	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1", ClientIntroToken: intro.JWT,
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })
	nodeID := c.Client().NodeID()

	var claims map[string]any
	waitFor(t, "the node's identity, through the server", func() error {
		r, err := api.Nodes().Identity().Get(&nomad.NodeIdentityGetRequest{NodeID: nodeID}, nil)
		if err != nil {
			return err
		}
		claims = r.Claims
		return nil
	})
	if claims["nomad_node_id"] != nodeID || claims["sub"] != fmt.Sprintf("node:global:default:%s:default", nodeID) || len(claims) != 9 {
		t.Fatalf("claims = %v", claims)
	}
	if _, err := api.Nodes().Identity().Renew(&nomad.NodeIdentityRenewRequest{NodeID: nodeID}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a renewed identity", func() error {
		r, err := nomadAPI(t, c).Nodes().Identity().Get(&nomad.NodeIdentityGetRequest{}, nil)
		if err != nil {
			return err
		}
		if r.Claims["jti"] == claims["jti"] {
			return fmt.Errorf("same identity %v", r.Claims["jti"])
		}
		return nil
	})
}
