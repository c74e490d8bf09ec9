package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// pollInterval is how often scenarios read the servers' progress.
const pollInterval = 200 * time.Millisecond

// env is what a scenario runs with: the servers' addresses (and, when the
// bench started them, the processes), the fleet, the result being filled
// and the progress line.
type env struct {
	addrs    func() []string
	servers  *Servers // nil for external servers
	fleet    *Fleet
	res      *Result
	progress *Progress
	cfg      BenchConfig
	cleanups []func()   // run in reverse order once the result is reported
	reads    *readProbe // nil when no probe runs (see reads.go)
}

// call runs fn against each running server in turn until one succeeds.
func (e *env) call(ctx context.Context, fn func(context.Context, *apiclient.Client) error) error {
	var errs []error
	for _, a := range e.addrs() {
		c, err := apiclient.New(a)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = fn(cctx, c)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, fmt.Errorf("%s: %w", a, err))
	}
	if len(errs) == 0 {
		return errors.New("no server running")
	}
	return errors.Join(errs...)
}

// register submits a job and returns how long the call took.
func (e *env) register(ctx context.Context, spec JobSpec) (time.Duration, error) {
	_, took, err := e.registerEval(ctx, spec)
	return took, err
}

// registerEval submits a job and returns its evaluation's ID and how long
// the call took.
func (e *env) registerEval(ctx context.Context, spec JobSpec) (string, time.Duration, error) {
	start := time.Now()
	var evalID string
	err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
		r, err := c.Jobs().Register(ctx, spec.APIJob())
		if err == nil {
			evalID = r.EvalID
		}
		return err
	})
	return evalID, time.Since(start), err
}

// waitEval waits until the evaluation is terminal and returns it.
func (e *env) waitEval(ctx context.Context, id string) (*structs.Evaluation, error) {
	var out *structs.Evaluation
	err := poll(ctx, "evaluation "+id, func() (bool, error) {
		err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
			ev, _, err := c.Evaluations().Info(ctx, id, nil)
			if err == nil {
				out = ev
			}
			return err
		})
		return err == nil && out != nil && out.Terminal(), err
	})
	return out, err
}

// summary reads a job's summary, its groups' counts added up.
func (e *env) summary(ctx context.Context, jobID string) (structs.TaskGroupSummary, error) {
	var out structs.TaskGroupSummary
	err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
		s, _, err := c.Jobs().Summary(ctx, jobID, nil)
		if err != nil {
			return err
		}
		for _, g := range s.Summary {
			out.Queued += g.Queued
			out.Starting += g.Starting
			out.Running += g.Running
			out.Complete += g.Complete
			out.Failed += g.Failed
			out.Lost += g.Lost
			out.Unknown += g.Unknown
		}
		return nil
	})
	return out, err
}

// summaryReaders bounds the summaries read at once by summaries.
const summaryReaders = 64

// summaries reads the summaries of many jobs, summaryReaders at a time.
// One after the other, a sweep over the churn's 100 jobs took up to 15 s
// on busy servers, and the sweep, not the servers, then set the
// scenario's time (17.9-24.2 s to all running; 10.1-13.5 s read 64 at a
// time).
func (e *env) summaries(ctx context.Context, jobIDs []string) ([]structs.TaskGroupSummary, error) {
	out := make([]structs.TaskGroupSummary, len(jobIDs))
	errs := make([]error, len(jobIDs))
	sem := make(chan struct{}, summaryReaders)
	var wg sync.WaitGroup
	for i, id := range jobIDs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = e.summary(ctx, id)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// latestDeployment reads a job's newest deployment.
func (e *env) latestDeployment(ctx context.Context, jobID string) (*structs.Deployment, error) {
	var out *structs.Deployment
	err := e.call(ctx, func(ctx context.Context, c *apiclient.Client) error {
		d, _, err := c.Jobs().LatestDeployment(ctx, jobID, nil)
		out = d
		return err
	})
	return out, err
}

// placed counts a group's allocations that exist (placed), whatever
// their client status.
func placed(s structs.TaskGroupSummary) int {
	return s.Starting + s.Running + s.Complete + s.Failed + s.Lost + s.Unknown
}

// poll calls check every pollInterval until it reports done, fails, or
// ctx ends. A failed read (a server away during a failover) is retried.
func poll(ctx context.Context, what string, check func() (bool, error)) error {
	return pollEvery(ctx, pollInterval, what, check)
}

// summaryInterval is how often to read the summary of a job of count
// allocs: pollInterval per 10,000 allocs.
func summaryInterval(count int) time.Duration {
	return pollInterval * time.Duration(max(1, count/10000))
}

// pollEvery is poll at the given interval.
func pollEvery(ctx context.Context, every time.Duration, what string, check func() (bool, error)) error {
	var last error
	for {
		done, err := check()
		if err == nil && done {
			return nil
		}
		if err != nil {
			if errors.Is(err, errFatal) {
				return err
			}
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %s (last error: %v)", ErrTimeout, what, last)
		case <-time.After(every):
		}
	}
}

// errFatal marks a poll error that must not be retried.
var errFatal = errors.New("scenario failed")

// waitDeployment waits until the job's newest deployment is for version
// and successful, drawing its healthy count; a failed or cancelled one is
// fatal.
func (e *env) waitDeployment(ctx context.Context, jobID string, version uint64, label string, onHealthy func(healthy int)) error {
	return poll(ctx, fmt.Sprintf("deployment of %s version %d", jobID, version), func() (bool, error) {
		d, err := e.latestDeployment(ctx, jobID)
		if err != nil || d == nil || d.JobVersion != version {
			return false, err
		}
		healthy, total := 0, 0
		for _, s := range d.TaskGroups {
			healthy += s.HealthyAllocs
			total += s.DesiredTotal
		}
		e.progress.Draw(label, healthy, total)
		if onHealthy != nil {
			onHealthy(healthy)
		}
		switch d.Status {
		case structs.DeploymentStatusSuccessful:
			return true, nil
		case structs.DeploymentStatusFailed, structs.DeploymentStatusCancelled:
			return false, fmt.Errorf("%w: deployment %s %s: %s", errFatal, d.ID, d.Status, d.StatusDescription)
		}
		return false, nil
	})
}

// waitRunning waits until count allocations of the job run; placedAt,
// when not nil, is called once when count are placed.
func (e *env) waitRunning(ctx context.Context, jobID string, count int, label string, placedAt func()) error {
	sawPlaced := false
	// A summary is computed from every alloc of the job: read it less
	// often for big jobs, so that the observer does not load the server.
	every := summaryInterval(count)
	return pollEvery(ctx, every, fmt.Sprintf("%d allocs of %s running", count, jobID), func() (bool, error) {
		s, err := e.summary(ctx, jobID)
		if err != nil {
			return false, err
		}
		if !sawPlaced && placed(s) >= count {
			sawPlaced = true
			if placedAt != nil {
				placedAt()
			}
		}
		if sawPlaced {
			e.progress.Draw(label+" run", s.Running, count)
		} else {
			e.progress.Draw(label+" place", placed(s), count)
		}
		return s.Running >= count, nil
	})
}
