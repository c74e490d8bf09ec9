package agent

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/internal/loopback"
)

// A server forwards ?node_id= to the node's agent; a client-only agent
// answers with its own log, not its server's.
func TestMonitorOfAClientOnlyNode(t *testing.T) {
	s := startAgent(t, "s1", 1)
	waitLeader(t, s)
	logger := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "c1", Output: tWriter{t}, Level: hclog.Info})
	c := startAgentWith(t, Config{
		Client: true, Servers: []string{s.HTTPAddr()}, DataDir: filepath.Join(t.TempDir(), "c1"),
		HTTPAddr: loopback.Addr(t), NodeName: "c1", Logger: logger,
	})
	t.Cleanup(func() { c.Client().Shutdown(true) })
	nodeID := c.Client().NodeID()
	waitFor(t, "c1 registered", func() error {
		_, _, err := api(t, s).Nodes().Info(bounded(t), nodeID, nil)
		return err
	})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+s.HTTPAddr()+"/v1/agent/monitor?plain=true&log_level=debug&node_id="+nodeID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	go func() {
		for ctx.Err() == nil {
			logger.Named("probe").Debug("a line of the client node")
			time.Sleep(20 * time.Millisecond)
		}
	}()
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the client's line never came: %v", err)
		}
		if strings.Contains(line, "c1.probe: a line of the client node") {
			break
		}
	}
	// The profiles too: served by the node (no ACLs, no enable_debug:
	// refused there, as Nomad's).
	code := func(path string) int {
		resp, err := http.Get("http://" + s.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := code("/v1/agent/pprof/heap?node_id=" + nodeID); got != 403 {
		t.Errorf("node's profile without enable_debug: %d", got)
	}
}
