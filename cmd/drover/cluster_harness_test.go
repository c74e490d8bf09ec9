package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/droverhq/drover/fsm"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/state"
	"github.com/droverhq/drover/state/statetest"
	"github.com/droverhq/drover/structs"
)

// cliCluster is an API over a real FSM with no scheduler: a test plays the
// servers' part with apply.
type cliCluster struct {
	t    *testing.T
	b    *httpapi.MemBackend
	addr string
	node *structs.Node
}

func newCLICluster(t *testing.T) *cliCluster {
	t.Helper()
	b := httpapi.NewMemBackend()
	b.Now = func() time.Time { return statetest.T0 }
	srv := httptest.NewServer(httpapi.New(b, nil, httpapi.WithClock(b.Now)).Handler())
	t.Cleanup(func() {
		// End blocking queries a failed test left behind, then close.
		srv.CloseClientConnections()
		srv.Close()
	})
	old := statusClock
	statusClock = func() time.Time { return statetest.T0.Add(90 * time.Second) }
	t.Cleanup(func() { statusClock = old })
	c := &cliCluster{t: t, b: b, addr: srv.URL, node: statetest.Node("n1")}
	c.apply(fsm.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: c.node})
	return c
}

// cliTimeout bounds one in-process CLI run of these tests.
const cliTimeout = 30 * time.Second

// runBounded is runCLI bounded by cliTimeout: a CLI that never returns
// fails the test instead of hanging it.
func runBounded(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code     int
		out, err string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb strings.Builder
		code := run(args, strings.NewReader(stdin), &lockedWriter{w: &out}, &lockedWriter{w: &errb})
		done <- result{code, out.String(), errb.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.out, r.err
	case <-time.After(cliTimeout):
		t.Fatalf("drover %v did not return within %v", args, cliTimeout)
	}
	return 0, "", ""
}

// lockedWriter serializes writes (the CLI writes from one goroutine; the
// lock keeps the race detector content when a test gives up on it).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *cliCluster) apply(mt fsm.MessageType, req any) uint64 {
	c.t.Helper()
	_, idx, err := c.b.Apply(context.Background(), mt, req)
	if err != nil {
		c.t.Errorf("apply %v: %v", mt, err)
	}
	return idx
}

// waitPendingEval blocks until an evaluation of job with the trigger is
// pending, and returns it.
func (c *cliCluster) waitPendingEval(jobID, trigger string) *structs.Evaluation {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var index uint64
	for ctx.Err() == nil {
		res, idx, err := c.b.State().BlockingQuery(ctx, index, 10*time.Second,
			func(_ memdb.WatchSet, snap *state.Snapshot) (any, uint64, error) {
				evals, err := snap.EvalsByJob("default", jobID)
				if err != nil {
					return nil, 0, err
				}
				for _, e := range evals {
					if e.Status == structs.EvalStatusPending && e.TriggeredBy == trigger {
						return e, 1 << 62, nil
					}
				}
				idx, err := snap.Index(state.TableEvals)
				return nil, idx, err
			})
		if err != nil {
			c.t.Errorf("waiting for an eval: %v", err)
			return nil
		}
		if e, ok := res.(*structs.Evaluation); ok {
			return e
		}
		index = idx
	}
	c.t.Errorf("no pending %s eval of %s", trigger, jobID)
	return nil
}

func (c *cliCluster) job(id string) *structs.Job {
	j, err := c.b.State().Snapshot().JobByID("default", id)
	if err != nil || j == nil {
		c.t.Fatalf("job %s: %v", id, err)
	}
	return j
}

// place completes eval by placing n allocs of the job's first group in a
// new deployment (when dep is true) and returns the allocs and deployment.
func (c *cliCluster) place(eval *structs.Evaluation, n int, dep bool) ([]*structs.Allocation, *structs.Deployment) {
	job := c.job(eval.JobID)
	var d *structs.Deployment
	depID := ""
	if dep {
		d = statetest.Deployment(job, 0)
		d.ID = statetest.ID(fmt.Sprintf("dep/%s/%d", job.ID, job.JobModifyIndex))
		d.JobModifyIndex = job.JobModifyIndex
		d.TaskGroups[job.TaskGroups[0].Name].AutoRevert = true
		depID = d.ID
	}
	var allocs []*structs.Allocation
	for i := range n {
		a := statetest.Alloc(job, c.node, eval.ID, depID, i)
		a.ID = statetest.ID(fmt.Sprintf("alloc/%s/%d/%d", job.ID, job.JobModifyIndex, i))
		allocs = append(allocs, a)
	}
	c.apply(fsm.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		EvalID: eval.ID, Job: job, AllocsPlaced: allocs, Deployment: d, UpdatedAt: statetest.T0.UnixNano()})
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.QueuedAllocations = map[string]int{job.TaskGroups[0].Name: 0}
	c.apply(fsm.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	return allocs, d
}

// health reports allocs running with the given deployment health.
func (c *cliCluster) health(allocs []*structs.Allocation, healthy bool) {
	var ups []*structs.Allocation
	for _, a := range allocs {
		ups = append(ups, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusRunning,
			DeploymentStatus: &structs.AllocDeploymentStatus{Healthy: &healthy, Timestamp: statetest.T0}})
	}
	c.apply(fsm.AllocClientUpdateRequestType, &structs.AllocClientUpdateRequest{Allocs: ups, UpdatedAt: statetest.T0.UnixNano()})
}

func (c *cliCluster) setDeployment(d *structs.Deployment, status, desc string) {
	c.apply(fsm.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{
		DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: d.ID, Status: status, StatusDescription: desc},
		UpdatedAt:        statetest.T0.UnixNano()})
}

// writeJobFile writes a raw_exec service job with count allocs and returns
// its path.
func writeJobFile(t *testing.T, id string, count int, command string) string {
	t.Helper()
	src := fmt.Sprintf(`job %q {
  datacenters = ["dc1"]
  group "web" {
    count = %d
    task "server" {
      driver = "raw_exec"
      config {
        command = %q
      }
    }
  }
}
`, id, count, command)
	p := filepath.Join(t.TempDir(), id+".hcl")
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
