package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/cluster"
	"github.com/droverhq/drover/structs"
)

// serverOpsBackend adds the operator backends to a MemBackend, with
// in-memory fakes.
type serverOpsBackend struct {
	*MemBackend
	mu       sync.Mutex
	peers    map[string]string // Raft ID → address
	removed  []string
	snapshot []byte
	saveErr  error
	restored []byte
	known    []structs.ServerMember
	raftCfg  []*structs.RaftServer
}

func (b *serverOpsBackend) RemoveRaftPeer(_ context.Context, id, address string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for pid, addr := range b.peers {
		if pid == id || (id == "" && addr == address) {
			delete(b.peers, pid)
			b.removed = append(b.removed, pid)
			return nil
		}
	}
	return fmt.Errorf("%w: %q%q", ErrPeerNotFound, id, address)
}

func (b *serverOpsBackend) SaveSnapshot(w io.Writer) (*cluster.SnapshotInfo, error) {
	if b.saveErr != nil {
		return nil, b.saveErr
	}
	_, err := w.Write(b.snapshot)
	return &cluster.SnapshotInfo{Index: 7, Term: 2, Size: int64(len(b.snapshot))}, err
}

func (b *serverOpsBackend) RestoreSnapshot(r io.Reader) (*cluster.SnapshotInfo, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte("SNAP")) {
		return nil, fmt.Errorf("%w: not a snapshot", cluster.ErrSnapshotArchive)
	}
	b.mu.Lock()
	b.restored = data
	b.mu.Unlock()
	return &cluster.SnapshotInfo{Index: 9, Term: 3}, nil
}

func (b *serverOpsBackend) Self() *structs.AgentSelf {
	s := b.MemBackend.Self()
	s.Member = structs.ServerMember{ID: "mem", Name: "mem"}
	return s
}

func (b *serverOpsBackend) KnownServers() []structs.ServerMember { return b.known }

func (b *serverOpsBackend) RaftConfiguration() (*structs.RaftConfiguration, error) {
	if b.raftCfg == nil {
		return b.MemBackend.RaftConfiguration()
	}
	return &structs.RaftConfiguration{Servers: b.raftCfg, Index: 1}, nil
}

func newServerOpsAPI(t *testing.T) (*serverOpsBackend, *apiclient.Client, string) {
	t.Helper()
	b := &serverOpsBackend{MemBackend: NewMemBackend(), peers: map[string]string{
		"id-1": "127.0.0.1:4647", "id-2": "127.0.0.1:4657",
	}}
	srv := httptest.NewServer(New(b, nil).Handler())
	t.Cleanup(srv.Close)
	c, err := apiclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return b, c, srv.URL
}

func statusOf(err error) int {
	var se *apiclient.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

func TestRaftRemovePeer(t *testing.T) {
	b, c, url := newServerOpsAPI(t)
	ctx := context.Background()
	if err := c.Operator().RaftRemovePeerByID(ctx, "id-1"); err != nil {
		t.Fatalf("remove by id: %v", err)
	}
	if err := c.Operator().RaftRemovePeerByAddress(ctx, "127.0.0.1:4657"); err != nil {
		t.Fatalf("remove by address: %v", err)
	}
	if got := strings.Join(b.removed, ","); got != "id-1,id-2" {
		t.Fatalf("removed %s", got)
	}
	if err := c.Operator().RaftRemovePeerByID(ctx, "id-1"); statusOf(err) != 404 || !strings.Contains(err.Error(), `id "id-1" was not found in the Raft configuration`) {
		t.Fatalf("removing an unknown peer: %v, want Nomad's 404", err)
	}
	for _, q := range []string{"", "?id=a&address=b"} {
		if code, body, _ := do(t, "DELETE", url+"/v1/operator/raft/peer"+q, ""); code != 400 {
			t.Fatalf("DELETE with %q: %d %s", q, code, body)
		}
	}
}

func TestServerOperatorEndpointsNeedAServer(t *testing.T) {
	_, srv := newTestAPI(t)
	for _, r := range [][2]string{
		{"DELETE", "/v1/operator/raft/peer?id=x"}, {"GET", "/v1/operator/snapshot"}, {"PUT", "/v1/operator/snapshot"},
	} {
		if code, body, _ := do(t, r[0], srv.URL+r[1], ""); code != 501 {
			t.Fatalf("%s %s on a backend without the operator methods: %d %s", r[0], r[1], code, body)
		}
	}
}

func TestSnapshotSaveAndRestoreEndpoints(t *testing.T) {
	b, c, url := newServerOpsAPI(t)
	ctx := context.Background()
	b.snapshot = []byte("SNAP archive bytes")
	var out bytes.Buffer
	n, err := c.Operator().SnapshotSave(ctx, &out, &apiclient.QueryOptions{AllowStale: true})
	if err != nil || n != int64(len(b.snapshot)) || out.String() != string(b.snapshot) {
		t.Fatalf("save = (%d, %v), %q", n, err, out.String())
	}
	code, _, hdr := do(t, "GET", url+"/v1/operator/snapshot", "")
	if code != 200 || hdr.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("save: %d %v", code, hdr)
	}

	b.saveErr = errors.New("disk on fire")
	if _, err := c.Operator().SnapshotSave(ctx, io.Discard, nil); statusOf(err) != 500 || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("failed save: %v, want a 500 naming the cause", err)
	}

	resp, err := c.Operator().SnapshotRestore(ctx, strings.NewReader("SNAP restored"))
	if err != nil || resp.SnapshotIndex != 9 || resp.SnapshotTerm != 3 {
		t.Fatalf("restore = (%+v, %v)", resp, err)
	}
	if string(b.restored) != "SNAP restored" {
		t.Fatalf("backend got %q", b.restored)
	}
	if _, err := c.Operator().SnapshotRestore(ctx, strings.NewReader("garbage")); statusOf(err) != 400 {
		t.Fatalf("restoring garbage: %v, want 400", err)
	}
	big := io.MultiReader(strings.NewReader("SNAP"), io.LimitReader(zeros{}, MaxBodyBytes+1))
	if _, err := c.Operator().SnapshotRestore(ctx, big); statusOf(err) != 413 {
		t.Fatalf("restoring an oversized body: %v, want 413", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestAgentMembersProbesEachServer(t *testing.T) {
	b, c, _ := newServerOpsAPI(t)
	alive := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/status/leader" {
			fmt.Fprint(w, `"127.0.0.1:4647"`)
			return
		}
		http.NotFound(w, r)
	}))
	defer alive.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	b.known = []structs.ServerMember{
		{ID: "mem", Name: "mem", RaftAddr: "127.0.0.1:4647", HTTPAddr: "127.0.0.1:4646", Region: "global", Datacenter: "dc1", Version: "1.0"},
		{ID: "s2", Name: "s2", RaftAddr: "127.0.0.1:4657", HTTPAddr: strings.TrimPrefix(alive.URL, "http://"), Region: "global", Datacenter: "dc1"},
		{ID: "s3", Name: "s3", RaftAddr: "127.0.0.1:4667", HTTPAddr: deadAddr, Region: "global", Datacenter: "dc1"},
	}
	b.raftCfg = []*structs.RaftServer{
		{ID: "mem", Node: "mem", Address: "127.0.0.1:4647", Leader: true, Voter: true, RaftProtocol: "3"},
		{ID: "s2", Node: "s2", Address: "127.0.0.1:4657", Voter: true, RaftProtocol: "3"},
		{ID: "s4", Node: "s4", Address: "127.0.0.1:4677", Voter: true, RaftProtocol: "3"},
	}
	m, err := c.Agent().Members(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.ServerName != "mem.global" || m.ServerRegion != "global" {
		t.Fatalf("answer %+v", m)
	}
	got := map[string]string{}
	for _, am := range m.Members {
		got[am.Name] = fmt.Sprintf("%s raft=%s port=%s", am.Status, am.Tags["raft_vsn"], am.Tags["port"])
	}
	want := map[string]string{
		"mem.global": "alive raft=3 port=4647",
		"s2.global":  "alive raft=3 port=4657",
		"s3.global":  "failed raft= port=4667",
		"s4.global":  "unknown raft=3 port=4677",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("members\n got %v\nwant %v", got, want)
	}
	if self := m.Members[0]; self.Addr != "127.0.0.1" || self.Port != 4646 || self.Tags["build"] != "1.0" || self.Tags["dc"] != "dc1" {
		t.Fatalf("self member %+v", self)
	}
}
