package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// The token goes in X-Nomad-Token on every kind of request; a context's
// token wins over the client's; the environment is read in Nomad's order
// with DROVER_TOKEN first.
func TestTokenTravelsInTheHeader(t *testing.T) {
	seen := make(chan string, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get(TokenHeader)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Get(ctx, "/v1/jobs", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "" {
		t.Fatalf("no token set, sent %q", got)
	}
	c.SetToken("cli-secret")
	if _, err := c.Put(ctx, "/v1/jobs", map[string]string{}, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "cli-secret" {
		t.Fatalf("put sent %q", got)
	}
	rc, err := c.AllocLogs(ctx, "a", LogsOptions{Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	rc.Close()
	if got := <-seen; got != "cli-secret" {
		t.Fatalf("logs sent %q", got)
	}
	if _, err := c.Get(WithToken(ctx, "node-secret"), "/v1/jobs", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "node-secret" {
		t.Fatalf("context token: sent %q", got)
	}

	t.Setenv("NOMAD_TOKEN", "nomad")
	t.Setenv("DROVER_TOKEN", "")
	if got := Token(""); got != "nomad" {
		t.Fatalf("Token with NOMAD_TOKEN: %q", got)
	}
	t.Setenv("DROVER_TOKEN", "drover")
	if got := Token(""); got != "drover" {
		t.Fatalf("Token with both: %q", got)
	}
	if got := Token("flag"); got != "flag" {
		t.Fatalf("Token with a flag: %q", got)
	}
}
