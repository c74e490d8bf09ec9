package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/structs"
)

// restartBackend records the restart it is asked for.
type restartBackend struct {
	*fakeBackend
	got *RestartRequest
}

func (b *restartBackend) RestartJob(_ context.Context, req RestartRequest) (*RestartResponse, error) {
	b.got = &req
	if req.Plan {
		return &RestartResponse{RestartPlan: []structs.RolloutBatch{{Group: "web", Batch: 1, Allocs: []string{"web.web[0]"}}}, Index: 7}, nil
	}
	return &RestartResponse{DeploymentID: "d1", EvalID: "e1", EvalCreateIndex: 8, Index: 8}, nil
}

// The restart handler reads its flags from the body, the namespace from
// the query alone, and "ask" or a duration as BatchWait.
func TestRestartHandler(t *testing.T) {
	b := &restartBackend{fakeBackend: newFakeBackend()}
	srv := httptest.NewServer(New(b, nil, WithClock(func() time.Time { return time.Unix(0, 0) })).Handler())
	t.Cleanup(srv.Close)

	code, body, hdr := do(t, "POST", srv.URL+"/v1/job/web/restart?namespace=team",
		`{"Groups":["web"],"Tasks":["app"],"BatchSize":"25%","BatchWait":"ask","OnError":"fail"}`)
	if code != 200 || !strings.Contains(body, `"DeploymentID":"d1"`) || hdr.Get("X-Nomad-Index") != "8" {
		t.Fatalf("restart: %d %s", code, body)
	}
	g := b.got
	if g.JobID != "web" || g.Namespace != "team" || g.Groups[0] != "web" || g.Tasks[0] != "app" || g.BatchSize != "25%" ||
		!g.BatchWaitAsk || g.BatchWait != 0 || g.OnError != "fail" || g.Plan {
		t.Fatalf("request %+v", g)
	}
	code, body, _ = do(t, "PUT", srv.URL+"/v1/job/web/restart", `{"BatchWait":"30s","Reschedule":true,"Plan":true}`)
	if code != 200 || !strings.Contains(body, `"RestartPlan":[{"Group":"web","Batch":1`) || b.got.BatchWait != 30*time.Second ||
		!b.got.Reschedule || !b.got.Plan || b.got.Namespace != "default" {
		t.Fatalf("plan: %d %s %+v", code, body, b.got)
	}
	for _, c := range []struct{ path, body, want string }{
		{"/v1/job/web/restart", `{"BatchWait":"soon"}`, `BatchWait "soon" is not a duration`},
		{"/v1/job/web/restart?namespace=*", `{}`, "*"},
		{"/v1/job/web/restart?namespace=a", `{"Namespace":"b"}`, "b"},
	} {
		code, body, _ := do(t, "POST", srv.URL+c.path, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want 400 %q", c.path, c.body, code, body, c.want)
		}
	}
}

// A restart needs alloc-lifecycle, with Reschedule too (as Nomad's, whose
// -reschedule stops allocs through the alloc stop endpoint).
func TestRestartNeedsAllocLifecycle(t *testing.T) {
	f := newACLFixture(t)
	if _, _, err := f.b.Apply(context.Background(), fsm.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "lifecycle", Rules: `namespace "default" { capabilities = ["alloc-lifecycle"] }`},
	}}); err != nil {
		t.Fatal(err)
	}
	secret := structs.GenerateUUID()
	f.secrets["lifecycle"] = secret
	if _, _, err := f.b.Apply(context.Background(), fsm.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{
		AccessorID: "acc-lifecycle", SecretHash: structs.HashSecret(secret), Name: "lifecycle", Type: structs.ACLTokenTypeClient,
		Policies: []string{"lifecycle"},
	}}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		who, body string
		want      int
	}{
		{"reader", `{}`, 403},
		{"reader", `{"Reschedule":true}`, 403},
		// Past the check: this backend is not a server.
		{"lifecycle", `{}`, 501},
		{"lifecycle", `{"Reschedule":true}`, 501},
	} {
		code, body := f.do(t, c.who, "POST", "/v1/job/web/restart", c.body)
		if code != c.want {
			t.Errorf("%s %s: %d %s, want %d", c.who, c.body, code, body, c.want)
		}
	}
}
