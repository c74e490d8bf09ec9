package apiclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// countingTransport counts the requests that go through it.
type countingTransport struct {
	n atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestNodeClientWithHTTPClientUsesIt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"HeartbeatTTL": 1000000000}`))
	}))
	defer srv.Close()
	tr := &countingTransport{}
	nc, err := NewNodeClientWithHTTPClient([]string{srv.URL}, &http.Client{Transport: tr})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := nc.Heartbeat(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if r.HeartbeatTTL != time.Second {
		t.Errorf("TTL = %v, want 1s", r.HeartbeatTTL)
	}
	if tr.n.Load() != 1 {
		t.Errorf("requests through the given client = %d, want 1", tr.n.Load())
	}
}

func TestNewWithHTTPClientChecks(t *testing.T) {
	if _, err := NewWithHTTPClient("127.0.0.1:1", nil); err == nil {
		t.Error("nil http client accepted")
	}
	if _, err := NewNodeClientWithHTTPClient(nil, http.DefaultClient); err != ErrNoServers {
		t.Errorf("no addresses: err = %v, want ErrNoServers", err)
	}
	c, err := NewWithHTTPClient("127.0.0.1:1", http.DefaultClient)
	if err != nil || c.Address() != "http://127.0.0.1:1" {
		t.Errorf("got %v, %v", c, err)
	}
}
