package e2e

// Helpers of the rollout policy tests (rollout_policies_test.go): update
// blocks, tasks that fail on chosen starts, alloc watchers and
// deployment waits.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// policyUpdate is an update block body: the given lines, then fastUpdate's
// health settings.
func policyUpdate(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("      " + l + "\n")
	}
	return b.String() + fastUpdate
}

// rescheduleEvery replaces a failed alloc without limit, one second after
// it failed: failures come one at a time.
const rescheduleEvery = `      unlimited      = true
      delay          = "1s"
      delay_function = "constant"`

// failingStarts is a task script that fails (exit 1 after 300ms) on the
// starts numbered in fail (1 for the first start of any alloc of the
// version, 2 for the second…) and runs on the others. The starts are
// counted with directories made in dir, which every task shares.
func failingStarts(dir string, fail ...int) string {
	cases := make([]string, len(fail))
	for i, n := range fail {
		cases[i] = fmt.Sprint(n)
	}
	return fmt.Sprintf(`n=1
while ! mkdir %q/start-$n 2>/dev/null; do n=$((n+1)); done
case $n in %s) sleep 0.3; exit 1;; esac
exec sleep 600`, dir, strings.Join(cases, "|"))
}

// allocWatch lists a job's allocations every 20ms and hands each list to
// a check function, until stopped. The check runs on the watch's
// goroutine; what it records may be read once stop returns.
type allocWatch struct {
	stopCh, done chan struct{}
	samples      int
}

func watchAllocs(t testing.TB, c *apiclient.Client, jobID string, check func([]*structs.AllocationListStub)) *allocWatch {
	w := &allocWatch{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stopCh:
				return
			case <-time.After(20 * time.Millisecond):
			}
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				continue
			}
			w.samples++
			check(allocs)
		}
	}()
	return w
}

// stop ends the watch and returns the number of samples, failing the test
// when there were too few to mean anything.
func (w *allocWatch) stop(t testing.TB) int {
	t.Helper()
	close(w.stopCh)
	<-w.done
	if w.samples < 10 {
		t.Fatalf("only %d samples of the allocations", w.samples)
	}
	return w.samples
}

// waitDeployment polls one deployment until cond accepts it.
func waitDeploymentByID(t testing.TB, c *apiclient.Client, id, what string, limit time.Duration, cond func(*structs.Deployment) error) *structs.Deployment {
	t.Helper()
	var got *structs.Deployment
	eventually(t, limit, what, func() error {
		d, _, err := c.Deployments().Info(ctx(t), id, nil)
		if err != nil {
			return err
		}
		if err := cond(d); err != nil {
			return fmt.Errorf("%w; deployment %s %q", err, d.Status, d.StatusDescription)
		}
		got = d
		return nil
	})
	return got
}

// pausedWith accepts a paused deployment with the description want.
func pausedWith(want string) func(*structs.Deployment) error {
	return func(d *structs.Deployment) error {
		if d.Status != structs.DeploymentStatusPaused || d.StatusDescription != want {
			return fmt.Errorf("not paused with %q", want)
		}
		return nil
	}
}

// webState is the deployment's state of group web.
func webState(t testing.TB, d *structs.Deployment) *structs.DeploymentState {
	t.Helper()
	s := d.TaskGroups["web"]
	if s == nil {
		t.Fatalf("deployment %s has no group web: %s", d.ID, jsonString(d))
	}
	return s
}

// holdStill checks for a while that the job gets no new alloc of version
// and that its deployment stays paused.
func holdStill(t testing.TB, c *apiclient.Client, jobID string, version uint64, deploymentID string, d time.Duration) {
	t.Helper()
	count := func() int {
		n := 0
		for _, a := range allocsOf(t, c, jobID) {
			if a.JobVersion == version {
				n++
			}
		}
		return n
	}
	had := count()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if n := count(); n != had {
			t.Fatalf("paused, the job got more allocs of v%d: %d, had %d", version, n, had)
		}
		if got := deploymentByID(t, c, deploymentID); got.Status != structs.DeploymentStatusPaused {
			t.Fatalf("the deployment left its pause by itself: %s %q", got.Status, got.StatusDescription)
		}
	}
}

// killOld kills the processes of the job's allocs of version 0 named
// job.web[i] for each index, and waits until the client reports each
// failed. It returns the killed allocs' IDs by name.
func killOld(t testing.TB, c *apiclient.Client, jobID string, indexes ...int) map[string]string {
	t.Helper()
	killed := map[string]string{}
	for _, i := range indexes {
		name := fmt.Sprintf("%s.web[%d]", jobID, i)
		for _, a := range allocsOf(t, c, jobID) {
			if a.Name == name && a.JobVersion == 0 && a.DesiredStatus == structs.AllocDesiredStatusRun {
				killed[name] = a.ID
				killAllocProcs(a.ID)
			}
		}
		if killed[name] == "" {
			t.Fatalf("no alloc %s to kill", name)
		}
	}
	eventually(t, 20*time.Second, "the killed allocs failed", func() error {
		for _, a := range allocsOf(t, c, jobID) {
			if killed[a.Name] == a.ID && a.ClientStatus != structs.AllocClientStatusFailed {
				return fmt.Errorf("%s is %s", a.Name, a.ClientStatus)
			}
		}
		return nil
	})
	return killed
}
