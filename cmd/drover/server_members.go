package main

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func init() { registerCommand("server", newServerCommand) }

func newServerCommand() *cobra.Command {
	srv := &cobra.Command{Use: "server", Short: "Inspect the cluster's servers"}
	srv.AddCommand(newServerMembersCommand())
	return srv
}

// newServerMembersCommand is "drover server members", with Nomad's
// columns.
func newServerMembersCommand() *cobra.Command {
	var address string
	var o outputFlags
	var detailed bool
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the servers the agent knows, with their status and the leader",
		Long: `List the servers the agent at -address knows: those it learnt through joins
and those of the Raft configuration. Address and Port are each server's HTTP
API; Status is alive when it answered a probe just now; Leader marks the
server whose Raft address is the current leader's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			members, err := c.Agent().Members(cmd.Context())
			if err != nil {
				return fmt.Errorf("reading the members: %w", err)
			}
			// By name, as Nomad's (the API lists the agent's own server
			// first).
			sort.SliceStable(members.Members, func(i, j int) bool { return members.Members[i].Name < members.Members[j].Name })
			if o.set() {
				return o.write(cmd, members.Members)
			}
			// No leader is not an error here: the table then shows none.
			leader, _ := c.Status().Leader(cmd.Context())
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			if detailed {
				// Nomad's -detailed (and -verbose): each member's tags.
				fmt.Fprintln(w, "Name\tAddress\tPort\tStatus\tTags")
				for _, m := range members.Members {
					keys := make([]string, 0, len(m.Tags))
					for k := range m.Tags {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					tags := make([]string, len(keys))
					for i, k := range keys {
						tags[i] = k + "=" + m.Tags[k]
					}
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", m.Name, orDash(m.Addr), m.Port, m.Status, strings.Join(tags, ","))
				}
				return w.Flush()
			}
			fmt.Fprintln(w, "Name\tAddress\tPort\tStatus\tLeader\tRaft Version\tBuild\tDatacenter\tRegion")
			for _, m := range members.Members {
				raftAddr := ""
				if m.Tags["rpc_addr"] != "" && m.Tags["port"] != "" {
					raftAddr = net.JoinHostPort(m.Tags["rpc_addr"], m.Tags["port"])
				}
				isLeader := leader != "" && raftAddr == leader
				fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%t\t%s\t%s\t%s\t%s\n", m.Name, orDash(m.Addr), m.Port, m.Status,
					isLeader, orDash(m.Tags["raft_vsn"]), orDash(m.Tags["build"]), orDash(m.Tags["dc"]), orDash(m.Tags["region"]))
			}
			return w.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	cmd.Flags().BoolVar(&detailed, "detailed", false, "each member's tags")
	cmd.Flags().BoolVar(&detailed, "verbose", false, "each member's tags (as -detailed)")
	return cmd
}

func orDash(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
