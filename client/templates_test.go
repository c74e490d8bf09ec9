package client

import (
	"context"
	"testing"

	"github.com/droverhq/drover/structs"
)

// identityServer is a ServerAPI that issues workload identities and says
// where it is, as HTTPServers does.
type identityServer struct {
	*fakeServer
	asked []string
}

func (s *identityServer) Address() string { return "http://10.0.0.5:4646" }

func (s *identityServer) AllocIdentities(_ context.Context, allocID string, tasks []string) (*structs.AllocIdentityResponse, error) {
	s.asked = append(s.asked, allocID+"/"+tasks[0])
	return &structs.AllocIdentityResponse{AllocID: allocID, Identities: []structs.TaskIdentity{{Task: tasks[0], JWT: "jwt-of-" + tasks[0]}}}, nil
}

// TestTemplateSetup: templates read from the server the agent's calls go
// to, with the task's workload identity when the servers issue them; a
// configured address wins; without identities, no token.
func TestTemplateSetup(t *testing.T) {
	srv := &identityServer{fakeServer: newFakeServer()}
	a, err := New(Config{DataDir: t.TempDir(), ServerAPI: srv})
	if err != nil {
		t.Fatal(err)
	}
	tc := a.templates
	if tc.ServerAddr == nil || tc.ServerAddr() != "http://10.0.0.5:4646" {
		t.Fatal("no server address, or not the one calls go to")
	}
	if tc.Identity == nil {
		t.Fatal("no identity source")
	}
	tok, err := tc.Identity.TaskIdentity(context.Background(), "alloc-1", "web")
	if err != nil || tok != "jwt-of-web" || len(srv.asked) != 1 || srv.asked[0] != "alloc-1/web" {
		t.Fatalf("identity %q %v asked %v", tok, err, srv.asked)
	}

	b, err := New(Config{DataDir: t.TempDir(), ServerAPI: newFakeServer(), TemplateServerAddr: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	if b.templates.Identity != nil || b.templates.ServerAddr() != "http://127.0.0.1:9" {
		t.Fatalf("without identities: %+v", b.templates)
	}
}
