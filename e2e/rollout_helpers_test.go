package e2e

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// rolloutSpec describes one version of a test job: a raw_exec task run
// by /bin/sh, written out as a job file and parsed as `drover job run`
// would.
type rolloutSpec struct {
	ID      string
	Type    string // "service" unless set
	Count   int
	Update  string // body of the group's update block
	Version string // VERSION in the task's env: a new value is a new version
	Script  string // the task's shell script; default: sleep
	// Group is extra text inside the group block (service, network…).
	Group string
	// Task is extra text inside the task block.
	Task string
	// Reschedule is the group's reschedule block body; default: none.
	Reschedule string
}

func (s rolloutSpec) hcl() string {
	typ := s.Type
	if typ == "" {
		typ = structs.JobTypeService
	}
	script := s.Script
	if script == "" {
		script = "exec sleep 600"
	}
	resched := s.Reschedule
	if resched == "" {
		resched = "      attempts  = 0\n      unlimited = false"
	}
	count := ""
	if typ != structs.JobTypeSystem {
		count = fmt.Sprintf("count = %d", s.Count)
	}
	return fmt.Sprintf(`job %q {
  type = %q
  group "web" {
    %s
    update {
%s
    }
    reschedule {
%s
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
%s
    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      env {
        VERSION = %q
      }
      resources {
        cpu    = 20
        memory = 32
      }
%s
    }
  }
}
`, s.ID, typ, count, s.Update, resched, s.Group, script, s.Version, s.Task)
}

// job parses the spec.
func (s rolloutSpec) job(t testing.TB) *structs.Job {
	t.Helper()
	job, _, err := jobspec.Parse(s.ID+".hcl", []byte(s.hcl()), jobspec.Options{})
	if err != nil {
		t.Fatalf("parsing %s:\n%s\n%v", s.ID, s.hcl(), err)
	}
	return job
}

// run registers the spec and returns the job as parsed.
func (s rolloutSpec) run(t testing.TB, c *apiclient.Client) *structs.Job {
	t.Helper()
	j := s.job(t)
	registerJob(t, c, j)
	return j
}

// waitRollout waits for the job's latest deployment to be of version
// and in status, and returns it.
func waitRollout(t testing.TB, c *apiclient.Client, jobID string, version uint64, status string, limit time.Duration) *structs.Deployment {
	t.Helper()
	var got *structs.Deployment
	eventually(t, limit, fmt.Sprintf("deployment of %s v%d %s", jobID, version, status), func() error {
		d, err := latestDeployment(t, c, jobID)
		if err != nil {
			return err
		}
		if d.JobVersion != version || d.Status != status {
			return fmt.Errorf("latest is v%d %s: %s", d.JobVersion, d.Status, d.StatusDescription)
		}
		got = d
		return nil
	})
	return got
}

// versionDeployment waits for the job's deployment of version to reach
// status, whether or not a later one exists.
func versionDeployment(t testing.TB, c *apiclient.Client, jobID string, version uint64, status string, limit time.Duration) *structs.Deployment {
	t.Helper()
	var got *structs.Deployment
	eventually(t, limit, fmt.Sprintf("deployment of %s v%d %s", jobID, version, status), func() error {
		var deps []*structs.Deployment
		if _, err := c.Get(ctx(t), "/v1/job/"+jobID+"/deployments", nil, &deps); err != nil {
			return err
		}
		for _, d := range deps {
			if d.JobVersion == version && d.Status == status {
				got = d
				return nil
			}
		}
		return fmt.Errorf("deployments: %s", jsonString(deps))
	})
	return got
}

// deploymentByID reads one deployment.
func deploymentByID(t testing.TB, c *apiclient.Client, id string) *structs.Deployment {
	t.Helper()
	d, _, err := c.Deployments().Info(ctx(t), id, nil)
	if err != nil {
		t.Fatalf("reading deployment %s: %v", id, err)
	}
	return d
}

// cli runs the drover binary against the agent and returns its combined
// output.
func (p *agentProc) cli(t testing.TB, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(bounded(t, 60*time.Second), droverBin, args...)
	cmd.Env = append(cmd.Environ(), "DROVER_ADDR=http://"+p.httpAddr, "NOMAD_ADDR=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("drover %s:\n%s", strings.Join(args, " "), out.String())
	return out.String(), err
}

// allocsOf lists a job's allocs, failing the test on error.
func allocsOf(t testing.TB, c *apiclient.Client, jobID string) []*structs.AllocationListStub {
	t.Helper()
	allocs, err := jobAllocs(t, c, jobID)
	if err != nil {
		t.Fatal(err)
	}
	return allocs
}

// countAllocs counts the job's allocs of version that the servers want
// running and that match ok (nil: all).
func countAllocs(allocs []*structs.AllocationListStub, version uint64, ok func(*structs.AllocationListStub) bool) int {
	n := 0
	for _, a := range allocs {
		if a.JobVersion == version && a.DesiredStatus == structs.AllocDesiredStatusRun && (ok == nil || ok(a)) {
			n++
		}
	}
	return n
}

func healthy(a *structs.AllocationListStub) bool {
	return a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil && *a.DeploymentStatus.Healthy
}

func running(a *structs.AllocationListStub) bool {
	return a.ClientStatus == structs.AllocClientStatusRunning
}

// stopJobProcs kills whatever processes the job's allocs left, so that a
// failed test leaks nothing.
func stopJobProcs(t testing.TB, c *apiclient.Client, jobID string) {
	t.Cleanup(func() {
		allocs, err := jobAllocs(t, c, jobID)
		if err != nil {
			return
		}
		for _, a := range allocs {
			killAllocProcs(a.ID)
		}
	})
}

// availability samples a rolling update of a job of count allocs: every
// 20ms it counts the slots not served (count minus running old-version
// allocs minus healthy new ones) and the new allocs not known healthy, and
// keeps the worst of each.
type availability struct {
	stopCh             chan struct{}
	done               chan struct{}
	worstDown, worstIn int
	samples            int
}

func sampleAvailability(t testing.TB, c *apiclient.Client, jobID string, count int, newVersion uint64) *availability {
	s := &availability{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			serving, unknown := 0, 0
			for _, a := range allocs {
				if a.DesiredStatus != structs.AllocDesiredStatusRun {
					continue
				}
				switch {
				case a.JobVersion < newVersion && running(a):
					serving++
				case a.JobVersion == newVersion && healthy(a):
					serving++
				case a.JobVersion == newVersion:
					unknown++
				}
			}
			s.samples++
			s.worstDown = max(s.worstDown, count-serving)
			s.worstIn = max(s.worstIn, unknown)
		}
	}()
	return s
}

func (s *availability) stop() *availability {
	close(s.stopCh)
	<-s.done
	return s
}
