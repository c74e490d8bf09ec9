package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// dispatchBackend records the dispatch it is asked for.
type dispatchBackend struct {
	*fakeBackend
	got *DispatchRequest
}

func (b *dispatchBackend) Dispatch(_ context.Context, req DispatchRequest) (*DispatchResponse, error) {
	b.got = &req
	if req.Meta["bad"] != "" {
		return nil, Errorf(400, "Meta: the dispatch gave meta keys the job does not allow (%q)", "bad")
	}
	return &DispatchResponse{DispatchedJobID: req.JobID + "/dispatch-1-abcdef01", EvalID: "e1", EvalCreateIndex: 9, JobCreateIndex: 9, Index: 9}, nil
}

// The dispatch handler reads Nomad's JobDispatchRequest (the payload in
// base64, the token from the body or ?idempotency_token=, the namespace
// from the query alone) and answers Nomad's JobDispatchResponse.
func TestDispatchHandler(t *testing.T) {
	b := &dispatchBackend{fakeBackend: newFakeBackend()}
	srv := httptest.NewServer(New(b, nil, WithClock(func() time.Time { return time.Unix(0, 0) })).Handler())
	t.Cleanup(srv.Close)

	code, body, hdr := do(t, "POST", srv.URL+"/v1/job/enc/dispatch?namespace=team&idempotency_token=t1",
		`{"Payload":"aGVsbG8=","Meta":{"k":"v"},"IdPrefixTemplate":"nightly","Priority":70}`)
	if code != 200 || !strings.Contains(body, `"DispatchedJobID":"enc/dispatch-1-abcdef01"`) || !strings.Contains(body, `"EvalID":"e1"`) ||
		!strings.Contains(body, `"JobCreateIndex":9`) || hdr.Get("X-Nomad-Index") != "9" {
		t.Fatalf("dispatch: %d %s %v", code, body, hdr)
	}
	g := b.got
	if g.JobID != "enc" || g.Namespace != "team" || string(g.Payload) != "hello" || g.Meta["k"] != "v" ||
		g.IdempotencyToken != "t1" || g.IDPrefixTemplate != "nightly" || g.Priority != 70 {
		t.Fatalf("request %+v", g)
	}
	for _, c := range []struct{ path, body, want string }{
		{"/v1/job/enc/dispatch", `{"JobID":"other"}`, `JobID "other" does not match the path's job "enc"`},
		{"/v1/job/enc/dispatch?idempotency_token=a", `{"IdempotencyToken":"b"}`, `IdempotencyToken "b" and idempotency_token "a" differ`},
		{"/v1/job/enc/dispatch", `{"Payload":"not base64!"}`, "malformed request body"},
		{"/v1/job/enc/dispatch", `{"Meta":{"bad":"1"}}`, `Meta: the dispatch gave meta keys the job does not allow ("bad")`},
		{"/v1/job/enc/dispatch?namespace=*", `{}`, "*"},
		{"/v1/job/enc/dispatch?namespace=a", `{"Namespace":"b"}`, "b"},
	} {
		code, body, _ := do(t, "POST", srv.URL+c.path, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s, want 400 %q", c.path, c.body, code, body, c.want)
		}
	}
}
