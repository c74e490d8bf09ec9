package main

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { allocCommands["logs"] = newAllocLogsCommand }

// defaultTailLines is how many lines -tail shows without -n.
const defaultTailLines = 10

// followTailBytesPerLine estimates a line's length when -f starts from the
// end of the log: the stream starts that many bytes per wanted line before
// the end.
const followTailBytesPerLine = 256

func newAllocLogsCommand() *cobra.Command {
	var (
		address, task, group                       string
		stderr, stdout, follow, tail, job, verbose bool
		lines, bytes                               int64
	)
	cmd := &cobra.Command{
		Use:   "logs [flags] ALLOC [TASK]",
		Short: "Print a task's stdout or stderr",
		Long: `Prints the logs of a task of the allocation (ID or unique prefix). The task
is named by -task or as the second argument, and may be left out when the
allocation's group has one task. With -job the first argument is a job (ID
or unique prefix) and the allocation one of its running allocations, of
group -group when given. The logs are read from the client node that runs
the allocation, at the HTTP address it registered.

-stdout (the default) or -stderr picks the log. -tail shows the end only:
the last -n lines (default 10) or -c bytes. -f follows the log as the task
writes it; -f alone (no -stdout, -stderr, -tail, -n or -c) follows both,
stdout to stdout and stderr to stderr, as Nomad's. -verbose prints full
IDs when a prefix matches several allocations.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if fs.Changed("n") && fs.Changed("c") {
				return &exitError{code: 1, msg: "Error: both -n and -c set"}
			}
			both := follow && !stderr && !stdout && !tail && !fs.Changed("n") && !fs.Changed("c")
			if stderr && stdout && !both {
				return &exitError{code: 1, msg: "Unable to support both stdout and stderr"}
			}
			if len(args) == 2 && task == "" {
				task = args[1]
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			var a *structs.Allocation
			if job {
				a, err = runningAllocOfGroup(ctx, c, out, args[0], group)
			} else {
				a, err = lookupAllocVerbose(ctx, c, out, args[0], verbose)
			}
			if err != nil {
				return asExit(err)
			}
			if task, err = pickTask(a, task); err != nil {
				return err
			}
			node, _, err := c.Nodes().Info(ctx, a.NodeID, nil)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying node %s: %v", a.NodeID, err)}
			}
			if node.HTTPAddr == "" {
				return &exitError{code: 1, msg: fmt.Sprintf("Node %s has no HTTP address to read logs from", idShort(node.ID))}
			}
			nc, err := nodeClientFor(cmd, node.HTTPAddr)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reaching node %s: %v", idShort(node.ID), err)}
			}
			if both {
				return followBoth(ctx, nc, a.ID, task, out, cmd.ErrOrStderr())
			}
			if fs.Changed("n") || fs.Changed("c") {
				tail = true
			}
			if lines <= 0 {
				lines = defaultTailLines
			}
			o := apiclient.LogsOptions{Task: task, Stderr: stderr, Follow: follow}
			switch {
			case tail && fs.Changed("c"):
				o.Origin, o.Offset = "end", max(bytes, 0)
			case tail && follow:
				o.Origin, o.Offset = "end", lines*followTailBytesPerLine
			}
			rc, err := nc.AllocLogs(ctx, a.ID, o)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading logs: %v", err)}
			}
			defer rc.Close()
			switch {
			case tail && fs.Changed("c"):
				_, err = io.Copy(out, rc)
			case tail && !follow:
				err = copyLastLines(out, rc, int(lines))
			case tail && follow:
				err = copyAfterFirstLine(out, rc)
			default:
				_, err = io.Copy(out, rc)
			}
			if err != nil && ctx.Err() == nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading logs: %v", err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	f := cmd.Flags()
	f.StringVar(&task, "task", "", "the task whose logs to print (instead of the second argument)")
	f.StringVar(&group, "group", "", "with -job, pick an allocation of this group")
	f.BoolVar(&job, "job", false, "the first argument is a job: print the logs of one of its running allocations")
	f.BoolVar(&stderr, "stderr", false, "print stderr")
	f.BoolVar(&stdout, "stdout", false, "print stdout (the default)")
	f.BoolVarP(&follow, "f", "f", false, "follow the log (stdout and stderr both when no other log flag is given)")
	f.BoolVar(&tail, "tail", false, "print the end of the log only (-n lines, default 10, or -c bytes)")
	f.Int64VarP(&lines, "n", "n", defaultTailLines, "how many lines -tail prints")
	f.Int64VarP(&bytes, "c", "c", 0, "how many bytes -tail prints")
	f.BoolVar(&verbose, "verbose", false, "full IDs when a prefix matches several allocations")
	return cmd
}

// followBoth follows a task's stdout and stderr at once, each to its
// writer, from their current ends, until ctx ends or both streams do.
func followBoth(ctx context.Context, nc *apiclient.Client, allocID, task string, stdout, stderr io.Writer) error {
	errs := make(chan error, 2)
	for _, e := range []struct {
		stderr bool
		w      io.Writer
	}{{false, stdout}, {true, stderr}} {
		go func() {
			rc, err := nc.AllocLogs(ctx, allocID, apiclient.LogsOptions{Task: task, Stderr: e.stderr, Follow: true, Origin: "end"})
			if err != nil {
				errs <- err
				return
			}
			defer rc.Close()
			_, err = io.Copy(e.w, rc)
			errs <- err
		}()
	}
	var first error
	for range 2 {
		if err := <-errs; err != nil && first == nil && ctx.Err() == nil {
			first = err
		}
	}
	if first != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Failed to tail stdout and stderr files: %v", first)}
	}
	return nil
}

// runningAllocOfGroup returns a running allocation of the job (ID or
// unique prefix), of group when it is not empty, as Nomad's -job picks one.
func runningAllocOfGroup(ctx context.Context, c *apiclient.Client, w io.Writer, jobPrefix, group string) (*structs.Allocation, error) {
	if group == "" {
		return runningAllocOf(ctx, c, w, jobPrefix)
	}
	j, err := lookupJob(ctx, c, w, jobPrefix)
	if err != nil {
		return nil, err
	}
	stubs, _, err := c.Jobs().Allocations(ctx, j.ID, nil)
	if err != nil {
		return nil, fmt.Errorf("querying the allocations of job %q: %w", j.ID, err)
	}
	for _, s := range stubs {
		if s.TaskGroup == group && s.DesiredStatus == structs.AllocDesiredStatusRun && s.ClientStatus == structs.AllocClientStatusRunning {
			a, _, err := c.Allocations().Info(ctx, s.ID, nil)
			if err != nil {
				return nil, fmt.Errorf("querying allocation %s: %w", s.ID, err)
			}
			return a, nil
		}
	}
	return nil, &exitError{code: 1, msg: fmt.Sprintf("Job %q has no running allocation of group %q", j.ID, group)}
}

// copyLastLines writes the last n lines of r.
func copyLastLines(w io.Writer, r io.Reader, n int) error {
	ring := make([]string, 0, n)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if len(ring) == n {
			ring = ring[1:]
		}
		ring = append(ring, sc.Text())
	}
	for _, l := range ring {
		fmt.Fprintln(w, l)
	}
	return sc.Err()
}

// copyAfterFirstLine drops what precedes the first newline (a partial
// line, when the stream starts mid-file) and copies the rest.
func copyAfterFirstLine(w io.Writer, r io.Reader) error {
	br := bufio.NewReader(r)
	if _, err := br.ReadString('\n'); err != nil {
		if err == io.EOF {
			return nil
		}
		return err
	}
	_, err := io.Copy(w, br)
	return err
}
