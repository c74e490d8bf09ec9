package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// tokenFields are the flags of acl token create and update.
type tokenFields struct {
	name, typ string
	policies  []string
	roleIDs   []string
	roleNames []string
	global    bool
	ttl       time.Duration
}

// roles returns the role links -role-id and -role-name give.
func (f *tokenFields) roles() []*structs.ACLTokenRoleLink {
	var out []*structs.ACLTokenRoleLink
	for _, id := range f.roleIDs {
		out = append(out, &structs.ACLTokenRoleLink{ID: id})
	}
	for _, n := range f.roleNames {
		out = append(out, &structs.ACLTokenRoleLink{Name: n})
	}
	return out
}

func (f *tokenFields) add(cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.name, "name", "", "name of the token")
	defType := ""
	if create {
		defType = structs.ACLTokenTypeClient
	}
	fs.StringVar(&f.typ, "type", defType, "type of the token: client or management")
	fs.StringArrayVar(&f.policies, "policy", nil, "policy of a client token (repeatable)")
	fs.StringArrayVar(&f.roleIDs, "role-id", nil, "ID of a role of a client token (repeatable)")
	fs.StringArrayVar(&f.roleNames, "role-name", nil, "name of a role of a client token (repeatable)")
	fs.BoolVar(&f.global, "global", false, "a global token: created in the authoritative region, it replicates to every federated region")
	if create {
		fs.DurationVar(&f.ttl, "ttl", 0, "the token expires this long after its creation, such as 8h")
	}
}

func newACLTokenCreateCommand() *cobra.Command {
	var address string
	var o outputFlags
	var f tokenFields
	cmd := &cobra.Command{
		Use:   "create [-name NAME] [-type client|management] [-policy NAME]... [-role-id ID]... [-role-name NAME]... [-ttl DURATION]",
		Short: "Create an ACL token",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			tok, err := c.ACLTokenCreate(cmd.Context(), &structs.ACLToken{
				Name: f.name, Type: f.typ, Policies: f.policies, Roles: f.roles(), Global: f.global, ExpirationTTL: f.ttl,
			})
			if err != nil {
				return aclFailed("creating token", err)
			}
			if o.set() {
				return o.write(cmd, tok)
			}
			printACLToken(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	f.add(cmd, true)
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLTokenUpdateCommand() *cobra.Command {
	var address string
	var f tokenFields
	cmd := &cobra.Command{
		Use:   "update [-name NAME] [-type client|management] [-policy NAME]... ACCESSOR-ID",
		Short: "Change an ACL token's name, policies or global flag",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			old, err := c.ACLToken(cmd.Context(), args[0])
			if err != nil {
				return aclFailed("fetching token", err)
			}
			fs := cmd.Flags()
			if fs.Changed("name") {
				old.Name = f.name
			}
			if fs.Changed("type") {
				old.Type = f.typ
			}
			if fs.Changed("policy") {
				old.Policies = f.policies
			}
			if fs.Changed("role-id") || fs.Changed("role-name") {
				old.Roles = f.roles()
			}
			if fs.Changed("global") {
				old.Global = f.global
			}
			// The TTL was spent when the token was made (its expiration
			// time, sent back as it is, stays); the servers refuse an
			// update that gives one, as Nomad's.
			old.ExpirationTTL = 0
			tok, err := c.ACLTokenUpdate(cmd.Context(), old)
			if err != nil {
				return aclFailed("updating token", err)
			}
			printACLToken(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	f.add(cmd, false)
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLTokenListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACL tokens (never their secrets)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			toks, err := c.ACLTokens(cmd.Context(), nil)
			if err != nil {
				return aclFailed("retrieving ACL tokens", err)
			}
			if o.set() {
				return o.write(cmd, toks)
			}
			w := cmd.OutOrStdout()
			if len(toks) == 0 {
				fmt.Fprintln(w, "No tokens found")
				return nil
			}
			now := time.Now()
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "Name\tType\tGlobal\tAccessor ID\tExpired")
			for _, t := range toks {
				expired := t.ExpirationTime != nil && !now.Before(*t.ExpirationTime)
				fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%t\n", t.Name, t.Type, t.Global, t.AccessorID, expired)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLTokenInfoCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "info ACCESSOR-ID",
		Short: "Show an ACL token (its secret to a management token or to itself)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			tok, err := c.ACLToken(cmd.Context(), args[0])
			if err != nil {
				return aclFailed("fetching token", err)
			}
			printACLToken(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLTokenSelfCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "self",
		Short: "Show the token in use (-token, DROVER_TOKEN, NOMAD_TOKEN)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			tok, err := c.ACLTokenSelf(cmd.Context())
			if err != nil {
				return aclFailed("fetching self token", err)
			}
			printACLToken(cmd.OutOrStdout(), tok)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLTokenDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete ACCESSOR-ID",
		Short: "Delete (revoke) an ACL token",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if err := c.ACLTokenDelete(cmd.Context(), args[0]); err != nil {
				return aclFailed("deleting token", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Token %s successfully deleted\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
