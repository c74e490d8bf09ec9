package main

import (
	"fmt"
	"net/url"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() { allocCommands["checks"] = newAllocChecksCommand }

func newAllocChecksCommand() *cobra.Command {
	var f opFlags
	cmd := &cobra.Command{
		Use:   "checks [flags] ALLOC",
		Short: "Show the latest result of each check of an allocation's nomad services",
		Long: `Shows, as Nomad's alloc checks, the latest result of each check of the
allocation's services with provider "nomad" (ID or unique prefix), read
from the allocation's client: success or failure, and readiness for a
check whose on_update is ignore.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			a, err := lookupAlloc(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			var checks map[string]*structs.AllocCheckStatus
			path := "/v1/client/allocation/" + url.PathEscape(a.ID) + "/checks"
			if _, err := c.Get(ctx, path, &apiclient.QueryOptions{Namespace: a.Namespace}, &checks); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying allocation checks: %v", err)}
			}
			if ok, err := f.formatted(cmd, checks); ok {
				return err
			}
			fmt.Fprintf(out, "Status of %d Nomad Service Checks\n\n", len(checks))
			ids := make([]string, 0, len(checks))
			for id := range checks {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(i, j int) bool {
				a, b := checks[ids[i]], checks[ids[j]]
				if a.Service != b.Service {
					return a.Service < b.Service
				}
				return a.Check < b.Check
			})
			for _, id := range ids {
				ch := checks[id]
				task := ch.Task
				if task == "" {
					task = "(group)"
				}
				pairs := [][2]string{
					{"ID", ch.ID}, {"Name", ch.Check}, {"Group", ch.Group}, {"Task", task},
					{"Service", ch.Service}, {"Status", ch.Status},
				}
				if ch.StatusCode > 0 {
					pairs = append(pairs, [2]string{"StatusCode", fmt.Sprint(ch.StatusCode)})
				}
				pairs = append(pairs, [2]string{"Mode", ch.Mode},
					[2]string{"Timestamp", fmtTime(time.Unix(ch.Timestamp, 0))}, [2]string{"Output", ch.Output})
				printKV(out, pairs)
				fmt.Fprintln(out)
			}
			return nil
		},
	}
	f.addAddress(cmd)
	f.addJSON(cmd)
	f.addVerbose(cmd)
	return cmd
}
