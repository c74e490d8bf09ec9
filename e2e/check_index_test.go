package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/droverhq/drover/apiclient"
)

// TestCheckIndexRaceHasOneWinner races `job run -check-index N` writes of
// different versions, all planned against the same index, on a dev
// agent: in every round exactly one registers and the others are refused
// with a conflict naming both indexes, and the job's version moves by one.
// The CLI refuses a stale index too, with exit 1.
func TestCheckIndexRaceHasOneWinner(t *testing.T) {
	p := startDevAgent(t)
	c := p.client()
	base := rolloutSpec{ID: "race", Count: 1, Version: "0", Update: "      max_parallel = 1"}
	registerJob(t, c, base.job(t))

	const racers = 4
	for round := 1; round <= 3; round++ {
		job, _, err := c.Jobs().Info(ctx(t), "race", nil)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := base
				s.Version = fmt.Sprintf("%d-%d", round, i)
				_, errs[i] = c.Jobs().RegisterChecked(ctx(t), s.job(t), job.JobModifyIndex)
			}()
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			var se *apiclient.StatusError
			switch {
			case err == nil:
				won++
			case errors.As(err, &se) && se.Code == http.StatusConflict && strings.Contains(err.Error(), fmt.Sprint(job.JobModifyIndex)):
			default:
				t.Fatalf("round %d: a racer failed otherwise: %v", round, err)
			}
		}
		after, _, err := c.Jobs().Info(ctx(t), "race", nil)
		if err != nil {
			t.Fatal(err)
		}
		if won != 1 || after.Version != job.Version+1 {
			t.Fatalf("round %d: %d winners, version %d -> %d", round, won, job.Version, after.Version)
		}
	}

	// The CLI with a stale index: exit 1, nothing registered.
	job, _, err := c.Jobs().Info(ctx(t), "race", nil)
	if err != nil {
		t.Fatal(err)
	}
	s := base
	s.Version = "stale"
	path := filepath.Join(t.TempDir(), "race.hcl")
	if err := os.WriteFile(path, []byte(s.hcl()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := p.cli(t, "job", "run", "-detach", "-check-index", fmt.Sprint(job.JobModifyIndex-1), path)
	if err == nil || !strings.Contains(out, "index") {
		t.Fatalf("stale -check-index: %v\n%s", err, out)
	}
	if now, _, _ := c.Jobs().Info(ctx(t), "race", nil); now.Version != job.Version {
		t.Fatalf("a stale -check-index registered version %d", now.Version)
	}
}
