package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomad "github.com/hashicorp/nomad/api"

	"github.com/droverhq/drover/structs"
)

// TestJobScaleRollsOutTheCount scales a running job up and down with the
// CLI on a dev agent, reads its scale status and events through the
// official Go client, and checks what is refused.
func TestJobScaleRollsOutTheCount(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	s := rolloutSpec{ID: "scale", Count: 2, Version: "1", Update: "      max_parallel     = 2\n      min_healthy_time = \"100ms\""}
	s.run(t, c)
	waitRollout(t, c, "scale", 0, structs.DeploymentStatusSuccessful, 30*time.Second)

	out, err := p.cli(t, "job", "scale", "-message", "more", "scale", "4")
	if err != nil || !strings.Contains(out, "Monitoring evaluation") || !strings.Contains(out, "successful") {
		t.Fatalf("job scale up: %v\n%s", err, out)
	}
	if n := countAllocs(allocsOf(t, c, "scale"), 1, running); n != 4 {
		t.Fatalf("%d allocs of version 1 running after scaling to 4", n)
	}
	if out, err := p.cli(t, "job", "scale", "-detach", "scale", "web", "1"); err != nil || !strings.Contains(out, "Evaluation ID: ") {
		t.Fatalf("job scale down: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "one alloc running", func() error {
		if n := countAllocs(allocsOf(t, c, "scale"), 2, running); n != 1 {
			return fmt.Errorf("%d running", n)
		}
		return nil
	})

	nc, err := nomad.NewClient(&nomad.Config{Address: "http://" + p.httpAddr})
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := nc.Jobs().ScaleStatus("scale", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := st.TaskGroups["web"]
	if st.JobID != "scale" || st.JobStopped || g.Desired != 1 || len(g.Events) != 2 || *g.Events[0].Count != 1 ||
		g.Events[0].PreviousCount != 4 || g.Events[1].Message != "more" || g.Events[1].EvalID == nil {
		t.Fatalf("scale status %+v, group %+v", st, g)
	}
	out, err = p.cli(t, "job", "scaling-events", "-verbose", "scale")
	if err != nil || !strings.Contains(out, "PreviousCount") || !strings.Contains(out, "more") {
		t.Fatalf("scaling-events: %v\n%s", err, out)
	}

	// Through the official client, and what is refused.
	three := 3
	if _, _, err := nc.Jobs().Scale("scale", "web", &three, "by the Go client", false, nil, nil); err != nil {
		t.Fatalf("Go client scale: %v", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"job", "scale", "scale", "db", "2"}, `task group "db" specified for scaling does not exist in job`},
		{[]string{"job", "scale", "scale", "web", "-1"}, ""},
		{[]string{"job", "scale", "scale", "web", "two"}, `Failed to convert count "two" to a number`},
		{[]string{"job", "scale", "nope", "2"}, `No job(s) with prefix or id "nope" found`},
	} {
		out, err := p.cli(t, c.args...)
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("%v: %v\n%s", c.args, err, out)
		}
	}
	neg := -1
	if _, _, err := nc.Jobs().Scale("scale", "web", &neg, "", false, nil, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("a negative count through the API: %v", err)
	}
}

// TestJobScaleDuringARollout scales a job up and then down while a
// rolling update of it runs (max_parallel 1): each scale is a new version
// that carries the rollout on at the new count, and the group never has
// fewer than count − max_parallel allocs running.
func TestJobScaleDuringARollout(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	update := "      max_parallel     = 1\n      min_healthy_time = \"1s\""
	s := rolloutSpec{ID: "scaling", Count: 3, Version: "1", Update: update}
	s.run(t, c)
	waitRollout(t, c, "scaling", 0, structs.DeploymentStatusSuccessful, 30*time.Second)

	// minRunning samples the allocs running (and meant to) until stopped.
	minRunning := func() (stop func() int) {
		done, out := make(chan struct{}), make(chan int)
		go func() {
			least := 1 << 30
			for {
				select {
				case <-done:
					out <- least
					return
				case <-time.After(20 * time.Millisecond):
				}
				if allocs, err := jobAllocs(t, c, "scaling"); err == nil {
					n := 0
					for _, a := range allocs {
						if a.DesiredStatus == structs.AllocDesiredStatusRun && running(a) {
							n++
						}
					}
					least = min(least, n)
				}
			}
		}()
		return func() int { close(done); return <-out }
	}
	midRollout := func(version uint64) {
		t.Helper()
		eventually(t, 30*time.Second, fmt.Sprintf("the rollout of v%d under way", version), func() error {
			d, err := latestDeployment(t, c, "scaling")
			if err != nil {
				return err
			}
			if d.JobVersion != version || d.Status != structs.DeploymentStatusRunning || d.TaskGroups["web"].PlacedAllocs < 1 {
				return fmt.Errorf("latest deployment v%d %s", d.JobVersion, d.Status)
			}
			return nil
		})
	}
	only := func(version uint64, count int) {
		t.Helper()
		allocs := allocsOf(t, c, "scaling")
		if n := countAllocs(allocs, version, running); n != count {
			t.Fatalf("%d allocs of v%d running, want %d", n, version, count)
		}
		for _, a := range allocs {
			if a.DesiredStatus == structs.AllocDesiredStatusRun && a.JobVersion != version {
				t.Fatalf("alloc %s of v%d still meant to run beside v%d", a.ID, a.JobVersion, version)
			}
		}
	}

	// Up: v1 (a new env) rolls, the scale to 5 is v2.
	sample := minRunning()
	s.Version = "2"
	s.run(t, c)
	midRollout(1)
	if out, err := p.cli(t, "job", "scale", "-detach", "scaling", "5"); err != nil {
		t.Fatalf("job scale up mid-rollout: %v\n%s", err, out)
	}
	waitRollout(t, c, "scaling", 2, structs.DeploymentStatusSuccessful, 60*time.Second)
	if least := sample(); least < 3-1 {
		t.Fatalf("%d allocs running at the worst sample while 3 rolled with max_parallel 1", least)
	}
	only(2, 5)

	// Down: v3 rolls, the scale to 2 is v4.
	sample = minRunning()
	s.Version, s.Count = "3", 5
	s.run(t, c)
	midRollout(3)
	if out, err := p.cli(t, "job", "scale", "-detach", "scaling", "web", "2"); err != nil {
		t.Fatalf("job scale down mid-rollout: %v\n%s", err, out)
	}
	waitRollout(t, c, "scaling", 4, structs.DeploymentStatusSuccessful, 60*time.Second)
	if least := sample(); least < 2-1 {
		t.Fatalf("%d allocs running at the worst sample while scaling to 2 with max_parallel 1", least)
	}
	only(4, 2)
}
