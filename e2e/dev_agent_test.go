package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/internal/loopback"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// agentProc is one `drover agent` process with any arguments.
type agentProc struct {
	t        testing.TB
	name     string
	httpAddr string
	cmd      *exec.Cmd
	logs     *lockedBuffer
	done     chan struct{}
	exitErr  error
}

// startAgentProc runs `drover agent args…`; httpAddr is where its API
// listens. A non-dev client gets raw_exec enabled (withRawExec). The
// process is killed when the test ends (if still running), and its output
// logged if the test failed.
func startAgentProc(t testing.TB, name, httpAddr string, args ...string) *agentProc {
	t.Helper()
	p := &agentProc{t: t, name: name, httpAddr: httpAddr, logs: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(droverBin, append([]string{"agent"}, withRawExec(t, args)...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	p.cmd.Env = append(os.Environ(), "DROVER_ADDR=", "NOMAD_ADDR=")
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		p.exitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			// The tasks of its allocations outlive a killed agent (as
			// Nomad's do): stop them too, or a later test's task may find
			// its port taken by one of them.
			allocs := p.allocIDs()
			_ = p.cmd.Process.Signal(syscall.SIGKILL)
			<-p.done
			if len(allocs) > 0 {
				procs := taskProcs()
				for _, id := range allocs {
					for _, pid := range procs[id] {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			}
		}
		if t.Failed() {
			t.Logf("---- %s output ----\n%s", name, p.logs.String())
		}
	})
	return p
}

// allocIDs lists the allocations the agent's servers know, if it answers
// within a few seconds (a client-only or a stopped agent may not).
func (p *agentProc) allocIDs() []string {
	c, err := apiclient.New(p.httpAddr)
	if err != nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var stubs []*structs.AllocationListStub
	if _, err := c.Get(cctx, "/v1/allocations", nil, &stubs); err != nil {
		return nil
	}
	ids := make([]string, 0, len(stubs))
	for _, a := range stubs {
		ids = append(ids, a.ID)
	}
	return ids
}

// startDevAgent runs `drover agent -dev` on free loopback ports.
func startDevAgent(t testing.TB, extra ...string) *agentProc {
	t.Helper()
	httpAddr, raftAddr := loopback.Addr(t), loopback.Addr(t)
	args := append([]string{"-dev", "-http-addr", httpAddr, "-raft-addr", raftAddr, "-node", "dev", "-log-level", "debug"}, extra...)
	p := startAgentProc(t, "dev", httpAddr, args...)
	p.waitNodeReady(1)
	return p
}

func (p *agentProc) client() *apiclient.Client {
	c, err := apiclient.New(p.httpAddr)
	if err != nil {
		p.t.Fatal(err)
	}
	return c
}

// waitNodeReady waits until n client nodes are ready.
func (p *agentProc) waitNodeReady(n int) {
	p.t.Helper()
	c := p.client()
	eventually(p.t, 30*time.Second, "ready client nodes", func() error {
		nodes, _, err := c.Nodes().List(ctx(p.t), nil)
		if err != nil {
			return err
		}
		ready := 0
		for _, nd := range nodes {
			if nd.Status == structs.NodeStatusReady {
				ready++
			}
		}
		if ready < n {
			return fmt.Errorf("%d of %d nodes ready", ready, n)
		}
		return nil
	})
}

// interrupt sends SIGINT and waits (bounded) for the exit; it returns
// the process's exit code.
func (p *agentProc) interrupt() int {
	p.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		p.t.Fatalf("%s did not exit within 30s of SIGINT", p.name)
	}
	if p.exitErr == nil {
		return 0
	}
	if ee, ok := p.exitErr.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// parseJob reads a job file as `drover job run` would, with -var values.
func parseJob(t testing.TB, path string, vars ...string) *structs.Job {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	job, _, err := jobspec.Parse(filepath.Base(path), src, jobspec.Options{Vars: vars})
	if err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	return job
}

// registerJob submits job through PUT /v1/jobs, as {"Job": …}.
func registerJob(t testing.TB, c *apiclient.Client, job *structs.Job) *apiclient.JobRegisterResponse {
	t.Helper()
	resp, err := c.Jobs().Register(ctx(t), job)
	if err != nil {
		t.Fatalf("registering %s: %v", job.ID, err)
	}
	return resp
}

// jobAllocs lists a job's allocations.
func jobAllocs(t testing.TB, c *apiclient.Client, jobID string) ([]*structs.AllocationListStub, error) {
	allocs, _, err := c.Jobs().Allocations(ctx(t), jobID, nil)
	return allocs, err
}

// runningAllocs returns the IDs of the job's allocations that the servers
// want running and the client reports running, at the given version.
func runningAllocs(allocs []*structs.AllocationListStub, version uint64) []string {
	var out []string
	for _, a := range allocs {
		if a.JobVersion == version && a.DesiredStatus == structs.AllocDesiredStatusRun &&
			a.ClientStatus == structs.AllocClientStatusRunning {
			out = append(out, a.ID)
		}
	}
	return out
}

// taskProcs finds live processes by the NOMAD_ALLOC_ID in their
// environment: alloc ID → PIDs.
func taskProcs() map[string][]int {
	out := map[string][]int{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err != nil || zombie(stat) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if id, ok := strings.CutPrefix(string(kv), "NOMAD_ALLOC_ID="); ok {
				out[id] = append(out[id], pid)
			}
		}
	}
	return out
}

// zombie reports whether /proc/<pid>/stat describes a dead process not
// yet reaped.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	return stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// deployment returns the job's latest deployment.
func latestDeployment(t testing.TB, c *apiclient.Client, jobID string) (*structs.Deployment, error) {
	var deps []*structs.Deployment
	if _, err := c.Get(ctx(t), "/v1/job/"+jobID+"/deployments", nil, &deps); err != nil {
		return nil, err
	}
	var latest *structs.Deployment
	for _, d := range deps {
		if latest == nil || d.CreateIndex > latest.CreateIndex {
			latest = d
		}
	}
	if latest == nil {
		return nil, fmt.Errorf("job %s has no deployment", jobID)
	}
	return latest, nil
}

// jsonString renders v for failure messages.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// bounded returns a context that ends after d.
func bounded(t testing.TB, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}
