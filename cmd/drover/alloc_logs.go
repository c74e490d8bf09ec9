package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
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
		address              string
		stderr, follow, tail bool
		lines                int
	)
	cmd := &cobra.Command{
		Use:   "logs [flags] ALLOC [TASK]",
		Short: "Print a task's stdout or stderr",
		Long: `Prints the logs of a task of the allocation (ID or unique prefix). The task
may be left out when the allocation's group has one task. The logs are
read from the client node that runs the allocation, at the HTTP address
it registered.

-tail shows the last lines only (-n, default 10); -f follows the log as
the task writes it. With -f and -tail the stream starts about n lines
before the end.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			a, err := lookupAlloc(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			task := ""
			if len(args) == 2 {
				task = args[1]
			} else {
				names := allocTaskNames(a)
				if len(names) != 1 {
					return &exitError{code: 1, msg: fmt.Sprintf("Allocation %q is running the following tasks:\n  * %s\n\nPlease specify the task.",
						idShort(a.ID), strings.Join(names, "\n  * "))}
				}
				task = names[0]
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
			if cmd.Flags().Changed("n") {
				tail = true
			}
			if lines <= 0 {
				lines = defaultTailLines
			}
			o := apiclient.LogsOptions{Task: task, Stderr: stderr, Follow: follow}
			if tail && follow {
				o.Origin, o.Offset = "end", int64(lines)*followTailBytesPerLine
			}
			rc, err := nc.AllocLogs(ctx, a.ID, o)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading logs: %v", err)}
			}
			defer rc.Close()
			switch {
			case tail && !follow:
				err = copyLastLines(out, rc, lines)
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
	cmd.Flags().BoolVar(&stderr, "stderr", false, "print stderr instead of stdout")
	cmd.Flags().BoolVarP(&follow, "f", "f", false, "follow the log")
	cmd.Flags().BoolVar(&tail, "tail", false, "print the last lines only")
	cmd.Flags().IntVarP(&lines, "n", "n", defaultTailLines, "how many lines -tail prints")
	return cmd
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
