package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { allocCommands["exec"] = newAllocExecCommand }

func newAllocExecCommand() *cobra.Command {
	var (
		address, task, job, group string
		stdinOn, ttyOn            bool
	)
	cmd := &cobra.Command{
		Use:   "exec [flags] ALLOC [TASK] COMMAND [ARGS...]",
		Short: "Run a command in a running task",
		Long: `Runs a command in a running task of the allocation (ID or unique prefix) and
exits with the command's exit code, as Nomad's alloc exec. raw_exec runs
it beside the task, in the task's environment and directory; docker runs
it in the task's container (docker exec).

The task is -task, or the allocation's only task; it may also be given
after the allocation when that argument names a task of the group and a
command follows. With -job, the allocation is a running allocation of
that job. -i (on by default; -i=false to turn it off) passes stdin to the
command; -t (on by default when stdin is a terminal) runs it on a
terminal, the local one put in raw mode and its size followed. Flags
after the allocation belong to the command.

The command runs through the agent at -address, which forwards it to the
allocation's node when it does not run the allocation itself.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if job == "" && len(args) < 2 {
				return &exitError{code: 1, msg: "This command takes at least two arguments: ALLOC COMMAND (see drover alloc exec -h)"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var a *structs.Allocation
			if job != "" {
				a, err = runningAllocOfGroup(ctx, c, cmd.OutOrStdout(), job, group)
			} else {
				a, err = lookupAlloc(ctx, c, cmd.OutOrStdout(), args[0])
				args = args[1:]
			}
			if err != nil {
				return asExit(err)
			}
			if task == "" && len(args) >= 2 && slices.Contains(allocTaskNames(a), args[0]) {
				task, args = args[0], args[1:]
			}
			if len(args) == 0 {
				return &exitError{code: 1, msg: "Missing the command to run (see drover alloc exec -h)"}
			}
			if task, err = pickTask(a, task); err != nil {
				return err
			}
			if err := checkRunning(a, task); err != nil {
				return err
			}
			if !cmd.Flags().Changed("t") {
				ttyOn = isTerminalReader(cmd.InOrStdin())
			}
			return runExec(ctx, cmd, c, a, task, args, stdinOn, ttyOn)
		},
	}
	cmd.Flags().SetInterspersed(false)
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&task, "task", "", "the task to run the command in (default: the allocation's only task)")
	cmd.Flags().StringVar(&job, "job", "", "run in a running allocation of this job instead of a named one")
	cmd.Flags().StringVar(&group, "group", "", "with -job, an allocation of this group")
	cmd.Flags().BoolVarP(&stdinOn, "i", "i", true, "pass stdin to the command")
	cmd.Flags().BoolVarP(&ttyOn, "t", "t", false, "run the command on a terminal (default: when stdin is a terminal)")
	return cmd
}

// runExec runs the command and ends with its exit code.
func runExec(ctx context.Context, cmd *cobra.Command, c *apiclient.Client, a *structs.Allocation, task string,
	command []string, stdinOn, ttyOn bool) error {
	var stdin io.Reader
	if stdinOn {
		stdin = cmd.InOrStdin()
	}
	o := apiclient.ExecOptions{Task: task, Command: command, TTY: ttyOn, Stdin: stdin,
		Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr()}
	if f, ok := cmd.InOrStdin().(*os.File); ok && ttyOn && term.IsTerminal(int(f.Fd())) {
		restore, sizes, err := rawTerminal(ctx, f)
		if err != nil {
			return &exitError{code: 1, msg: fmt.Sprintf("failed to configure the terminal: %v", err)}
		}
		defer restore()
		o.Sizes = sizes
		if !stdinOn {
			o.Stdin = nil
		}
	}
	code, err := c.Allocations().Exec(ctx, a.ID, o)
	if err != nil {
		var se *apiclient.StatusError
		if errors.As(err, &se) {
			err = errors.New(se.Msg)
		}
		return &exitError{code: 1, msg: fmt.Sprintf("failed to exec into task: %v", err)}
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// rawTerminal puts the terminal f in raw mode, and follows its size; the
// returned function restores it.
func rawTerminal(ctx context.Context, f *os.File) (func(), <-chan apiclient.TerminalSize, error) {
	fd := int(f.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, err
	}
	sizes := make(chan apiclient.TerminalSize, 1)
	if w, h, err := term.GetSize(fd); err == nil {
		sizes <- apiclient.TerminalSize{Height: h, Width: w}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-winch:
				if w, h, err := term.GetSize(fd); err == nil {
					select {
					case sizes <- apiclient.TerminalSize{Height: h, Width: w}:
					default:
					}
				}
			}
		}
	}()
	return func() {
		cancel()
		signal.Stop(winch)
		_ = term.Restore(fd, old)
	}, sizes, nil
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runningAllocOf returns a running allocation of the job (ID or unique
// prefix), as Nomad's -job picks one.
func runningAllocOf(ctx context.Context, c *apiclient.Client, w io.Writer, jobPrefix string) (*structs.Allocation, error) {
	j, err := lookupJob(ctx, c, w, jobPrefix)
	if err != nil {
		return nil, err
	}
	stubs, _, err := c.Jobs().Allocations(ctx, j.ID, nil)
	if err != nil {
		return nil, fmt.Errorf("querying the allocations of job %q: %w", j.ID, err)
	}
	for _, s := range stubs {
		if s.DesiredStatus == structs.AllocDesiredStatusRun && s.ClientStatus == structs.AllocClientStatusRunning {
			a, _, err := c.Allocations().Info(ctx, s.ID, nil)
			if err != nil {
				return nil, fmt.Errorf("querying allocation %s: %w", s.ID, err)
			}
			return a, nil
		}
	}
	return nil, &exitError{code: 1, msg: fmt.Sprintf("Job %q has no running allocation", j.ID)}
}
