package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func init() {
	registerCommand("scaling", func() *cobra.Command {
		cmd := &cobra.Command{Use: "scaling", Short: "Read the groups' scaling policies"}
		policy := &cobra.Command{Use: "policy", Short: "List and read scaling policies"}
		policy.AddCommand(newScalingPolicyListCommand(), newScalingPolicyInfoCommand())
		cmd.AddCommand(policy)
		return cmd
	})
}

// formatTarget writes a policy's target as Nomad's CLI does:
// "Group:cache,Job:web,Namespace:default", keys sorted.
func formatTarget(t map[string]string) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + t[k]
	}
	return strings.Join(parts, ",")
}

func newScalingPolicyListCommand() *cobra.Command {
	var (
		address string
		job     string
		typ     string
		o       outputFlags
	)
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the scaling policies of the namespace's jobs",
		Long: `Lists the scaling policies of the jobs' groups (GET /v1/scaling/policies):
ID, whether enabled, type and target. -job keeps one job's, -type those
whose type starts with the value.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			params := map[string]string{}
			if job != "" {
				params["job"] = job
			}
			if typ != "" {
				params["type"] = typ
			}
			var stubs []*structs.ScalingPolicyListStub
			if _, err := c.Get(cmd.Context(), "/v1/scaling/policies", &apiclient.QueryOptions{Params: params}, &stubs); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error listing scaling policies: %v", err)}
			}
			if o.set() {
				return o.write(cmd, stubs)
			}
			out := cmd.OutOrStdout()
			if len(stubs) == 0 {
				fmt.Fprintln(out, "No policies found")
				return nil
			}
			tw := newTabs(out)
			fmt.Fprintln(tw, "ID\tEnabled\tType\tTarget")
			for _, p := range stubs {
				fmt.Fprintf(tw, "%s\t%t\t%s\t%s\n", p.ID, p.Enabled, p.Type, formatTarget(p.Target))
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&job, "job", "", "list the policies of this job only")
	cmd.Flags().StringVar(&typ, "type", "", "list the policies whose type starts with this")
	o.add(cmd)
	cmd.Flags().Bool("verbose", false, "accepted as Nomad's: drover prints policy IDs in full always")
	return cmd
}

func newScalingPolicyInfoCommand() *cobra.Command {
	var (
		address string
		o       outputFlags
	)
	cmd := &cobra.Command{
		Use:   "info [flags] POLICY_ID",
		Short: "Show one scaling policy: bounds, target and policy",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var p structs.ScalingPolicy
			if _, err := c.Get(cmd.Context(), "/v1/scaling/policy/"+url.PathEscape(args[0]), nil, &p); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying scaling policy: %v", err)}
			}
			if o.set() {
				return o.write(cmd, &p)
			}
			out := cmd.OutOrStdout()
			printKV(out, [][2]string{
				{"ID", p.ID},
				{"Enabled", fmt.Sprint(p.Enabled)},
				{"Target", formatTarget(p.Target)},
				{"Min", fmt.Sprint(p.Min)},
				{"Max", fmt.Sprint(p.Max)},
			})
			policy, err := json.MarshalIndent(p.Policy, "", "  ")
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "\nPolicy:\n%s\n", policy)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	cmd.Flags().Bool("verbose", false, "accepted as Nomad's: drover prints policy IDs in full always")
	return cmd
}
