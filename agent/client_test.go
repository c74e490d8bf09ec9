package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/config"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/structs"
)

// TestClientOnlyAgentRegistersItsHTTPAddressAndForwardsTheAPI: a client
// agent registers its own HTTP address, answers the client endpoints
// itself and the rest of the API through its server, as Nomad's; the web
// UI stays the servers'.
func TestClientOnlyAgentRegistersItsHTTPAddressAndForwardsTheAPI(t *testing.T) {
	s := startAgent(t, "s1", 1)
	c, err := New(Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1",
		Logger: hclog.New(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Debug}),
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(func() { _ = c.Shutdown() })
	if c.Cluster() != nil {
		t.Fatal("a client-only agent runs Raft")
	}
	api, err := apiclient.New(s.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the client's node", func() error {
		n, _, err := api.Nodes().Info(context.Background(), c.Client().NodeID(), nil)
		if err != nil {
			return err
		}
		if n.Status != structs.NodeStatusReady || n.HTTPAddr != c.HTTPAddr() {
			return fmt.Errorf("node %s at %q", n.Status, n.HTTPAddr)
		}
		return nil
	})
	for path, want := range map[string]int{
		"/v1/client/fs/logs/nope?task=t&type=stdout": http.StatusNotFound,
		"/v1/client/fs/logs/nope?type=stdout":        http.StatusBadRequest,
		"/v1/jobs":                                   http.StatusOK,
		"/v1/job/nope":                               http.StatusNotFound,
		"/ui/jobs":                                   http.StatusNotFound,
	} {
		resp, err := http.Get("http://" + c.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}

func TestNewRefusesAgentsThatCannotRun(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range []Config{
		{DataDir: dir, HTTPAddr: "127.0.0.1:0"},
		{Client: true, HTTPAddr: "127.0.0.1:0"},
		{Client: true, DataDir: dir, HTTPAddr: "127.0.0.1:0"},
		{Server: true, DataDir: dir, HTTPAddr: "127.0.0.1:0"},
	} {
		if a, err := New(cfg); !errors.Is(err, ErrConfig) {
			if a != nil {
				_ = a.Shutdown()
			}
			t.Errorf("%+v: %v, want ErrConfig", cfg, err)
		}
	}
}

func TestFromConfigCarriesFilesAndFlags(t *testing.T) {
	file, _, err := config.Parse("a.hcl", []byte(`
name     = "n1"
data_dir = "/d"
ports {
  http = 5646
}
server {
  enabled           = true
  bootstrap_expect  = 3
  retry_join        = ["10.0.0.2:4646"]
  heartbeat_timeout = "1s"
  election_timeout  = "2s"
}
client {
  enabled    = true
  servers    = ["10.0.0.2:4646"]
  node_class = "big"
  meta       = { rack = "r1" }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := FromConfig(config.Default().Merge(file))
	switch {
	case got.NodeName != "n1" || got.DataDir != "/d" || got.HTTPAddr != "127.0.0.1:5646" || got.RaftAddr != "127.0.0.1:4647":
		t.Errorf("general: %+v", got)
	case !got.Server || got.BootstrapExpect != 3 || len(got.RetryJoin) != 1:
		t.Errorf("server: %+v", got)
	case got.RaftHeartbeatTimeout.String() != "1s" || got.RaftElectionTimeout.String() != "2s" || got.RaftLeaderLeaseTimeout <= 0:
		t.Errorf("raft timing: %+v", got)
	case !got.Client || len(got.Servers) != 1 || got.NodeClass != "big" || got.Meta["rack"] != "r1" || got.NodePool != "default":
		t.Errorf("client: %+v", got)
	}
	dev := FromConfig(config.DevConfig())
	if !dev.Dev || !dev.Server || !dev.Client || dev.Servers != nil {
		t.Errorf("dev: %+v", dev)
	}
}
