package sim

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// A client agent and a server of either side of the allocs-sync route
// work together: a new client on a server without the route (which
// answers it 404, as a server older than it does) reads its allocs with
// allocs-index and allocs/get, and so does a client without it on a
// server that has it. Each runs a job's allocs and rolls them to a new
// version, through a real server and a real client over loopback HTTP.
func TestClientProtocolCompatibility(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := startInProcess(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	if err := srv.waitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse("http://" + srv.addr())
	if err != nil {
		t.Fatal(err)
	}
	api, err := apiclient.New(srv.addr())
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name                 string
		oldServer, oldClient bool
	}{
		{"new client, new server", false, false},
		{"new client, old server", true, false},
		{"old client, new server", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Requests by kind, as they reached the server (or the old
			// server's 404).
			var mu sync.Mutex
			seen := map[string]int{}
			proxy := httputil.NewSingleHostReverseProxy(target)
			proxy.ErrorLog = log.New(io.Discard, "", 0) // the long polls cut at the end
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				kind := ""
				for _, k := range []string{"/allocs-sync", "/allocs-index", "/allocs/get", "/allocs/update"} {
					if strings.HasSuffix(r.URL.Path, k) {
						kind = k[1:]
					}
				}
				mu.Lock()
				seen[kind]++
				mu.Unlock()
				if c.oldServer && kind == "allocs-sync" {
					http.NotFound(w, r) // what a server without the route answers
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer front.Close()

			nc, err := apiclient.NewNodeClient([]string{front.URL})
			if err != nil {
				t.Fatal(err)
			}
			var servers client.ServerAPI = client.NewHTTPServersOver(nc)
			if c.oldClient {
				// Only the methods of ServerAPI: no allocs-sync.
				servers = struct{ client.ServerAPI }{servers}
			}
			name := "compat-" + strings.NewReplacer(",", "", " ", "-").Replace(c.name)
			a, err := client.New(client.Config{
				DataDir: t.TempDir(), NodeName: name, Datacenter: client.DefaultDatacenter,
				Meta: map[string]string{MetaSim: "true"}, ServerAPI: servers,
				Drivers: []drivers.Driver{mock.New(mock.Options{})}, Logger: hclog.NewNullLogger(),
				CPUTotalMHz: 4000, MemoryTotalMB: 8192, HostEnv: map[string]string{},
			})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { defer close(done); a.Run(runCtx) }()
			defer func() { stop(); <-done }()

			spec := JobSpec{ID: name, Count: 3, MaxParallel: 3, MinHealthyTime: 100 * time.Millisecond}
			for version, env := range []string{"1", "2"} {
				spec.Version = env
				job := spec.APIJob()
				// On this node only: the nodes of the other cases are
				// still registered.
				job["Constraints"] = []any{map[string]any{"LTarget": "${node.unique.name}", "RTarget": name, "Operand": "="}}
				if _, err := api.Jobs().Register(ctx, job); err != nil {
					t.Fatal(err)
				}
				waitRunning(ctx, t, api, name, uint64(version), spec.Count)
			}

			mu.Lock()
			defer mu.Unlock()
			switch {
			case c.oldServer:
				if seen["allocs-sync"] == 0 || seen["allocs-index"] == 0 || seen["allocs/get"] == 0 {
					t.Errorf("requests %v: want allocs-sync refused, then allocs-index and allocs/get", seen)
				}
			case c.oldClient:
				if seen["allocs-sync"] != 0 || seen["allocs-index"] == 0 || seen["allocs/get"] == 0 {
					t.Errorf("requests %v: want allocs-index and allocs/get only", seen)
				}
			default:
				if seen["allocs-sync"] == 0 || seen["allocs-index"] != 0 || seen["allocs/get"] != 0 {
					t.Errorf("requests %v: want allocs-sync only", seen)
				}
			}
			if seen["allocs/update"] == 0 {
				t.Errorf("requests %v: the client reported nothing", seen)
			}
			t.Logf("requests: %v", seen)
		})
	}
}

// waitRunning waits until the job has count allocs of version running and
// none of another version still wanted.
func waitRunning(ctx context.Context, t *testing.T, api *apiclient.Client, job string, version uint64, count int) {
	t.Helper()
	var last []*structs.AllocationListStub
	for ctx.Err() == nil {
		allocs, _, err := api.Jobs().Allocations(ctx, job, nil)
		if err != nil {
			t.Fatal(err)
		}
		last = allocs
		running, others := 0, 0
		for _, a := range allocs {
			switch {
			case a.JobVersion == version && a.ClientStatus == structs.AllocClientStatusRunning:
				running++
			case a.JobVersion != version && a.ClientStatus == structs.AllocClientStatusRunning:
				others++
			}
		}
		if running == count && others == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, a := range last {
		t.Logf("alloc %s version %d desired %s client %s", a.ID, a.JobVersion, a.DesiredStatus, a.ClientStatus)
	}
	t.Fatalf("job %s: %d allocs of version %d not all running", job, count, version)
}
