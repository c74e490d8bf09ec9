package main

import (
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// "drover acl role create|list|info|update|delete", as Nomad's
// (website/commands/acl.md).

func newACLRoleCommand() *cobra.Command {
	role := &cobra.Command{Use: "role", Short: "Create, list, read, update and delete ACL roles"}
	role.AddCommand(newACLRoleCreateCommand(), newACLRoleListCommand(), newACLRoleInfoCommand(),
		newACLRoleUpdateCommand(), newACLRoleDeleteCommand())
	return role
}

func rolePolicyLinks(names []string) []*structs.ACLRolePolicyLink {
	var out []*structs.ACLRolePolicyLink
	for _, n := range names {
		out = append(out, &structs.ACLRolePolicyLink{Name: n})
	}
	return out
}

// printACLRole prints a role as Nomad's acl role commands do.
func printACLRole(w io.Writer, r *structs.ACLRole) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, row := range [][2]string{
		{"ID", r.ID}, {"Name", r.Name}, {"Description", r.Description},
		{"Policies", strings.Join(r.PolicyNames(), ",")},
		{"Create Index", fmt.Sprint(r.CreateIndex)}, {"Modify Index", fmt.Sprint(r.ModifyIndex)},
	} {
		fmt.Fprintf(tw, "%s\t= %s\n", row[0], row[1])
	}
	tw.Flush()
}

func newACLRoleCreateCommand() *cobra.Command {
	var address, name, description string
	var policies []string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "create -name NAME -policy POLICY... [-description TEXT]",
		Short: "Create an ACL role of policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return &exitError{code: 1, msg: "ACL role name must be specified using the -name flag"}
			}
			if len(policies) == 0 {
				return &exitError{code: 1, msg: "At least one policy name must be specified using the -policy flag"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var out structs.ACLRole
			in := &structs.ACLRole{Name: name, Description: description, Policies: rolePolicyLinks(policies)}
			if _, err := c.Put(cmd.Context(), "/v1/acl/role", in, &out); err != nil {
				return aclFailed("creating ACL role", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLRole(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "name of the role")
	fs.StringVar(&description, "description", "", "description of the role")
	fs.StringArrayVar(&policies, "policy", nil, "policy of the role, by name (repeatable)")
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLRoleListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACL roles",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var roles []*structs.ACLRoleListStub
			if _, err := c.Get(cmd.Context(), "/v1/acl/roles", nil, &roles); err != nil {
				return aclFailed("listing ACL roles", err)
			}
			if o.set() {
				return o.write(cmd, roles)
			}
			w := cmd.OutOrStdout()
			if len(roles) == 0 {
				fmt.Fprintln(w, "No ACL roles found")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tName\tDescription\tPolicies")
			for _, r := range roles {
				var names []string
				for _, p := range r.Policies {
					names = append(names, p.Name)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Description, strings.Join(names, ","))
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// getRole reads a role by ID, or by name.
func getRole(cmd *cobra.Command, address, idOrName string, byName bool) (*structs.ACLRole, error) {
	c, err := apiClientFor(cmd, address)
	if err != nil {
		return nil, err
	}
	path := "/v1/acl/role/" + url.PathEscape(idOrName)
	if byName {
		path = "/v1/acl/role/name/" + url.PathEscape(idOrName)
	}
	var r structs.ACLRole
	if _, err := c.Get(cmd.Context(), path, nil, &r); err != nil {
		return nil, aclFailed("reading ACL role", err)
	}
	return &r, nil
}

func newACLRoleInfoCommand() *cobra.Command {
	var address string
	var byName bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "info [-by-name] ROLE",
		Short: "Show an ACL role, by ID (or by name with -by-name)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := getRole(cmd, address, args[0], byName)
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, r)
			}
			printACLRole(cmd.OutOrStdout(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&byName, "by-name", false, "look the role up by its name")
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLRoleUpdateCommand() *cobra.Command {
	var address, name, description string
	var policies []string
	var noMerge bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "update [-name NAME] [-description TEXT] [-policy POLICY]... [-no-merge] ROLE-ID",
		Short: "Change an ACL role's name, description or policies",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := getRole(cmd, address, args[0], false)
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			if noMerge {
				if name == "" {
					return &exitError{code: 1, msg: "ACL role name must be specified using the -name flag"}
				}
				if len(policies) == 0 {
					return &exitError{code: 1, msg: "At least one policy name must be specified using the -policy flag"}
				}
				r = &structs.ACLRole{ID: r.ID}
			}
			if fs.Changed("name") || noMerge {
				r.Name = name
			}
			if fs.Changed("description") || noMerge {
				r.Description = description
			}
			if fs.Changed("policy") || noMerge {
				r.Policies = rolePolicyLinks(policies)
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var out structs.ACLRole
			if _, err := c.Put(cmd.Context(), "/v1/acl/role/"+url.PathEscape(r.ID), r, &out); err != nil {
				return aclFailed("updating ACL role", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLRole(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&name, "name", "", "new name of the role")
	fs.StringVar(&description, "description", "", "new description of the role")
	fs.StringArrayVar(&policies, "policy", nil, "policy of the role, by name (repeatable; replaces the role's)")
	fs.BoolVar(&noMerge, "no-merge", false, "replace the role with what the flags give, rather than changing only what they name")
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLRoleDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete ROLE-ID",
		Short: "Delete an ACL role",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Delete(cmd.Context(), "/v1/acl/role/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return aclFailed("deleting ACL role", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ACL role %s successfully deleted\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
