package scheduler

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// The disconnect block in the reconciler: each case is a group of count 2
// whose web[0] runs on a ready node and whose web[1] is on node n2, the
// allocations as the case sets them, reconciled at a time (an offset from
// baseTime, when n2 disconnected); the plan is printed as Plan.String.

func disconnectJob(version uint64, d *structs.DisconnectStrategy) *structs.Job {
	tg := &structs.TaskGroup{
		Name: "web", Count: 2,
		Tasks:            []*structs.Task{{Name: "main", Driver: "mock"}},
		Update:           structs.DefaultUpdateStrategy(),
		ReschedulePolicy: structs.DefaultReschedulePolicy(structs.JobTypeService),
		RestartPolicy:    structs.DefaultRestartPolicy(structs.JobTypeService),
		Disconnect:       d,
	}
	return &structs.Job{ID: "example", Name: "example", Type: structs.JobTypeService, Version: version,
		Priority: 50, TaskGroups: []*structs.TaskGroup{tg}}
}

func lostAfter(d time.Duration, replace bool, reconcile string) *structs.DisconnectStrategy {
	return &structs.DisconnectStrategy{LostAfter: d, Replace: replace, Reconcile: reconcile}
}

func at(d time.Duration) time.Time { return baseTime.Add(d) }

// dalloc is an allocation of the job's web group, running (healthy, no
// deployment), created at baseTime-1h.
func dalloc(job *structs.Job, idx int, id, node string) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Name: structs.AllocName(job.ID, "web", idx), JobID: job.ID, Job: job, TaskGroup: "web",
		NodeID: node, DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
		CreateTime: at(-time.Hour).UnixNano(),
		TaskStates: map[string]*structs.TaskState{"main": {State: structs.TaskStateRunning, StartedAt: at(-time.Hour)}},
	}
}

// unknown marks a as unknown since baseTime (its node disconnected).
func unknown(a *structs.Allocation) *structs.Allocation {
	a.ClientStatus = structs.AllocClientStatusUnknown
	a.AppendClientStatus(structs.AllocClientStatusUnknown, baseTime)
	return a
}

// replacementOf is a replacement of orig placed at baseTime+d on n3.
func replacementOf(job *structs.Job, orig *structs.Allocation, id string, d time.Duration) *structs.Allocation {
	r := dalloc(job, orig.Index(), id, "n3")
	r.PreviousAllocation = orig.ID
	r.CreateTime = at(d).UnixNano()
	r.TaskStates["main"].StartedAt = at(d)
	return r
}

func disconnectNodes(n2 string) []*structs.Node {
	return []*structs.Node{
		{ID: "n1", Status: structs.NodeStatusReady},
		{ID: "n2", Status: n2, StatusUpdatedAt: baseTime.UnixNano()},
		{ID: "n3", Status: structs.NodeStatusReady},
	}
}

func reconcileAt(job *structs.Job, nodes []*structs.Node, now time.Duration, allocs ...*structs.Allocation) string {
	n := 0
	p := Reconcile(Input{
		Job: job, Allocs: allocs, Nodes: nodes, Now: at(now), EvalID: "e0", EvalPriority: 50,
		IDs: func() string { n++; return fmt.Sprintf("id%d", n) },
	})
	return p.String()
}

func TestReconcileDisconnect(t *testing.T) {
	v0 := disconnectJob(0, lostAfter(10*time.Minute, true, ""))
	noReplace := disconnectJob(0, lostAfter(10*time.Minute, false, ""))
	type tc struct {
		name  string
		plan  func() string
		want  string
		notes string
	}
	cases := []tc{
		{name: "unknown within lost_after: replaced, followed up at its end", plan: func() string {
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDisconnected), time.Minute,
				dalloc(v0, 0, "web0", "n1"), unknown(dalloc(v0, 1, "web1", "n2")))
		}, want: `
place example.web[1] id=id1 previous=web1
followup-eval id2 wait-until=2026-01-01T00:10:00Z triggered-by=max-disconnect-timeout
followup-alloc web1 eval=id2
desired web: ignore=1 place=1 migrate=0 stop=0 inplace=0 destructive=0 canary=0`},
		{name: "unknown without replace: its index waits", plan: func() string {
			return reconcileAt(noReplace, disconnectNodes(structs.NodeStatusDisconnected), time.Minute,
				dalloc(noReplace, 0, "web0", "n1"), unknown(dalloc(noReplace, 1, "web1", "n2")))
		}, want: `
desired web: ignore=1 place=0 migrate=0 stop=0 inplace=0 destructive=0 canary=0`},
		{name: "unknown without replace: past lost_after, on a down node, still waited for", plan: func() string {
			return reconcileAt(noReplace, disconnectNodes(structs.NodeStatusDown), time.Hour,
				dalloc(noReplace, 0, "web0", "n1"), unknown(dalloc(noReplace, 1, "web1", "n2")))
		}, want: `
desired web: ignore=1 place=0 migrate=0 stop=0 inplace=0 destructive=0 canary=0`},
		{name: "unknown and replaced, followed up already: nothing to do", plan: func() string {
			web1 := unknown(dalloc(v0, 1, "web1", "n2"))
			web1.FollowupEvalID = "e1"
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDisconnected), 2*time.Minute,
				dalloc(v0, 0, "web0", "n1"), web1, replacementOf(v0, web1, "web1r", time.Minute))
		}, want: `
desired web: ignore=2 place=0 migrate=0 stop=0 inplace=0 destructive=0 canary=0`},
		{name: "lost_after over: lost, and replaced", plan: func() string {
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDisconnected), 10*time.Minute,
				dalloc(v0, 0, "web0", "n1"), unknown(dalloc(v0, 1, "web1", "n2")))
		}, want: `
place example.web[1] id=id1 previous=web1
stop example.web[1] id=web1 "alloc is lost since its node is down" client-status=lost
desired web: ignore=1 place=1 migrate=0 stop=1 inplace=0 destructive=0 canary=0`},
		{name: "lost_after over, replaced already: lost only", plan: func() string {
			web1 := unknown(dalloc(v0, 1, "web1", "n2"))
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDisconnected), 10*time.Minute,
				dalloc(v0, 0, "web0", "n1"), web1, replacementOf(v0, web1, "web1r", time.Minute))
		}, want: `
stop example.web[1] id=web1 "alloc is lost since its node is down" client-status=lost
desired web: ignore=2 place=0 migrate=0 stop=1 inplace=0 destructive=0 canary=0`},
		{name: "node down: lost at once", plan: func() string {
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDown), time.Minute,
				dalloc(v0, 0, "web0", "n1"), unknown(dalloc(v0, 1, "web1", "n2")))
		}, want: `
place example.web[1] id=id1 previous=web1
stop example.web[1] id=web1 "alloc is lost since its node is down" client-status=lost
desired web: ignore=1 place=1 migrate=0 stop=1 inplace=0 destructive=0 canary=0`},
		{name: "a replacement that is not of the disconnection is not one", plan: func() string {
			// Placed before the alloc went unknown (a surge replacement,
			// say): the alloc is replaced for its disconnection.
			web1 := unknown(dalloc(v0, 1, "web1", "n2"))
			old := replacementOf(v0, web1, "other", -time.Minute)
			old.Name = structs.AllocName("example", "web", 2)
			return reconcileAt(v0, disconnectNodes(structs.NodeStatusDisconnected), time.Minute,
				dalloc(v0, 0, "web0", "n1"), web1, old)
		}, want: `
place example.web[1] id=id1 previous=web1
stop example.web[2] id=other "alloc not needed due to job update"
followup-eval id2 wait-until=2026-01-01T00:10:00Z triggered-by=max-disconnect-timeout
followup-alloc web1 eval=id2
desired web: ignore=1 place=1 migrate=0 stop=1 inplace=0 destructive=0 canary=0`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := strings.TrimSpace(c.plan())
			if want := strings.TrimSpace(c.want); got != want {
				t.Fatalf("plan\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestReconcileReconnect: an allocation that was unknown is reported
// again while its replacement runs; reconcile picks the one kept, the
// other stops "alloc not needed due to disconnected client reconnect".
func TestReconcileReconnect(t *testing.T) {
	const keepOrig, keepRepl = "stop example.web[1] id=web1r", "stop example.web[1] id=web1 "
	scored := func(a *structs.Allocation, s float64) *structs.Allocation {
		a.Metrics = &structs.AllocationMetric{Scores: map[string]float64{a.NodeID + disconnectScoreSuffix: s}}
		return a
	}
	cases := []struct {
		name      string
		reconcile string
		setup     func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation)
		want      string
	}{
		{"keep_original", structs.ReconcileKeepOriginal, nil, keepOrig},
		{"keep_replacement", structs.ReconcileKeepReplacement, nil, keepRepl},
		{"longest_running: the original ran longer", structs.ReconcileLongestRunning, nil, keepOrig},
		{"longest_running: the original restarted since", structs.ReconcileLongestRunning,
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				orig.TaskStates["main"].StartedAt = at(5 * time.Minute)
				return job, repl
			}, keepRepl},
		{"best_score: no scores keep the original", structs.ReconcileBestScore, nil, keepOrig},
		{"best_score: the better node wins", structs.ReconcileBestScore,
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				scored(orig, 0.4)
				scored(repl, 0.7)
				return job, repl
			}, keepRepl},
		{"best_score: a tie keeps the original", structs.ReconcileBestScore,
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				scored(orig, 0.5)
				scored(repl, 0.5)
				return job, repl
			}, keepOrig},
		{"default is best_score", "",
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				scored(repl, 0.1)
				return job, repl
			}, keepRepl},
		{"a newer version's replacement is kept whatever reconcile says", structs.ReconcileKeepOriginal,
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				v1 := disconnectJob(1, job.TaskGroups[0].Disconnect)
				repl.Job = v1
				return v1, repl
			}, keepRepl},
		{"an original that failed meanwhile gives way", structs.ReconcileKeepOriginal,
			func(job *structs.Job, orig, repl *structs.Allocation) (*structs.Job, *structs.Allocation) {
				orig.ClientStatus = structs.AllocClientStatusFailed
				return job, repl
			}, keepRepl},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := disconnectJob(0, lostAfter(10*time.Minute, true, c.reconcile))
			orig := unknown(dalloc(job, 1, "web1", "n2"))
			orig.ClientStatus = structs.AllocClientStatusRunning
			orig.AppendClientStatus(structs.AllocClientStatusRunning, at(3*time.Minute))
			repl := replacementOf(job, orig, "web1r", time.Minute)
			if c.setup != nil {
				job, repl = c.setup(job, orig, repl)
			}
			got := reconcileAt(job, disconnectNodes(structs.NodeStatusReady), 4*time.Minute,
				dalloc(job, 0, "web0", "n1"), orig, repl)
			line := ""
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "stop ") {
					if line != "" {
						t.Fatalf("two stops:\n%s", got)
					}
					line = l
				}
			}
			if !strings.HasPrefix(line, c.want) || !strings.Contains(line, `"`+structs.AllocReconnected+`"`) {
				t.Fatalf("plan\n%s\nwant a line starting %q", got, c.want)
			}
			if strings.Contains(got, "place ") {
				t.Fatalf("a placement on reconnect:\n%s", got)
			}
		})
	}
}

// TestReconcileStopOnClientAfter: a lost allocation of a group whose
// client stops it after stop_on_client_after is replaced only then.
func TestReconcileStopOnClientAfter(t *testing.T) {
	d := time.Minute
	job := disconnectJob(0, &structs.DisconnectStrategy{StopOnClientAfter: &d, Replace: true})
	lost := func() *structs.Allocation {
		a := dalloc(job, 1, "web1", "n2")
		a.ClientStatus = structs.AllocClientStatusLost
		a.AppendClientStatus(structs.AllocClientStatusLost, baseTime)
		return a
	}
	got := strings.TrimSpace(reconcileAt(job, disconnectNodes(structs.NodeStatusDown), 30*time.Second, dalloc(job, 0, "web0", "n1"), lost()))
	want := `followup-eval id1 wait-until=2026-01-01T00:01:00Z triggered-by=max-disconnect-timeout
followup-alloc web1 eval=id1
desired web: ignore=1 place=0 migrate=0 stop=0 inplace=0 destructive=0 canary=0`
	if got != want {
		t.Fatalf("before stop_on_client_after:\n%s\nwant\n%s", got, want)
	}
	got = strings.TrimSpace(reconcileAt(job, disconnectNodes(structs.NodeStatusDown), time.Minute, dalloc(job, 0, "web0", "n1"), lost()))
	want = `place example.web[1] id=id1 previous=web1
stop example.web[1] id=web1 "alloc is lost since its node is down" client-status=lost
desired web: ignore=1 place=1 migrate=0 stop=1 inplace=0 destructive=0 canary=0`
	if got != want {
		t.Fatalf("after:\n%s\nwant\n%s", got, want)
	}
}
