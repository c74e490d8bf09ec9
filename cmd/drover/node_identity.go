package main

import (
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// newNodeIdentityCommand is Nomad's node identity get|renew.
func newNodeIdentityCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "identity", Short: "Read and renew a client node's identity"}
	cmd.AddCommand(newNodeIdentityGetCommand(), newNodeIdentityRenewCommand())
	return cmd
}

func newNodeIdentityGetCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "get [flags] NODE",
		Short: "Show the claims of a node's identity",
		Long: `Shows the claims of a client node's identity (GET /v1/client/identity), as
Nomad's: the registered claims with times, then Nomad's. NODE is a node ID or
a prefix of one. Needs node:read. See website/commands/node-identity.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: 1, msg: "This command takes one argument: <node_id>"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			node, err := lookupNode(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			var resp structs.NodeIdentityGetResponse
			if _, err := c.Get(ctx, "/v1/client/identity", &apiclient.QueryOptions{Params: map[string]string{"node_id": node.ID}}, &resp); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error requesting node identity: %v", err)}
			}
			if o.set() {
				return o.write(cmd, resp.Claims)
			}
			return printClaims(cmd, resp.Claims)
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// printClaims prints Nomad's table: the registered claims (numbers as
// times), then the nomad_ ones, each group sorted.
func printClaims(cmd *cobra.Command, claims map[string]any) error {
	var generic, nomad []string
	for k := range claims {
		if strings.HasPrefix(k, "nomad") {
			nomad = append(nomad, k)
		} else {
			generic = append(generic, k)
		}
	}
	sort.Strings(generic)
	sort.Strings(nomad)
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "Claim Key\tClaim Value")
	for _, k := range generic {
		switch v := claims[k].(type) {
		case float64:
			fmt.Fprintf(tw, "%s\t%s\n", k, formatTime(time.Unix(int64(v), 0).UnixNano()))
		case []any:
			parts := make([]string, len(v))
			for i, p := range v {
				parts[i] = fmt.Sprint(p)
			}
			fmt.Fprintf(tw, "%s\t%s\n", k, strings.Join(parts, ","))
		default:
			fmt.Fprintf(tw, "%s\t%v\n", k, v)
		}
	}
	for _, k := range nomad {
		fmt.Fprintf(tw, "%s\t%v\n", k, claims[k])
	}
	return tw.Flush()
}

func newNodeIdentityRenewCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "renew [flags] NODE",
		Short: "Make a node ask the servers for a new identity",
		Long: `Makes a client node ask the servers for a new identity now
(PUT /v1/client/identity/renew), as Nomad's. NODE is a node ID or a prefix of
one. Needs node:write. See website/commands/node-identity.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: 1, msg: "This command takes one argument: <node_id>"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ctx, out := cmd.Context(), cmd.OutOrStdout()
			node, err := lookupNode(ctx, c, out, args[0])
			if err != nil {
				return asExit(err)
			}
			if _, err := c.Put(ctx, "/v1/client/identity/renew", &structs.NodeIdentityRenewRequest{NodeID: node.ID}, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error requesting node identity renewal: %v", err)}
			}
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

// newNodeIntroCommand is Nomad's node intro create.
func newNodeIntroCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "intro", Short: "Make client introduction tokens"}
	var address, ttl, name, pool string
	var o outputFlags
	create := &cobra.Command{
		Use:   "create [flags]",
		Short: "Generate a client introduction token",
		Long: `Generates a client introduction token (PUT
/v1/acl/identity/client-introduction-token), as Nomad's: a new client node
presents it when it registers (drover agent -client-intro-token). Needs
node:write. See website/commands/node-identity.md.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return &exitError{code: 1, msg: "This command takes no arguments"}
			}
			var d time.Duration
			if ttl != "" {
				var err error
				if d, err = time.ParseDuration(ttl); err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error parsing TTL: %v", err)}
				}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var resp structs.ClientIntroductionTokenResponse
			req := &structs.ClientIntroductionTokenRequest{TTL: d, NodeName: name, NodePool: pool}
			if _, err := c.Put(cmd.Context(), "/v1/acl/identity/client-introduction-token", req, &resp); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error generating introduction token: %v", err)}
			}
			if o.set() {
				return o.write(cmd, &resp)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully generated client introduction token:\n\n%s\n", resp.JWT)
			return nil
		},
	}
	addAddressFlag(create, &address)
	o.add(create)
	create.Flags().StringVar(&ttl, "ttl", "", "TTL of the token (default: the servers' client_introduction.default_identity_ttl)")
	create.Flags().StringVar(&name, "node-name", "", "name of the node the token is for (default: any)")
	create.Flags().StringVar(&pool, "node-pool", "", `node pool the token is for (default "default")`)
	cmd.AddCommand(create)
	return cmd
}
