package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

func init() {
	registerJobCommand("scale", newJobScaleCommand)
	registerJobCommand("scaling-events", newJobScalingEventsCommand)
}

func newJobScaleCommand() *cobra.Command {
	var (
		address string
		detach  bool
		message string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "scale [flags] JOB [GROUP] COUNT",
		Short: "Set a task group's count; it rolls out as a count change in the job file does",
		Long: `Sets the count of one task group of a running job, as a new version of the
job. GROUP may be left out when the job has one group. The change rolls out
as the same count change in the job file would: new allocations are placed,
extra ones stopped. The scaling is recorded as a scaling event (see
job scaling-events). Unless -detach is given, the evaluation and its
deployment are monitored as job run does.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			count, err := strconv.ParseInt(args[len(args)-1], 10, 64)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to convert count %q to a number", args[len(args)-1])}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			job, err := lookupJob(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			group := ""
			if len(args) == 3 {
				group = args[1]
			} else if len(job.TaskGroups) == 1 {
				group = job.TaskGroups[0].Name
			} else {
				return &exitError{code: 1, msg: fmt.Sprintf("Job %q has %d task groups: name the group to scale", job.ID, len(job.TaskGroups))}
			}
			resp, err := c.Jobs().Scale(ctx, job.ID, group, count, message)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error submitting scaling request: %v", err)}
			}
			if detach {
				fmt.Fprintf(out, "Evaluation ID: %s\n", resp.EvalID)
				return nil
			}
			m := newMonitor(c, out, true)
			m.verbose = verbose
			code, err := m.run(ctx, resp.EvalID)
			return monitorExit("the job", code, err)
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&detach, "detach", false, "return at once, printing the evaluation ID")
	cmd.Flags().StringVar(&message, "message", "", "a message recorded with the scaling event")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full IDs")
	return cmd
}

func newJobScalingEventsCommand() *cobra.Command {
	var (
		address string
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "scaling-events [flags] JOB",
		Short: "List a job's scaling events, newest first",
		Long: `Lists the scaling events of each task group of the job (the latest 20 per
group), newest first: when, the count it set and the one before, whether it
was an error, and its message.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			job, err := lookupJob(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			st, _, err := c.Jobs().ScaleStatus(ctx, job.ID, nil)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error listing scaling events: %v", err)}
			}
			groups := make([]string, 0, len(st.TaskGroups))
			for g, s := range st.TaskGroups {
				if len(s.Events) > 0 {
					groups = append(groups, g)
				}
			}
			if len(groups) == 0 {
				fmt.Fprintf(out, "No events found\n")
				return nil
			}
			sort.Strings(groups)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			header := "Task Group\tCount\tPreviousCount\tDate"
			if verbose {
				header += "\tError\tMessage\tEval ID"
			}
			fmt.Fprintln(tw, header)
			for _, g := range groups {
				for _, e := range st.TaskGroups[g].Events {
					cnt := "-"
					if e.Count != nil {
						cnt = strconv.FormatInt(*e.Count, 10)
					}
					row := []string{g, cnt, strconv.FormatInt(e.PreviousCount, 10),
						time.Unix(0, int64(e.Time)).Local().Format(time.RFC3339)}
					if verbose {
						eval := ""
						if e.EvalID != nil {
							eval = *e.EvalID
						}
						row = append(row, strconv.FormatBool(e.Error), e.Message, eval)
					}
					fmt.Fprintln(tw, strings.Join(row, "\t"))
				}
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "also show each event's error flag, message and evaluation")
	return cmd
}
