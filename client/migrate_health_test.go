package client

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/structs"
)

// The replacement of an alloc moving off a draining node belongs to no
// deployment: the client judges its health by the group's migrate block
// (here task_states for 5s) and reports it, so that the servers stop the
// old alloc. An alloc outside a deployment that continues nothing is not
// judged.
func TestReportsMigrationReplacementHealthByMigrateBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServer()
		a, stop := startAgent(t, srv, t.TempDir())
		defer stop()
		synctest.Wait()
		repl := serviceAlloc("repl", a.NodeID(), "", 0)
		repl.PreviousAllocation = "old-alloc"
		tg := repl.Job.TaskGroups[0]
		tg.Update.MinHealthyTime = time.Hour // not this one: no deployment
		tg.Migrate = &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
			MinHealthyTime: 5 * time.Second, HealthyDeadline: time.Minute}
		plain := serviceAlloc("plain", a.NodeID(), "", 0)
		plain.Job = repl.Job
		srv.put(repl)
		srv.put(plain)
		time.Sleep(reportWindow)
		synctest.Wait()
		if !healthUndecided(srv.alloc("repl")) {
			t.Fatal("health decided before the migrate block's min_healthy_time")
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if got := srv.alloc("repl"); !got.IsHealthy() {
			t.Fatalf("replacement not healthy after migrate.min_healthy_time: %+v", got.DeploymentStatus)
		}
		if got := srv.alloc("plain"); !healthUndecided(got) || got.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("an alloc that continues nothing: %s %+v", got.ClientStatus, got.DeploymentStatus)
		}
	})
}
