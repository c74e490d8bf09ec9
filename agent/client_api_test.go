package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
)

// TestClientAPIForwardsToTheServer: a client-only agent hands a request
// it does not answer itself to its server, query, token and body
// included, and answers the server's reply; the routes a server answers
// only to its own machine are forwarded for a caller on this machine and
// refused to any other.
func TestClientAPIForwardsToTheServer(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Nomad-Token")+" "+string(body))
		w.WriteHeader(http.StatusTeapot)
		_, _ = io.WriteString(w, "from the server")
	}))
	defer srv.Close()
	nc, err := apiclient.NewNodeClientWithHTTPClient([]string{srv.URL}, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{servers: nc, agentHTTP: srv.Client(), logger: hclog.NewNullLogger()}
	h := a.clientAPI()

	req := httptest.NewRequest("PUT", "/v1/namespace/dev?region=global", strings.NewReader(`{"Name":"dev"}`))
	req.Header.Set("X-Nomad-Token", "tok")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusTeapot || rec.Body.String() != "from the server" {
		t.Fatalf("forwarded answer %d %q", rec.Code, rec.Body.String())
	}
	if len(got) != 1 || got[0] != `PUT /v1/namespace/dev?region=global tok {"Name":"dev"}` {
		t.Fatalf("the server saw %q", got)
	}

	for _, tc := range []struct {
		remote string
		want   int
	}{
		{"127.0.0.1:5000", http.StatusTeapot},
		{"192.0.2.10:5000", http.StatusForbidden},
	} {
		for _, path := range []string{"/v1/operator/snapshot", "/v1/internal/node/register"} {
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr = tc.remote
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s from %s: %d %q, want %d", path, tc.remote, rec.Code, rec.Body.String(), tc.want)
			}
		}
	}
}

// TestClientAPIServerDown: a server that does not answer is a 502 that
// says so, never a hang or a 500.
func TestClientAPIServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	nc, err := apiclient.NewNodeClientWithHTTPClient([]string{url}, http.DefaultClient)
	if err != nil {
		t.Fatal(err)
	}
	a := &Agent{servers: nc, agentHTTP: http.DefaultClient, logger: hclog.NewNullLogger()}
	rec := httptest.NewRecorder()
	a.clientAPI().ServeHTTP(rec, httptest.NewRequest("GET", "/v1/jobs", nil))
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "no server answered") {
		t.Fatalf("%d %q", rec.Code, rec.Body.String())
	}
}
