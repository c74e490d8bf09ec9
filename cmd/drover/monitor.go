package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// Exit codes of a monitored run, as Nomad's.
const (
	exitOK               = 0
	exitDeploymentFailed = 1
	exitPlacementFailure = 2
)

// monitorWait is how long one blocking query of the monitor waits.
const monitorWait = 5 * time.Minute

// evalMonitor follows an evaluation to its end and then the deployment it
// started, printing Nomad's "==> Monitoring evaluation" lines and a live
// deployment table. Every read is a blocking query: nothing polls.
type evalMonitor struct {
	c   *apiclient.Client
	out io.Writer
	// tty redraws the deployment table in place with ANSI cursor moves;
	// otherwise each change is appended.
	tty bool
	now func() time.Time
	// followDeployment is off for job stop: there is nothing to roll out.
	followDeployment bool
	// verbose prints full IDs (-verbose).
	verbose bool
}

// newMonitor returns a monitor printing to w: a live table redrawn in
// place on a terminal, appended blocks otherwise.
func newMonitor(c *apiclient.Client, w io.Writer, followDeployment bool) *evalMonitor {
	return &evalMonitor{c: c, out: w, tty: isTerminal(w), now: statusClock, followDeployment: followDeployment}
}

// monitorExit turns a monitor's result into the command's: a failure to
// follow what (an error, exit 1), or the monitor's exit code.
func monitorExit(what string, code int, err error) error {
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error monitoring %s: %v", what, err)}
	}
	if code != exitOK {
		return exitCode(code)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// id is an ID as the monitor prints it: shortened, unless verbose.
func (m *evalMonitor) id(s string) string {
	if m.verbose {
		return s
	}
	return idShort(s)
}

func (m *evalMonitor) stamp() string { return fmtTime(m.now()) }

func (m *evalMonitor) headf(format string, args ...any) {
	fmt.Fprintf(m.out, "==> %s: %s\n", m.stamp(), fmt.Sprintf(format, args...))
}

func (m *evalMonitor) linef(format string, args ...any) {
	fmt.Fprintf(m.out, "    %s: %s\n", m.stamp(), fmt.Sprintf(format, args...))
}

// run monitors evalID and returns the exit code: 0 when everything was
// placed and the deployment (if any) succeeded, 1 when it failed, 2 on a
// placement failure.
func (m *evalMonitor) run(ctx context.Context, evalID string) (int, error) {
	m.headf("Monitoring evaluation %q", m.id(evalID))
	eval, err := m.waitEval(ctx, evalID)
	if err != nil {
		return 1, err
	}
	allocs, _, err := m.c.Evaluations().Allocations(ctx, eval.ID, nil)
	if err != nil {
		return 1, fmt.Errorf("querying the evaluation's allocations: %w", err)
	}
	sort.Slice(allocs, func(i, j int) bool { return allocs[i].Name < allocs[j].Name })
	for _, a := range allocs {
		m.linef("Allocation %q created: node %q, group %q", m.id(a.ID), m.id(a.NodeID), a.TaskGroup)
	}
	if len(eval.FailedTGAllocs) > 0 {
		m.headf("Evaluation %q finished with status %q but failed to place all allocations:", m.id(eval.ID), eval.Status)
		m.printPlacementFailures(eval)
		if eval.BlockedEval != "" {
			m.linef("Evaluation %q waiting for additional capacity to place remainder", m.id(eval.BlockedEval))
		}
		return exitPlacementFailure, nil
	}
	m.headf("Evaluation %q finished with status %q", m.id(eval.ID), eval.Status)
	if eval.Status != structs.EvalStatusComplete {
		return 1, nil
	}
	if !m.followDeployment {
		return exitOK, nil
	}
	dep, err := m.findDeployment(ctx, eval, allocs)
	if err != nil || dep == nil {
		return exitOK, err
	}
	return m.followDeploymentToEnd(ctx, dep, eval.JobID, true)
}

// waitEval blocks until the evaluation is terminal, printing what it
// learns on the way; a failed evaluation with a follow-up is followed.
func (m *evalMonitor) waitEval(ctx context.Context, id string) (*structs.Evaluation, error) {
	var (
		index  uint64
		status string
		first  = true
	)
	for {
		e, meta, err := m.c.Evaluations().Info(ctx, id, &apiclient.QueryOptions{WaitIndex: index, WaitTime: monitorWait})
		if err != nil {
			return nil, fmt.Errorf("querying evaluation %s: %w", id, err)
		}
		index = meta.LastIndex
		if first {
			m.linef("Evaluation triggered by job %q", e.JobID)
			first = false
		}
		if status != "" && e.Status != status {
			m.linef("Evaluation status changed: %q -> %q", status, e.Status)
		}
		status = e.Status
		if e.Terminal() {
			if e.Status == structs.EvalStatusFailed && e.NextEval != "" {
				m.linef("Evaluation %q failed (%s); monitoring next evaluation %q", m.id(e.ID), e.StatusDescription, m.id(e.NextEval))
				id, status, first, index = e.NextEval, "", false, 0
				continue
			}
			return e, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// printPlacementFailures explains, per group, why allocations found no
// node, as Nomad's "Placement Failure" lines.
func (m *evalMonitor) printPlacementFailures(eval *structs.Evaluation) {
	groups := make([]string, 0, len(eval.FailedTGAllocs))
	for g := range eval.FailedTGAllocs {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		metric := eval.FailedTGAllocs[g]
		n := eval.QueuedAllocations[g]
		if n == 0 {
			n = metric.CoalescedFailures + 1
		}
		noun := "allocation"
		if n != 1 {
			noun += "s"
		}
		m.linef("Task Group %q (failed to place %d %s):", g, n, noun)
		for _, l := range allocMetricLines(metric) {
			fmt.Fprintf(m.out, "      * %s\n", l)
		}
	}
}

// allocMetricLines words a placement metric as Nomad does: filtered
// classes and constraints, exhausted nodes, classes and dimensions.
func allocMetricLines(mt *structs.AllocationMetric) []string {
	var out []string
	if mt == nil {
		return out
	}
	if mt.NodesEvaluated == 0 {
		out = append(out, "No nodes were eligible for evaluation")
	}
	for _, dc := range sortedKeys(mt.NodesAvailable) {
		if mt.NodesAvailable[dc] == 0 {
			out = append(out, fmt.Sprintf("No nodes are available in datacenter %q", dc))
		}
	}
	for _, k := range sortedKeys(mt.ClassFiltered) {
		out = append(out, fmt.Sprintf("Class %q: %d nodes excluded by filter", k, mt.ClassFiltered[k]))
	}
	for _, k := range sortedKeys(mt.ConstraintFiltered) {
		out = append(out, fmt.Sprintf("Constraint %q: %d nodes excluded by filter", k, mt.ConstraintFiltered[k]))
	}
	if mt.NodesExhausted > 0 {
		out = append(out, fmt.Sprintf("Resources exhausted on %d nodes", mt.NodesExhausted))
	}
	for _, k := range sortedKeys(mt.ClassExhausted) {
		out = append(out, fmt.Sprintf("Class %q exhausted on %d nodes", k, mt.ClassExhausted[k]))
	}
	for _, k := range sortedKeys(mt.DimensionExhausted) {
		out = append(out, fmt.Sprintf("Dimension %q exhausted on %d nodes", k, mt.DimensionExhausted[k]))
	}
	for _, q := range mt.QuotaExhausted {
		out = append(out, fmt.Sprintf("Quota limit hit %q", q))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// findDeployment returns the deployment the evaluation's allocations
// belong to or, failing that, the job's latest deployment if it was
// created by or after the evaluation; nil when there is none.
func (m *evalMonitor) findDeployment(ctx context.Context, eval *structs.Evaluation, allocs []*structs.AllocationListStub) (*structs.Deployment, error) {
	// The allocations one evaluation places share its deployment.
	if len(allocs) > 0 {
		stub := allocs[0]
		a, _, err := m.c.Allocations().Info(ctx, stub.ID, nil)
		if err != nil {
			return nil, fmt.Errorf("querying allocation %s: %w", stub.ID, err)
		}
		if a.DeploymentID != "" {
			d, _, err := m.deployment(ctx, a.DeploymentID, 0)
			return d, err
		}
	}
	d, _, err := m.latestDeployment(ctx, eval.JobID, 0)
	if err != nil || d == nil || d.CreateIndex < eval.CreateIndex {
		return nil, nil //nolint:nilerr // no deployment to follow is not an error
	}
	return d, nil
}

func (m *evalMonitor) deployment(ctx context.Context, id string, index uint64) (*structs.Deployment, uint64, error) {
	var d structs.Deployment
	meta, err := m.c.Get(ctx, "/v1/deployment/"+url.PathEscape(id),
		&apiclient.QueryOptions{WaitIndex: index, WaitTime: monitorWait}, &d)
	if err != nil {
		return nil, 0, fmt.Errorf("querying deployment %s: %w", id, err)
	}
	return &d, meta.LastIndex, nil
}

// latestDeployment returns the job's latest deployment, nil if none.
func (m *evalMonitor) latestDeployment(ctx context.Context, jobID string, index uint64) (*structs.Deployment, uint64, error) {
	var d *structs.Deployment
	meta, err := m.c.Get(ctx, "/v1/job/"+url.PathEscape(jobID)+"/deployment",
		&apiclient.QueryOptions{WaitIndex: index, WaitTime: monitorWait}, &d)
	if err != nil {
		return nil, 0, fmt.Errorf("querying the latest deployment of job %s: %w", jobID, err)
	}
	if d != nil && d.ID == "" {
		d = nil
	}
	return d, meta.LastIndex, nil
}

// followDeploymentToEnd redraws the deployment's table until it ends and
// returns the exit code; a failure that rolls back is followed into the
// rollback deployment (once) and still exits 1.
func (m *evalMonitor) followDeploymentToEnd(ctx context.Context, d *structs.Deployment, jobID string, followRollback bool) (int, error) {
	m.headf("Monitoring deployment %q", m.id(d.ID))
	table := &deploymentTable{out: m.out, tty: m.tty}
	index := d.ModifyIndex
	for {
		table.draw(m.stamp(), d)
		if !d.Active() {
			break
		}
		if waitsForPromotion(d) {
			// As Nomad's monitor: the rollout cannot go on without the
			// user, so say what to run and stop watching.
			fmt.Fprintln(m.out)
			fmt.Fprintf(m.out, "  ! Deployment %q waiting to be promoted: drover deployment promote %s\n", m.id(d.ID), m.id(d.ID))
			return exitOK, nil
		}
		next, idx, err := m.deployment(ctx, d.ID, index)
		if err != nil {
			return 1, err
		}
		d, index = next, idx
	}
	fmt.Fprintln(m.out)
	switch d.Status {
	case structs.DeploymentStatusSuccessful:
		fmt.Fprintf(m.out, "  ✓ Deployment %q successful\n", m.id(d.ID))
		return exitOK, nil
	case structs.DeploymentStatusCancelled:
		fmt.Fprintf(m.out, "  ! Deployment %q cancelled\n", m.id(d.ID))
		return exitDeploymentFailed, nil
	}
	fmt.Fprintf(m.out, "  ! Deployment %q failed\n", m.id(d.ID))
	if followRollback && strings.Contains(d.StatusDescription, "rolling back to job version") {
		rb, err := m.waitRollback(ctx, jobID, d.ID)
		if err != nil {
			return exitDeploymentFailed, err
		}
		if rb != nil {
			fmt.Fprintln(m.out)
			m.headf("Monitoring the rollback")
			_, err := m.followDeploymentToEnd(ctx, rb, jobID, false)
			return exitDeploymentFailed, err
		}
	}
	return exitDeploymentFailed, nil
}

// waitsForPromotion reports whether a running deployment waits for a
// manual promotion that it is ready for: every group with canaries to
// promote has them all healthy, and at least one of those groups does not
// promote itself (auto_promote).
func waitsForPromotion(d *structs.Deployment) bool {
	if d.Status != structs.DeploymentStatusRunning {
		return false
	}
	manual := false
	for _, s := range d.TaskGroups {
		if s == nil || s.DesiredCanaries == 0 || s.Promoted {
			continue
		}
		if s.HealthyAllocs < s.DesiredCanaries {
			return false
		}
		manual = manual || !s.AutoPromote
	}
	return manual
}

// waitRollback blocks until the job's latest deployment is another than
// failedID: the deployment of the reverted version.
func (m *evalMonitor) waitRollback(ctx context.Context, jobID, failedID string) (*structs.Deployment, error) {
	var index uint64
	for {
		d, idx, err := m.latestDeployment(ctx, jobID, index)
		if err != nil {
			return nil, err
		}
		if d != nil && d.ID != failedID {
			return d, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		index = idx
	}
}

// deploymentTable draws a deployment's status and its per-group table.
// On a terminal it redraws in place (cursor up, clear to the end); else it
// appends a new block only when the contents changed.
type deploymentTable struct {
	out   io.Writer
	tty   bool
	lines int    // lines of the last draw, for the cursor move
	last  string // contents of the last draw, without the time
}

func (t *deploymentTable) draw(stamp string, d *structs.Deployment) {
	body := renderDeployment(d)
	if body == t.last {
		return
	}
	block := "    " + stamp + "\n" + body
	if t.tty && t.lines > 0 {
		fmt.Fprintf(t.out, "\x1b[%dA\x1b[J", t.lines)
	} else if t.last != "" {
		fmt.Fprintln(t.out)
	}
	fmt.Fprint(t.out, block)
	t.last, t.lines = body, strings.Count(block, "\n")
}

// renderDeployment is the deployment's status block and group table,
// every line indented by four spaces.
func renderDeployment(d *structs.Deployment) string {
	var b strings.Builder
	kv := [][2]string{
		{"ID", idShort(d.ID)},
		{"Job ID", d.JobID},
		{"Job Version", fmt.Sprint(d.JobVersion)},
		{"Status", d.Status},
		{"Description", d.StatusDescription},
	}
	if r := d.Restart; r != nil {
		kv = append(kv, [2]string{"Restart", restartKind(r)})
	}
	if d.Status == structs.DeploymentStatusPaused {
		// A pause (an operator's, a checkpoint's, a failure's) waits for
		// someone: say what continues it.
		next := "drover deployment resume " + idShort(d.ID) + " (or fail)"
		if !d.ResumeAt.IsZero() {
			next = "resumes by itself at " + fmtTime(d.ResumeAt) + "; drover deployment pause " + idShort(d.ID) + " holds it"
		}
		kv = append(kv, [2]string{"Next", next})
	}
	if cur, ok := currentZones(d); ok {
		kv = append(kv, [2]string{"Current zone", cur})
	}
	printKV(&b, kv)
	b.WriteString("\nDeployed\n")
	printDeploymentGroups(&b, d)
	printWaits(&b, d)
	printZones(&b, d)
	printAnalyses(&b, d, nil)
	var out strings.Builder
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			out.WriteString("    ")
		}
		out.WriteString(l)
	}
	return out.String()
}

// printDeploymentGroups prints the per-group table of a deployment (with
// Order and State, in Order, when its groups roll one at a time).
func printDeploymentGroups(w io.Writer, d *structs.Deployment) {
	tw := newTabs(w)
	names, ordered := deploymentGroupNames(d)
	fmt.Fprintln(tw, groupHeader(ordered))
	for _, g := range names {
		s := d.TaskGroups[g]
		promoted := "N/A"
		if s.DesiredCanaries > 0 {
			promoted = fmt.Sprint(s.Promoted)
		}
		fmt.Fprint(tw, groupOrderCells(g, s, ordered))
		fmt.Fprintf(tw, "%t\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", s.AutoRevert, promoted, s.DesiredTotal,
			s.DesiredCanaries, s.PlacedAllocs, s.HealthyAllocs, s.UnhealthyAllocs, fmtTime(s.RequireProgressBy))
	}
	tw.Flush()
}
