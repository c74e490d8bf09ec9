package agent

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// Once an agent stops, its answers close their connections, and a
// connection idle at that moment is not cut: the request a caller sends on
// it is answered (Go's server counts a connection idle until it has read
// a request's whole header, so closing the idle ones could cut a request
// being served).
func TestStoppingAgentAnswersThenClosesConnections(t *testing.T) {
	a := &Agent{}
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(a.closingConns(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, "ok")
	})))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := srv.Client()
	put := func() *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, srv.URL+"/v1/var/x", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "ok" {
			t.Fatalf("answer %q", b)
		}
		return resp
	}
	if resp := put(); resp.Close {
		t.Fatal("a running agent closed the connection after its answer")
	}
	a.stopServingKeepAlives()
	if resp := put(); !resp.Close {
		t.Fatal("a stopping agent's answer does not say \"Connection: close\"")
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d connections for two requests: the idle connection was closed when the agent stopped", n)
	}
	put()
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections: the stopping agent's answer did not close its connection", n)
	}
}
