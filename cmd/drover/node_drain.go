package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// defaultDrainDeadline is the deadline of a drain that sets none, as
// Nomad's.
const defaultDrainDeadline = time.Hour

func newNodeDrainCommand() *cobra.Command {
	var (
		address                                       string
		enable, disable, detach, monitor, force       bool
		noDeadline, ignoreSystem, keepIneligible, yes bool
		deadline                                      time.Duration
		message                                       string
		metas                                         []string
	)
	var self bool
	cmd := &cobra.Command{
		Use:   "drain [flags] -enable|-disable NODE",
		Short: "Move a node's allocations elsewhere, or stop doing so",
		Long: `Drains a client node, as Nomad's: the node becomes ineligible for new
allocations and its allocations move elsewhere under their group's migrate
block — migrate.max_parallel of a group at a time across every draining
node, each replacement placed first and the old allocation stopped once the
replacement is healthy. Batch allocations may finish until the deadline;
system allocations stop last, unless -ignore-system. At the deadline
whatever is left stops. A completed drain leaves the node ineligible
(drover node eligibility -enable makes it eligible again).

-disable ends a drain; the node becomes eligible again unless
-keep-ineligible. Unless -detach, the drain is monitored until every
allocation on the node has stopped: the allocations as they are marked and
stop, and a table of what is left per job. Ctrl-C stops monitoring without
cancelling the drain. See website/commands/node-drain.md.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := selfNode(cmd, address, self, args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case !monitor && enable == disable:
				return &exitError{code: 1, msg: "Either the '-enable' or '-disable' flag must be set, unless using '-monitor'"}
			case monitor && (enable || disable):
				return &exitError{code: 1, msg: "The -monitor flag cannot be used with the '-enable' or '-disable' flags"}
			case len(args) != 1:
				return &exitError{code: 1, msg: "This command takes one argument: <node-id>"}
			case disable && (cmd.Flags().Changed("deadline") || force || noDeadline || ignoreSystem):
				return &exitError{code: 1, msg: "-disable can't be combined with flags configuring drain strategy"}
			case cmd.Flags().Changed("deadline") && (force || noDeadline):
				return &exitError{code: 1, msg: "-deadline can't be combined with -force or -no-deadline"}
			case force && noDeadline:
				return &exitError{code: 1, msg: "-force and -no-deadline are mutually exclusive"}
			case cmd.Flags().Changed("deadline") && deadline <= 0:
				return &exitError{code: 1, msg: fmt.Sprintf("-deadline must be positive (got %s); -no-deadline drains without one, -force at once", deadline)}
			}
			meta := map[string]string{}
			for _, kv := range metas {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return &exitError{code: 1, msg: fmt.Sprintf("-meta wants KEY=VALUE (got %q)", kv)}
				}
				meta[k] = v
			}
			if message != "" {
				meta["message"] = message
			}
			if len(meta) == 0 {
				meta = nil
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			node, err := lookupNode(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			if monitor {
				return runDrainMonitor(ctx, c, out, node.ID, ignoreSystem)
			}
			if !yes && readerIsTerminal(cmd.InOrStdin()) {
				verb := "enable"
				if disable {
					verb = "disable"
				}
				fmt.Fprintf(out, "Are you sure you want to %s drain mode for node %q? [y/N] ", verb, node.ID)
				answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
				switch strings.ToLower(strings.TrimSpace(answer)) {
				case "y", "yes":
				default:
					fmt.Fprintln(out, "Canceling drain toggle")
					return nil
				}
			}
			opts := apiclient.DrainOptions{Meta: meta, MarkEligible: disable && !keepIneligible}
			if enable {
				spec := &structs.DrainSpec{Deadline: defaultDrainDeadline, IgnoreSystemJobs: ignoreSystem}
				switch {
				case force:
					spec.Deadline = -1
				case noDeadline:
					spec.Deadline = 0
				case cmd.Flags().Changed("deadline"):
					spec.Deadline = deadline
				}
				opts.Spec = spec
			}
			if _, err := c.Nodes().UpdateDrain(ctx, node.ID, opts); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error updating drain specification: %v", err)}
			}
			if disable {
				fmt.Fprintf(out, "Node %q drain strategy unset\n", node.ID)
				return nil
			}
			fmt.Fprintf(out, "Node %q drain strategy set\n", node.ID)
			if detach {
				return nil
			}
			return runDrainMonitor(ctx, c, out, node.ID, ignoreSystem)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&self, "self", false, "the node of the agent at -address")
	f := cmd.Flags()
	f.BoolVar(&enable, "enable", false, "enable draining of the node")
	f.BoolVar(&disable, "disable", false, "end the node's drain")
	f.DurationVar(&deadline, "deadline", defaultDrainDeadline, "time after which whatever is left on the node stops")
	f.BoolVar(&force, "force", false, "stop every allocation at once (no deadline to wait for)")
	f.BoolVar(&noDeadline, "no-deadline", false, "no deadline: wait as long as moves take")
	f.BoolVar(&ignoreSystem, "ignore-system", false, "leave the allocations of system jobs running")
	f.BoolVar(&keepIneligible, "keep-ineligible", false, "with -disable, keep the node ineligible")
	f.BoolVar(&detach, "detach", false, "return once the drain is set, without monitoring it")
	f.BoolVar(&monitor, "monitor", false, "monitor the node's drain without changing it")
	f.BoolVar(&yes, "yes", false, "do not ask for confirmation")
	f.StringVarP(&message, "message", "m", "", "a message kept with the drain (LastDrain.Meta[\"message\"])")
	f.StringArrayVar(&metas, "meta", nil, "KEY=VALUE kept with the drain (repeatable)")
	return cmd
}

// drainMonitor follows a node's drain, as Nomad's node drain monitor:
// each allocation on the node as it is marked for migration, stopped and
// finished ("Alloc %q marked for migration", "draining", "status a -> b"),
// "Drain complete for node %s" once the node's drain strategy is gone, and
// "All allocations on node %q have stopped" at the end. Between the lines a
// table of what is left on the node per job and group is drawn (on a
// terminal redrawn in place). Every read is a blocking query.
type drainMonitor struct {
	out       io.Writer
	tty       bool
	now       func() time.Time
	ignoreSys bool
	table     drainTable
}

// runDrainMonitor monitors nodeID's drain until every allocation on it
// has stopped (system ones aside with ignoreSys).
func runDrainMonitor(ctx context.Context, c *apiclient.Client, out io.Writer, nodeID string, ignoreSys bool) error {
	m := &drainMonitor{out: out, tty: isTerminal(out), now: statusClock, ignoreSys: ignoreSys}
	m.table.out, m.table.tty = out, m.tty
	if err := m.run(ctx, c, nodeID); err != nil && !errors.Is(err, context.Canceled) {
		return &exitError{code: 1, msg: fmt.Sprintf("Error monitoring the drain: %v", err)}
	}
	return nil
}

type drainEvent struct {
	msg    string
	allocs []*structs.Allocation // a new view of the node's allocs, or nil
	done   bool                  // the watcher that sent it has ended
	err    error
}

func (m *drainMonitor) run(ctx context.Context, c *apiclient.Client, nodeID string) error {
	m.linef("Ctrl-C to stop monitoring: will not cancel the node drain")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := make(chan drainEvent, 16)
	send := func(e drainEvent) bool {
		select {
		case events <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go m.watchNode(ctx, c, nodeID, send)
	go m.watchAllocs(ctx, c, nodeID, send)
	for open := 2; open > 0; {
		var e drainEvent
		select {
		case e = <-events:
		case <-ctx.Done():
			m.table.clear()
			return ctx.Err()
		}
		if e.err != nil {
			m.table.clear()
			return e.err
		}
		if e.msg != "" {
			m.table.clear()
			m.linef("%s", e.msg)
			m.table.redraw()
		}
		if e.allocs != nil {
			m.table.draw(renderDrainTable(e.allocs))
		}
		if e.done {
			open--
		}
	}
	return nil
}

func (m *drainMonitor) linef(format string, args ...any) {
	fmt.Fprintf(m.out, "%s: %s\n", fmtTime(m.now()), fmt.Sprintf(format, args...))
}

// watchNode reports changes of the node's drain until it has none.
func (m *drainMonitor) watchNode(ctx context.Context, c *apiclient.Client, nodeID string, send func(drainEvent) bool) {
	var index uint64
	var last *structs.DrainStrategy
	for {
		n, meta, err := c.Nodes().Info(ctx, nodeID, &apiclient.QueryOptions{WaitIndex: index, WaitTime: monitorWait})
		if err != nil {
			send(drainEvent{err: fmt.Errorf("monitoring node: %w", err)})
			return
		}
		index = meta.LastIndex
		if n.DrainStrategy == nil {
			send(drainEvent{msg: fmt.Sprintf("Drain complete for node %s", nodeID), done: true})
			return
		}
		if n.Status == structs.NodeStatusDown && !send(drainEvent{msg: fmt.Sprintf("Node %q down", nodeID)}) {
			return
		}
		if last != nil && (last.Deadline != n.DrainStrategy.Deadline || !last.ForceDeadline.Equal(n.DrainStrategy.ForceDeadline) ||
			last.IgnoreSystemJobs != n.DrainStrategy.IgnoreSystemJobs) {
			if !send(drainEvent{msg: fmt.Sprintf("Node %q drain updated: %s", nodeID, n.DrainStrategy)}) {
				return
			}
		}
		last = n.DrainStrategy
	}
}

// watchAllocs reports each allocation's changes until none runs on the
// node (system ones aside when ignored).
func (m *drainMonitor) watchAllocs(ctx context.Context, c *apiclient.Client, nodeID string, send func(drainEvent) bool) {
	var index uint64
	seen := map[string]*structs.Allocation{}
	for {
		allocs, meta, err := c.Nodes().Allocations(ctx, nodeID, &apiclient.QueryOptions{WaitIndex: index, WaitTime: monitorWait})
		if err != nil {
			send(drainEvent{err: fmt.Errorf("monitoring allocations: %w", err)})
			return
		}
		index = meta.LastIndex
		sort.Slice(allocs, func(i, j int) bool { return allocs[i].Name < allocs[j].Name })
		running := 0
		for _, a := range allocs {
			orig, ok := seen[a.ID]
			seen[a.ID] = a
			if ok {
				msg := ""
				migrating := a.DesiredTransition.ShouldMigrate()
				switch {
				case orig.ClientStatus != a.ClientStatus:
					msg = fmt.Sprintf("status %s -> %s", orig.ClientStatus, a.ClientStatus)
				case migrating && !orig.DesiredTransition.ShouldMigrate():
					msg = "marked for migration"
				case migrating && orig.DesiredStatus != a.DesiredStatus && a.DesiredStatus == structs.AllocDesiredStatusStop:
					msg = "draining"
				}
				if msg != "" && !send(drainEvent{msg: fmt.Sprintf("Alloc %q %s", a.ID, msg)}) {
					return
				}
			}
			if m.ignoreSys && a.Job != nil && structs.PerNode(a.Job.Type) {
				continue
			}
			switch a.ClientStatus {
			case structs.AllocClientStatusPending, structs.AllocClientStatusRunning:
				running++
			}
		}
		if !send(drainEvent{allocs: allocs}) {
			return
		}
		if running == 0 {
			send(drainEvent{msg: fmt.Sprintf("All allocations on node %q have stopped", nodeID), done: true})
			return
		}
	}
}

// renderDrainTable is what is left on the node per job and group: its
// allocations still running there (On Node), those marked to move whose
// replacement is not yet healthy (Migrating), and those the drain has
// stopped (Moved).
func renderDrainTable(allocs []*structs.Allocation) string {
	type row struct {
		job, group            string
		running, moving, gone int
	}
	rows := map[[2]string]*row{}
	for _, a := range allocs {
		k := [2]string{a.JobID, a.TaskGroup}
		r := rows[k]
		if r == nil {
			r = &row{job: a.JobID, group: a.TaskGroup}
			rows[k] = r
		}
		if a.ClientStatus == structs.AllocClientStatusPending || a.ClientStatus == structs.AllocClientStatusRunning {
			r.running++
		}
		switch {
		case !a.DesiredTransition.ShouldMigrate():
		case a.DesiredStatus == structs.AllocDesiredStatusRun && !a.ClientTerminalStatus():
			r.moving++
		case a.DesiredStatus != structs.AllocDesiredStatusRun:
			r.gone++
		}
	}
	keys := make([][2]string, 0, len(rows))
	for k, r := range rows {
		if r.running+r.moving+r.gone > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	var b strings.Builder
	tw := newTabs(&b)
	fmt.Fprintln(tw, "Job\tGroup\tOn Node\tMigrating\tMoved")
	for _, k := range keys {
		r := rows[k]
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", r.job, r.group, r.running, r.moving, r.gone)
	}
	tw.Flush()
	return b.String()
}

// drainTable draws the table. On a terminal it stays at the bottom:
// cleared before a line is printed and drawn again after. Elsewhere it is
// appended whenever it changed.
type drainTable struct {
	out     io.Writer
	tty     bool
	last    string // the latest table
	lines   int    // lines on screen (terminal), 0 when cleared
	printed string // the table last appended (not a terminal)
}

func (t *drainTable) draw(body string) {
	t.last = body
	if !t.tty {
		if body != t.printed {
			fmt.Fprint(t.out, body)
			t.printed = body
		}
		return
	}
	t.clear()
	t.redraw()
}

func (t *drainTable) clear() {
	if t.tty && t.lines > 0 {
		fmt.Fprintf(t.out, "\x1b[%dA\x1b[J", t.lines)
		t.lines = 0
	}
}

func (t *drainTable) redraw() {
	if t.tty && t.lines == 0 && t.last != "" {
		fmt.Fprint(t.out, t.last)
		t.lines = strings.Count(t.last, "\n")
	}
}

// readerIsTerminal reports whether r is a terminal (a prompt can be
// answered).
func readerIsTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
