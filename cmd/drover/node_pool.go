package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// "drover node pool apply|delete|info|init|list|jobs|nodes", as Nomad's,
// over /v1/node/pools and /v1/node/pool/{name}
// (website/commands/node-pool.md).

func init() {
	groupShorts["node pool"] = "Create, read and delete node pools; list their nodes and jobs"
	registerSubcommand("node pool apply", newNodePoolApplyCommand)
	registerSubcommand("node pool delete", newNodePoolDeleteCommand)
	registerSubcommand("node pool info", newNodePoolInfoCommand)
	registerSubcommand("node pool init", newNodePoolInitCommand)
	registerSubcommand("node pool list", newNodePoolListCommand)
	registerSubcommand("node pool jobs", newNodePoolJobsCommand)
	registerSubcommand("node pool nodes", newNodePoolNodesCommand)
}

func newNodePoolApplyCommand() *cobra.Command {
	var address string
	var fromJSON bool
	cmd := &cobra.Command{
		Use:   "apply [-json] FILE",
		Short: "Create or update a node pool from its specification (HCL, or JSON with -json; - reads stdin)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var data []byte
			var err error
			if args[0] == "-" {
				data, err = io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Failed to read stdin: %v", err)}
				}
			} else if data, err = os.ReadFile(args[0]); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to read file %q: %v", args[0], err)}
			}
			pool, err := parseNodePoolSpec(args[0], data, fromJSON)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Failed to parse input content: %v", err)}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Put(cmd.Context(), "/v1/node/pools", pool, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error applying node pool: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully applied node pool %q!\n", pool.Name)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().BoolVar(&fromJSON, "json", false, "FILE is JSON (Nomad's api.NodePool)")
	return cmd
}

func newNodePoolDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a node pool that no node and no job that is not dead uses",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Delete(cmd.Context(), "/v1/node/pool/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error deleting node pool: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted node pool %q!\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

func listNodePools(cmd *cobra.Command, c *apiclient.Client, prefix string) ([]*structs.NodePool, error) {
	var pools []*structs.NodePool
	if _, err := c.Get(cmd.Context(), "/v1/node/pools", &apiclient.QueryOptions{Prefix: prefix}, &pools); err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error retrieving node pools: %v", err)}
	}
	return pools, nil
}

// nodePoolByPrefix returns the pool named prefix, or the only one whose
// name starts with it; several matches are an error listing them, as
// Nomad's.
func nodePoolByPrefix(cmd *cobra.Command, c *apiclient.Client, prefix string) (*structs.NodePool, error) {
	pools, err := listNodePools(cmd, c, prefix)
	if err != nil {
		return nil, err
	}
	switch len(pools) {
	case 0:
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error retrieving node pool: No node pool with prefix %q found", prefix)}
	case 1:
		return pools[0], nil
	}
	for _, p := range pools {
		if p.Name == prefix {
			return p, nil
		}
	}
	var b strings.Builder
	tw := newTabs(&b)
	fmt.Fprintln(tw, "Name\tDescription")
	for _, p := range pools {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	_ = tw.Flush()
	return nil, &exitError{code: 1, msg: "Prefix matched multiple node pools\n\n" + strings.TrimRight(b.String(), "\n")}
}

func newNodePoolInfoCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "info [-json | -t TEMPLATE] NAME",
		Short: "Show a node pool (NAME may be a prefix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			p, err := nodePoolByPrefix(cmd, c, args[0])
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, p)
			}
			printNodePool(cmd.OutOrStdout(), p)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// printNodePool prints a pool as Nomad's node pool info does.
func printNodePool(w io.Writer, p *structs.NodePool) {
	kv := [][2]string{{"Name", p.Name}, {"Description", p.Description}}
	if p.NodeIdentityTTL > 0 {
		kv = append(kv, [2]string{"Node Identity TTL", p.NodeIdentityTTL.String()})
	}
	printKV(w, kv)
	fmt.Fprintln(w, "\nMetadata")
	if len(p.Meta) == 0 {
		fmt.Fprintln(w, "No metadata")
	} else {
		var meta [][2]string
		for _, k := range slices.Sorted(maps.Keys(p.Meta)) {
			meta = append(meta, [2]string{k, p.Meta[k]})
		}
		printKV(w, meta)
	}
	fmt.Fprintln(w, "\nScheduler Configuration")
	sc := p.SchedulerConfiguration
	if sc == nil {
		fmt.Fprintln(w, "No scheduler configuration")
		return
	}
	kv = [][2]string{{"Scheduler Algorithm", sc.SchedulerAlgorithm}}
	if sc.MemoryOversubscriptionEnabled != nil {
		kv = append(kv, [2]string{"Memory Oversubscription Enabled", fmt.Sprint(*sc.MemoryOversubscriptionEnabled)})
	}
	printKV(w, kv)
}

func newNodePoolListCommand() *cobra.Command {
	var address string
	var o outputFlags
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "list [-json | -t TEMPLATE]",
		Short: "List node pools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			pools, err := listNodePools(cmd, c, "")
			if err != nil {
				return err
			}
			if pools, err = filterItems(pages.filter, pools); err != nil {
				return err
			}
			pools, next := pageOf(pages, pools, func(p *structs.NodePool) string { return p.Name })
			defer warnNextPage(cmd, next)
			if o.set() {
				return o.write(cmd, pools)
			}
			tw := newTabs(cmd.OutOrStdout())
			fmt.Fprintln(tw, "Name\tDescription")
			for _, p := range pools {
				fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	pages.add(cmd)
	pages.addFilter(cmd)
	return cmd
}

func newNodePoolJobsCommand() *cobra.Command {
	var address string
	var o outputFlags
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "jobs [-json | -t TEMPLATE] NAME",
		Short: "List the jobs of a node pool (in -namespace; * for all; NAME may be a prefix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			pool, err := nodePoolByPrefix(cmd, c, args[0])
			if err != nil {
				return err
			}
			var jobs []*structs.JobListStub
			if _, err := c.Get(cmd.Context(), "/v1/node/pool/"+url.PathEscape(pool.Name)+"/jobs", nil, &jobs); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving jobs: %v", err)}
			}
			jobs, err = filterItems(pages.filter, jobs)
			if err != nil {
				return err
			}
			jobs, next := pageOf(pages, jobs, func(j *structs.JobListStub) string { return j.Namespace + "/" + j.ID })
			defer warnNextPage(cmd, next)
			if o.set() {
				return o.write(cmd, jobs)
			}
			out := cmd.OutOrStdout()
			if len(jobs) == 0 {
				fmt.Fprintln(out, "No jobs")
				return nil
			}
			printJobStubs(out, jobs)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	pages.add(cmd)
	pages.addFilter(cmd)
	return cmd
}

func newNodePoolNodesCommand() *cobra.Command {
	var address string
	var o outputFlags
	var pages pageFlags
	var verbose bool
	cmd := &cobra.Command{
		Use:   "nodes [-json | -t TEMPLATE] [-verbose] NAME",
		Short: "List the nodes of a node pool (NAME may be a prefix)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			pool, err := nodePoolByPrefix(cmd, c, args[0])
			if err != nil {
				return err
			}
			var nodes []*structs.NodeListStub
			if _, err := c.Get(cmd.Context(), "/v1/node/pool/"+url.PathEscape(pool.Name)+"/nodes", nil, &nodes); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving nodes: %v", err)}
			}
			nodes, err = filterItems(pages.filter, nodes)
			if err != nil {
				return err
			}
			nodes, next := pageOf(pages, nodes, func(n *structs.NodeListStub) string { return n.ID })
			defer warnNextPage(cmd, next)
			if o.set() {
				return o.write(cmd, nodes)
			}
			out := cmd.OutOrStdout()
			if len(nodes) == 0 {
				fmt.Fprintln(out, "No nodes")
				return nil
			}
			if !verbose {
				printNodeStubs(out, nodes)
				return nil
			}
			tw := newTabs(out)
			fmt.Fprintln(tw, "ID\tDC\tName\tPool\tDrain\tEligibility\tStatus")
			for _, n := range nodes {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\t%s\n", n.ID, n.Datacenter, n.Name, n.NodePool, n.Drain, n.SchedulingEligibility, n.Status)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	pages.add(cmd)
	pages.addFilter(cmd)
	cmd.Flags().BoolVar(&verbose, "verbose", false, "full node IDs")
	return cmd
}
