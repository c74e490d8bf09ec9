package main

import (
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// "drover acl binding-rule create|list|info|update|delete", as Nomad's
// (website/commands/acl.md).

func newACLBindingRuleCommand() *cobra.Command {
	br := &cobra.Command{Use: "binding-rule", Short: "Create, list, read, update and delete ACL binding rules"}
	br.AddCommand(newACLBindingRuleCreateCommand(), newACLBindingRuleListCommand(), newACLBindingRuleInfoCommand(),
		newACLBindingRuleUpdateCommand(), newACLBindingRuleDeleteCommand())
	return br
}

func printACLBindingRule(w io.Writer, b *structs.ACLBindingRule) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, row := range [][2]string{
		{"ID", b.ID}, {"Description", b.Description}, {"Auth Method", b.AuthMethod}, {"Selector", fmt.Sprintf("%q", b.Selector)},
		{"Bind Type", b.BindType}, {"Bind Name", b.BindName},
		{"Create Time", b.CreateTime.String()}, {"Modify Time", b.ModifyTime.String()},
		{"Create Index", fmt.Sprint(b.CreateIndex)}, {"Modify Index", fmt.Sprint(b.ModifyIndex)},
	} {
		fmt.Fprintf(tw, "%s\t= %s\n", row[0], row[1])
	}
	tw.Flush()
}

// bindingRuleFields are the flags of binding-rule create and update.
type bindingRuleFields struct {
	method, bindType, bindName, selector, description string
}

func (f *bindingRuleFields) add(cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	if create {
		fs.StringVar(&f.method, "auth-method", "", "the auth method the rule applies to")
	}
	fs.StringVar(&f.bindType, "bind-type", "", "what the rule binds: role, policy or management")
	fs.StringVar(&f.bindName, "bind-name", "", "the role or policy it binds; ${value.<claim>} is filled in from the login")
	fs.StringVar(&f.selector, "selector", "", "expression over the login's claims (value.<name>, list.<name>) that selects it")
	fs.StringVar(&f.description, "description", "", "description of the rule")
}

func newACLBindingRuleCreateCommand() *cobra.Command {
	var address string
	var f bindingRuleFields
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "create -auth-method NAME -bind-type role|policy|management [-bind-name NAME] [-selector EXPR]",
		Short: "Create an ACL binding rule",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case f.method == "":
				return &exitError{code: 1, msg: "ACL binding rule auth method must be specified using the -auth-method flag"}
			case f.bindType == "":
				return &exitError{code: 1, msg: "ACL binding rule bind type must be specified using the -bind-type flag"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			in := &structs.ACLBindingRule{AuthMethod: f.method, BindType: f.bindType, BindName: f.bindName,
				Selector: f.selector, Description: f.description}
			var out structs.ACLBindingRule
			if _, err := c.Put(cmd.Context(), "/v1/acl/binding-rule", in, &out); err != nil {
				return aclFailed("creating ACL binding rule", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLBindingRule(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	f.add(cmd, true)
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func getBindingRule(cmd *cobra.Command, address, id string) (*structs.ACLBindingRule, error) {
	c, err := apiClientFor(cmd, address)
	if err != nil {
		return nil, err
	}
	var b structs.ACLBindingRule
	if _, err := c.Get(cmd.Context(), "/v1/acl/binding-rule/"+url.PathEscape(id), nil, &b); err != nil {
		return nil, aclFailed("reading ACL binding rule", err)
	}
	return &b, nil
}

func newACLBindingRuleUpdateCommand() *cobra.Command {
	var address string
	var f bindingRuleFields
	var noMerge bool
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "update [flags] RULE-ID",
		Short: "Change an ACL binding rule",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := getBindingRule(cmd, address, args[0])
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			if noMerge {
				b = &structs.ACLBindingRule{ID: b.ID, AuthMethod: b.AuthMethod}
			}
			if fs.Changed("bind-type") || noMerge {
				b.BindType = f.bindType
			}
			if fs.Changed("bind-name") || noMerge {
				b.BindName = f.bindName
			}
			if fs.Changed("selector") || noMerge {
				b.Selector = f.selector
			}
			if fs.Changed("description") || noMerge {
				b.Description = f.description
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var out structs.ACLBindingRule
			if _, err := c.Put(cmd.Context(), "/v1/acl/binding-rule/"+url.PathEscape(b.ID), b, &out); err != nil {
				return aclFailed("updating ACL binding rule", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLBindingRule(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	f.add(cmd, false)
	cmd.Flags().BoolVar(&noMerge, "no-merge", false, "replace the rule with what the flags give, rather than changing only what they name")
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLBindingRuleListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACL binding rules",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var rules []*structs.ACLBindingRuleListStub
			if _, err := c.Get(cmd.Context(), "/v1/acl/binding-rules", nil, &rules); err != nil {
				return aclFailed("listing ACL binding rules", err)
			}
			if o.set() {
				return o.write(cmd, rules)
			}
			w := cmd.OutOrStdout()
			if len(rules) == 0 {
				fmt.Fprintln(w, "No ACL binding rules found")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tDescription\tAuth Method")
			for _, b := range rules {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", b.ID, b.Description, b.AuthMethod)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLBindingRuleInfoCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "info RULE-ID",
		Short: "Show an ACL binding rule",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := getBindingRule(cmd, address, args[0])
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, b)
			}
			printACLBindingRule(cmd.OutOrStdout(), b)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLBindingRuleDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete RULE-ID",
		Short: "Delete an ACL binding rule",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Delete(cmd.Context(), "/v1/acl/binding-rule/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return aclFailed("deleting ACL binding rule", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ACL binding rule %s successfully deleted\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
