package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestWithDefaults(t *testing.T) {
	c := &Client{}
	q := url.Values{"prefix": {"a"}}
	if got := c.withDefaults(q); got.Encode() != "prefix=a" {
		t.Fatalf("no defaults: %s", got.Encode())
	}
	c.SetNamespace("dev")
	c.SetRegion("global")
	if got := c.withDefaults(q).Encode(); got != "namespace=dev&prefix=a&region=global" {
		t.Fatalf("defaults: %s", got)
	}
	if q.Get("namespace") != "" {
		t.Fatal("the caller's values were changed")
	}
	own := url.Values{"namespace": {"*"}}
	if got := c.withDefaults(own).Get("namespace"); got != "*" {
		t.Fatalf("a request's own namespace lost: %s", got)
	}
	if got := c.withDefaults(nil).Encode(); got != "namespace=dev&region=global" {
		t.Fatalf("nil values: %s", got)
	}
}

// TestEscapedPathSent: an ID escaped into a path (a job's "/" as %2F)
// reaches the server escaped once, never as %252F.
func TestEscapedPathSent(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.RequestURI
		_, _ = w.Write([]byte("[]"))
	}))
	defer srv.Close()
	c, err := New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Jobs().Allocations(context.Background(), "disp/dispatch-1-abc", nil); err != nil {
		t.Fatal(err)
	}
	if got != "/v1/job/disp%2Fdispatch-1-abc/allocations" {
		t.Fatalf("sent %q", got)
	}
}
