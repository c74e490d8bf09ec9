package health

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/structs"
)

// TestScriptCheckStatus: exit 0 passes, 1 warns, anything else or a
// command that did not run to its end is critical, as Nomad's.
func TestScriptCheckStatus(t *testing.T) {
	cases := []struct {
		code   int
		err    error
		status string
	}{
		{0, nil, structs.CheckPassing},
		{1, nil, structs.CheckWarning},
		{2, nil, structs.CheckCritical},
		{137, nil, structs.CheckCritical},
		{-1, context.DeadlineExceeded, structs.CheckCritical},
		{0, errors.New("exec: not found"), structs.CheckCritical},
	}
	for _, c := range cases {
		var gotTask string
		var gotCmd []string
		sc := ScriptChecker{Task: "web", Command: "probe", Args: []string{"-x"}, Exec: func(_ context.Context, task string, cmd []string) ([]byte, int, error) {
			gotTask, gotCmd = task, cmd
			return []byte("said something\n"), c.code, c.err
		}}
		r := resultOf("s/c", sc.Check(context.Background()))
		if r.Status != c.status || gotTask != "web" || strings.Join(gotCmd, " ") != "probe -x" {
			t.Errorf("exit %d err %v: status %s (task %q cmd %q), want %s", c.code, c.err, r.Status, gotTask, gotCmd, c.status)
		}
		if c.status == structs.CheckWarning && !strings.Contains(r.Output, "said something") {
			t.Errorf("warning output %q lacks the command's", r.Output)
		}
	}
}

// TestScriptCheckTimeout: a command that outlives the check's timeout is
// given up on (its context ends, which kills it) and the result is
// critical; the next run comes an interval later.
func TestScriptCheckTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := clock.NewFake(t0)
		var mu sync.Mutex
		var got []CheckResult
		var ended []error
		hang := ScriptChecker{Task: "web", Command: "sleep", Exec: func(ctx context.Context, _ string, _ []string) ([]byte, int, error) {
			<-ctx.Done()
			mu.Lock()
			ended = append(ended, ctx.Err())
			mu.Unlock()
			return nil, -1, ctx.Err()
		}}
		ctx, cancel := context.WithCancel(context.Background())
		wait := RunChecks(ctx, c, []Check{{Name: "s/hang", Interval: time.Minute, Timeout: 2 * time.Second, Checker: hang}}, func(r CheckResult) {
			mu.Lock()
			got = append(got, r)
			mu.Unlock()
		})
		synctest.Wait()
		c.Advance(0)                // the first run is due at once
		time.Sleep(2 * time.Second) // the timeout is on the bubble's clock
		synctest.Wait()
		mu.Lock()
		res, end := append([]CheckResult(nil), got...), append([]error(nil), ended...)
		mu.Unlock()
		cancel()
		wait()
		if len(res) != 1 || res[0].Status != structs.CheckCritical || len(end) != 1 || !errors.Is(end[0], context.DeadlineExceeded) {
			t.Fatalf("results %+v, ended %v", res, end)
		}
	})
}

func TestAllocScriptChecks(t *testing.T) {
	exec := func(context.Context, string, []string) ([]byte, int, error) { return nil, 0, nil }
	tg := &structs.TaskGroup{
		Tasks: []*structs.Task{{Name: "web", Services: []*structs.Service{{Name: "api", TaskName: "web", Checks: []*structs.ServiceCheck{
			{Name: "own", Type: structs.CheckTypeScript, Command: "/bin/check", Args: []string{"${NOMAD_ALLOC_ID}"}},
		}}}}, {Name: "side"}},
		Services: []*structs.Service{{Name: "grp", Checks: []*structs.ServiceCheck{
			{Name: "in-side", Type: structs.CheckTypeScript, TaskName: "side", Command: "true"},
		}}},
	}
	replace := func(s string) string { return strings.ReplaceAll(s, "${NOMAD_ALLOC_ID}", "a1") }
	checks, err := AllocChecks(&structs.Allocation{}, tg, replace, exec)
	if err != nil {
		t.Fatal(err)
	}
	grp, own := checks[0].Checker.(ScriptChecker), checks[1].Checker.(ScriptChecker)
	if grp.Task != "side" || own.Task != "web" || own.Command != "/bin/check" || strings.Join(own.Args, ",") != "a1" {
		t.Fatalf("checks %+v %+v", grp, own)
	}
	if _, err := AllocChecks(&structs.Allocation{}, tg, replace, nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("script checks without exec: %v", err)
	}
}
