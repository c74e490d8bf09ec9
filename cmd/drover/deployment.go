package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { registerCommand("deployment", newDeploymentCommand) }

func newDeploymentCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "deployment", Short: "List, inspect, promote, fail, pause and resume deployments"}
	cmd.AddCommand(newDeploymentListCommand(), newDeploymentStatusCommand(),
		newDeploymentPromoteCommand(), newDeploymentFailCommand(),
		newDeploymentPauseCommand(true), newDeploymentPauseCommand(false), newDeploymentUnblockCommand())
	return cmd
}

// opFlags are the flags of the commands that reach an agent.
type opFlags struct {
	cmd     *cobra.Command // the command whose API flags these are
	address string
	verbose bool
	json    bool
	tmpl    string
	detach  bool
	// regions is the Multiregion Deployment table deployment status
	// prints for a multi-region deployment (deployment_unblock.go).
	regions string
}

func (f *opFlags) client() (*apiclient.Client, error) { return apiClientFor(f.cmd, f.address) }

// short is an ID as printed: 8 characters unless -verbose.
func (f *opFlags) short(id string) string {
	if f.verbose || len(id) <= 8 {
		return id
	}
	return id[:8]
}

func (f *opFlags) addAddress(cmd *cobra.Command) {
	f.cmd = cmd
	addAddressFlag(cmd, &f.address)
}
func (f *opFlags) addVerbose(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.verbose, "verbose", false, "show full IDs")
}
func (f *opFlags) addJSON(cmd *cobra.Command) {
	addOutputFlags(cmd, &f.json, &f.tmpl)
}

// formatted reports whether -json or -t was given, and then prints v as
// they ask.
func (f *opFlags) formatted(cmd *cobra.Command, v any) (bool, error) {
	if !f.json && f.tmpl == "" {
		return false, nil
	}
	o := outputFlags{json: f.json, tmpl: f.tmpl}
	return true, o.write(cmd, v)
}
func (f *opFlags) addDetach(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.detach, "detach", false, "print the evaluation ID and return instead of showing the deployment")
}

func newDeploymentListCommand() *cobra.Command {
	var f opFlags
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List deployments, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			deps, _, err := c.Deployments().List(cmd.Context(), nil)
			if err != nil {
				return fmt.Errorf("retrieving deployments: %w", err)
			}
			if deps, err = filterItems(pages.filter, deps); err != nil {
				return err
			}
			if ok, err := f.formatted(cmd, deps); ok {
				return err
			}
			if len(deps) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No deployments found")
				return nil
			}
			f.printDeployments(cmd.OutOrStdout(), deps)
			return nil
		},
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addJSON(cmd)
	pages.addFilter(cmd)
	return cmd
}

// printDeployments prints Nomad's deployment list table.
func (f *opFlags) printDeployments(w io.Writer, deps []*structs.Deployment) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tJob ID\tJob Version\tStatus\tDescription")
	for _, d := range deps {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", f.short(d.ID), d.JobID, d.JobVersion, d.Status, d.StatusDescription)
	}
	_ = tw.Flush()
}

// lookupDeployment resolves an ID or unique ID prefix; several matches are
// printed and fail with exit code 1.
func (f *opFlags) lookupDeployment(ctx context.Context, c *apiclient.Client, w io.Writer, prefix string) (*structs.Deployment, error) {
	if prefix == "" {
		return nil, &exitError{code: 1, msg: "Identifier must not be empty"}
	}
	deps, _, err := c.Deployments().List(ctx, &apiclient.QueryOptions{Prefix: prefix})
	if err != nil {
		return nil, fmt.Errorf("retrieving deployments: %w", err)
	}
	for _, d := range deps {
		if d.ID == prefix {
			return d, nil
		}
	}
	switch len(deps) {
	case 0:
		return nil, &exitError{code: 1, msg: fmt.Sprintf("No deployment(s) with prefix or id %q found", prefix)}
	case 1:
		return deps[0], nil
	}
	fmt.Fprintf(w, "Prefix matched multiple deployments\n\n")
	f.printDeployments(w, deps)
	return nil, exitCode(1)
}

// onDeployment returns a command body that finds the deployment named by
// the first argument (an ID or a unique prefix) and calls fn with it.
func (f *opFlags) onDeployment(fn func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := f.client()
		if err != nil {
			return err
		}
		d, err := f.lookupDeployment(cmd.Context(), c, cmd.OutOrStdout(), args[0])
		if err != nil {
			return err
		}
		return fn(cmd, c, d)
	}
}

func newDeploymentStatusCommand() *cobra.Command {
	var f opFlags
	var monitor bool
	cmd := &cobra.Command{
		Use:   "status [flags] ID",
		Short: "Show a deployment: status, description and per-group progress",
		Long: `Shows the deployment with the given ID, or unique ID prefix: its status,
description and per-group progress. With -monitor, follows it live, as job
run does, until it ends (exit 0 when it succeeds, 1 when it fails) or waits
for a promotion.`,
		Args: cobra.ExactArgs(1),
		RunE: f.onDeployment(func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
			if ok, err := f.formatted(cmd, d); ok {
				return err
			}
			if monitor {
				w := cmd.OutOrStdout()
				m := newMonitor(c, w, true)
				code, err := m.followDeploymentToEnd(cmd.Context(), d, d.JobID, true)
				return monitorExit("the deployment", code, err)
			}
			f.regions = regionsTable(cmd.Context(), c, d, f.short)
			f.printDeploymentStatus(cmd.OutOrStdout(), d)
			printAnalyses(cmd.OutOrStdout(), d, analysisConditions(cmd.Context(), c, d))
			return uiAfter(cmd, c, "/ui/deployments/"+url.PathEscape(d.ID))
		}),
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addJSON(cmd)
	cmd.Flags().BoolVar(&monitor, "monitor", false, "follow the deployment live until it ends")
	addUIFlag(cmd, "deployment")
	return cmd
}

// printDeploymentStatus prints Nomad's layout of one deployment.
func (f *opFlags) printDeploymentStatus(w io.Writer, d *structs.Deployment) {
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', 0)
	fmt.Fprintf(tw, "ID\t= %s\n", f.short(d.ID))
	fmt.Fprintf(tw, "Job ID\t= %s\n", d.JobID)
	fmt.Fprintf(tw, "Job Version\t= %d\n", d.JobVersion)
	fmt.Fprintf(tw, "Status\t= %s\n", d.Status)
	fmt.Fprintf(tw, "Description\t= %s\n", d.StatusDescription)
	if d.Status == structs.DeploymentStatusPaused && !d.ResumeAt.IsZero() {
		fmt.Fprintf(tw, "Resumes At\t= %s\n", fmtTime(d.ResumeAt))
	}
	_ = tw.Flush()
	if f.regions != "" {
		fmt.Fprintf(w, "\nMultiregion Deployment\n%s", f.regions)
	}
	if len(d.TaskGroups) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDeployed\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	names, ordered := deploymentGroupNames(d)
	fmt.Fprintln(tw, groupHeader(ordered))
	for _, n := range names {
		s := d.TaskGroups[n]
		fmt.Fprint(tw, groupOrderCells(n, s, ordered))
		promoted := "N/A"
		if s.DesiredCanaries > 0 {
			promoted = fmt.Sprint(s.Promoted)
		}
		deadline := "N/A"
		if !s.RequireProgressBy.IsZero() {
			deadline = s.RequireProgressBy.Local().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%t\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", s.AutoRevert, promoted, s.DesiredTotal,
			s.DesiredCanaries, s.PlacedAllocs, s.HealthyAllocs, s.UnhealthyAllocs, deadline)
	}
	_ = tw.Flush()
	printWaits(w, d)
	printZones(w, d)
}

// deploymentGroupNames returns the deployment's groups in the order its
// tables list them: by Order (then name, groups without one last) when
// its groups roll one at a time (ordered: some group has Order > 0), else
// by name.
func deploymentGroupNames(d *structs.Deployment) (names []string, ordered bool) {
	names = sortedKeys(d.TaskGroups)
	order := func(n string) int {
		if s := d.TaskGroups[n]; s != nil && s.Order > 0 {
			return s.Order
		}
		return math.MaxInt
	}
	for _, n := range names {
		ordered = ordered || order(n) != math.MaxInt
	}
	if ordered {
		sort.SliceStable(names, func(i, j int) bool { return order(names[i]) < order(names[j]) })
	}
	return names, ordered
}

// groupHeader is the header of a deployment's group table: Nomad's, with
// Order and State after the group's name when its groups roll in order.
func groupHeader(ordered bool) string {
	if ordered {
		return "Task Group\tOrder\tState\tAuto Revert\tPromoted\tDesired\tCanaries\tPlaced\tHealthy\tUnhealthy\tProgress Deadline"
	}
	return "Task Group\tAuto Revert\tPromoted\tDesired\tCanaries\tPlaced\tHealthy\tUnhealthy\tProgress Deadline"
}

// groupOrderCells is the start of a group's row: its name, then, when the
// deployment's groups roll in order, its Order and State ("-" for none).
func groupOrderCells(name string, s *structs.DeploymentState, ordered bool) string {
	if !ordered {
		return name + "\t"
	}
	order, state := "-", "-"
	if s.Order > 0 {
		order = fmt.Sprint(s.Order)
	}
	if s.State != "" {
		state = s.State
	}
	return name + "\t" + order + "\t" + state + "\t"
}

// printZones prints, for each group that rolls out by zones (by group
// name), a table of its zones in rollout order: size, healthy new allocs,
// those in flight, failures counted against the zone's disruption budget,
// and state. The zone "" (nodes without the attribute) is "(none)".
func printZones(w io.Writer, d *structs.Deployment) {
	for _, g := range sortedKeys(d.TaskGroups) {
		s := d.TaskGroups[g]
		if s == nil || len(s.Zones) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nZones of group %s\n", g)
		tw := newTabs(w)
		fmt.Fprintln(tw, "Zone\tSize\tHealthy\tIn Flight\tFailed\tState")
		for _, z := range s.Zones {
			if z != nil {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\n", zoneLabel(z.Name), z.Size, z.Healthy, z.InFlight, z.Failed, z.State)
			}
		}
		_ = tw.Flush()
	}
}

// zoneLabel is a zone's name as printed: the zone "" is "(none)".
func zoneLabel(name string) string {
	if name == "" {
		return "(none)"
	}
	return name
}

// currentZones names the rolling zones of each group that rolls out by
// zones ("web: a, b; api: c"), "none" when no zone rolls; ok is false when
// no group has zones.
func currentZones(d *structs.Deployment) (string, bool) {
	var parts []string
	zoned := false
	for _, g := range sortedKeys(d.TaskGroups) {
		s := d.TaskGroups[g]
		if s == nil || len(s.Zones) == 0 {
			continue
		}
		zoned = true
		var rolling []string
		for _, z := range s.Zones {
			if z != nil && z.State == structs.ZoneStateRolling {
				rolling = append(rolling, zoneLabel(z.Name))
			}
		}
		if len(rolling) > 0 {
			parts = append(parts, g+": "+strings.Join(rolling, ", "))
		}
	}
	if !zoned {
		return "", false
	}
	if len(parts) == 0 {
		return "none", true
	}
	return strings.Join(parts, "; "), true
}

// verbResult prints the outcome of a verb on deployment id: with -detach
// the evaluation ID; otherwise the deployment as it is now.
func (f *opFlags) verbResult(ctx context.Context, c *apiclient.Client, w io.Writer, id string, resp *structs.DeploymentUpdateResponse) error {
	d, err := f.afterVerb(ctx, c, w, id, resp)
	if err != nil || d == nil {
		return err
	}
	fmt.Fprintln(w)
	f.printDeploymentStatus(w, d)
	return nil
}

// verbFollow is verbResult for the verbs that set a rollout going again
// (promote, resume): unless -detach, it follows the deployment live, as
// job run does, until it ends or waits for the user; the exit code is
// job run's.
func (f *opFlags) verbFollow(ctx context.Context, c *apiclient.Client, w io.Writer, id string, resp *structs.DeploymentUpdateResponse) error {
	d, err := f.afterVerb(ctx, c, w, id, resp)
	if err != nil || d == nil {
		return err
	}
	fmt.Fprintln(w)
	m := newMonitor(c, w, true)
	code, err := m.followDeploymentToEnd(ctx, d, d.JobID, true)
	return monitorExit("the deployment", code, err)
}

// afterVerb prints the evaluation ID under -detach and returns nil;
// otherwise it returns the deployment as the verb left it.
func (f *opFlags) afterVerb(ctx context.Context, c *apiclient.Client, w io.Writer, id string, resp *structs.DeploymentUpdateResponse) (*structs.Deployment, error) {
	if f.detach {
		if resp.EvalID != "" {
			fmt.Fprintf(w, "Evaluation ID: %s\n", f.short(resp.EvalID))
		}
		return nil, nil
	}
	// Read at least the verb's own write (the index passes Index-1).
	q := &apiclient.QueryOptions{WaitTime: 5 * time.Second}
	if resp.Index > 1 {
		q.WaitIndex = resp.Index - 1
	}
	d, _, err := c.Deployments().Info(ctx, id, q)
	if err != nil {
		return nil, fmt.Errorf("retrieving deployment: %w", err)
	}
	return d, nil
}

// verbError turns a refused verb into Nomad's message and exit code 1.
func verbError(what string, err error) error {
	return &exitError{code: 1, msg: fmt.Sprintf("Error %s: %v", what, err)}
}

// promoteFlags are promote's own flags.
type promoteFlags struct {
	opFlags
	groups []string
}

func (p *promoteFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&p.groups, "group", nil, "promote only this task group's canaries (repeatable; default all)")
	p.addAddress(cmd)
	p.addVerbose(cmd)
	p.addDetach(cmd)
}

// promote promotes deployment d and prints the outcome.
func (p *promoteFlags) promote(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
	resp, err := c.Deployments().Promote(cmd.Context(), d.ID, p.groups)
	if err != nil {
		return verbError("promoting deployment", err)
	}
	w := cmd.OutOrStdout()
	if len(p.groups) > 0 {
		fmt.Fprintf(w, "Deployment %q promoted for task groups %s\n", f8(p.verbose, d.ID), strings.Join(p.groups, ", "))
	} else {
		fmt.Fprintf(w, "Deployment %q promoted\n", f8(p.verbose, d.ID))
	}
	return p.verbFollow(cmd.Context(), c, w, d.ID, resp)
}

func f8(verbose bool, id string) string { return (&opFlags{verbose: verbose}).short(id) }

func newDeploymentPromoteCommand() *cobra.Command {
	var p promoteFlags
	cmd := &cobra.Command{
		Use:   "promote [flags] ID",
		Short: "Promote a deployment's canaries (all groups, or those named with -group)",
		Args:  cobra.ExactArgs(1),
		RunE: p.onDeployment(func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
			return p.promote(cmd, c, d)
		}),
	}
	p.register(cmd)
	return cmd
}

func newDeploymentFailCommand() *cobra.Command {
	var f opFlags
	cmd := &cobra.Command{
		Use:   "fail [flags] ID",
		Short: "Mark a deployment failed; a group with auto_revert rolls back to the last stable version",
		Args:  cobra.ExactArgs(1),
		RunE: f.onDeployment(func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
			resp, err := c.Deployments().Fail(cmd.Context(), d.ID)
			if err != nil {
				return verbError("failing deployment", err)
			}
			w := cmd.OutOrStdout()
			if resp.RevertedJobVersion != nil {
				fmt.Fprintf(w, "Deployment %q failed. Auto-reverted to job version %d.\n", f.short(d.ID), *resp.RevertedJobVersion)
				if !f.detach {
					return f.followRollback(cmd.Context(), c, w, d)
				}
			} else {
				fmt.Fprintf(w, "Deployment %q failed\n", f.short(d.ID))
			}
			return f.verbResult(cmd.Context(), c, w, d.ID, resp)
		}),
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addDetach(cmd)
	return cmd
}

func newDeploymentPauseCommand(pause bool) *cobra.Command {
	var f opFlags
	use, short, done, what := "pause", "Pause a deployment: no new batches until it is resumed", "paused", "pausing"
	if !pause {
		use, short, done, what = "resume", "Resume a paused deployment; its progress deadline restarts", "resumed", "resuming"
	}
	cmd := &cobra.Command{
		Use:   use + " [flags] ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: f.onDeployment(func(cmd *cobra.Command, c *apiclient.Client, d *structs.Deployment) error {
			resp, err := c.Deployments().Pause(cmd.Context(), d.ID, pause)
			if err != nil {
				return verbError(what+" deployment", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deployment %q %s\n", f.short(d.ID), done)
			if !pause {
				return f.verbFollow(cmd.Context(), c, cmd.OutOrStdout(), d.ID, resp)
			}
			return f.verbResult(cmd.Context(), c, cmd.OutOrStdout(), d.ID, resp)
		}),
	}
	f.addAddress(cmd)
	f.addVerbose(cmd)
	f.addDetach(cmd)
	return cmd
}

// followRollback follows the deployment of the version a failed
// deployment rolled back to, as job run does after a failure: exit 0 when
// the rollback succeeds.
func (f *opFlags) followRollback(ctx context.Context, c *apiclient.Client, w io.Writer, failed *structs.Deployment) error {
	m := newMonitor(c, w, true)
	rb, err := m.waitRollback(ctx, failed.JobID, failed.ID)
	if err != nil {
		return monitorExit("the rollback", 1, err)
	}
	fmt.Fprintln(w)
	m.headf("Monitoring the rollback")
	code, err := m.followDeploymentToEnd(ctx, rb, failed.JobID, false)
	return monitorExit("the rollback", code, err)
}
