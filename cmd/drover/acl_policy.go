package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/structs"
)

func newACLPolicyApplyCommand() *cobra.Command {
	var address, description string
	cmd := &cobra.Command{
		Use:   "apply [-description TEXT] NAME PATH",
		Short: "Create or replace an ACL policy from a rules file",
		Long: `Create or replace the policy NAME with the rules in PATH ("-" for standard
input), Nomad's HCL policy language. The rules are checked here first: each
problem is reported with its file, line and field, and nothing is sent.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, path := args[0], args[1]
			var rules []byte
			var err error
			if path == "-" {
				rules, err = io.ReadAll(cmd.InOrStdin())
				path = "<stdin>"
			} else {
				rules, err = os.ReadFile(path)
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading policy file: %v", err)}
			}
			if _, err := acl.Parse(name, path, string(rules)); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing policy %q:\n%v", name, err)}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			p := &structs.ACLPolicy{Name: name, Description: description, Rules: string(rules)}
			if err := c.ACLPolicyApply(cmd.Context(), p); err != nil {
				return aclFailed("writing ACL policy", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully wrote %q ACL policy!\n", name)
			return nil
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "description of the policy")
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLPolicyListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACL policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ps, err := c.ACLPolicies(cmd.Context(), nil)
			if err != nil {
				return aclFailed("retrieving ACL policies", err)
			}
			if o.set() {
				return o.write(cmd, ps)
			}
			w := cmd.OutOrStdout()
			if len(ps) == 0 {
				fmt.Fprintln(w, "No policies found")
				return nil
			}
			return writePolicyTable(w, ps)
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLPolicyInfoCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show an ACL policy and its rules",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			p, err := c.ACLPolicy(cmd.Context(), args[0])
			if err != nil {
				return aclFailed("querying ACL policy", err)
			}
			desc := p.Description
			if desc == "" {
				desc = "<none>"
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Name        = %s\nDescription = %s\nCreateIndex = %d\nModifyIndex = %d\n\nRules\n\n%s\n",
				p.Name, desc, p.CreateIndex, p.ModifyIndex, p.Rules)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLPolicyDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an ACL policy",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if err := c.ACLPolicyDelete(cmd.Context(), args[0]); err != nil {
				return aclFailed("deleting ACL policy", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted %q ACL policy!\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

func newACLPolicySelfCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "self",
		Short: "List the policies of the token in use, its roles' included",
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
			var ps []*structs.ACLPolicyListStub
			if _, err := c.Get(cmd.Context(), "/v1/acl/policy/self", nil, &ps); err != nil {
				return aclFailed("fetching self token policies", err)
			}
			if o.set() {
				return o.write(cmd, ps)
			}
			w := cmd.OutOrStdout()
			if tok.Type == structs.ACLTokenTypeManagement {
				fmt.Fprintln(w, "This is a management token. No individual policies are assigned.")
				return nil
			}
			if len(ps) == 0 {
				fmt.Fprintln(w, "No policies found for this token.")
				return nil
			}
			return writePolicyTable(w, ps)
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// writePolicyTable writes the Name/Description table that acl policy list and
// acl policy self print.
func writePolicyTable(w io.Writer, ps []*structs.ACLPolicyListStub) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Name\tDescription")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	return tw.Flush()
}
