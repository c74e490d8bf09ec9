package main

import (
	"fmt"
	"sort"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// "drover agent-info", as Nomad's: the agent's statistics by section
// (GET /v1/agent/self), or its answer with -json or -t.

func init() { registerCommand("agent-info", newAgentInfoCommand) }

func newAgentInfoCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "agent-info [-json | -t TEMPLATE]",
		Short: "Show the agent's statistics",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var self structs.AgentSelf
			if _, err := c.Get(cmd.Context(), "/v1/agent/self", nil, &self); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying agent info: %v", err)}
			}
			if o.set() {
				return o.write(cmd, self)
			}
			out := cmd.OutOrStdout()
			sections := make([]string, 0, len(self.Stats))
			for s := range self.Stats {
				sections = append(sections, s)
			}
			sort.Strings(sections)
			for _, s := range sections {
				fmt.Fprintln(out, s)
				keys := make([]string, 0, len(self.Stats[s]))
				for k := range self.Stats[s] {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					fmt.Fprintf(out, "  %s = %s\n", k, self.Stats[s][k])
				}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}
