package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
)

func newVarGetCommand() *cobra.Command {
	var address, out, tmpl, item string
	cmd := &cobra.Command{
		Use:   "get [-item KEY] [-out FORMAT] PATH",
		Short: "Read a variable",
		Long: `Read the variable at PATH. -item prints one item's value alone; otherwise
-out chooses the format: table (the default on a terminal), json (the default
when the output is redirected), hcl, go-template (with -template) or none.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if out == "" {
				out = defaultVarOut(w, "table")
			}
			if item == "" {
				if err := checkOutFormat(out, tmpl); err != nil {
					return err
				}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			v, err := c.VarGet(cmd.Context(), args[0], &apiclient.QueryOptions{Namespace: namespaceOrDefault(cmd)})
			if apiclient.IsNotFound(err) {
				return &exitError{code: 1, msg: "Variable not found"}
			}
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving variable: %v", err)}
			}
			if item != "" {
				val, ok := v.Items[item]
				if !ok {
					return &exitError{code: 1, msg: fmt.Sprintf("Variable does not contain %q item", item)}
				}
				_, err := fmt.Fprintln(w, val)
				return err
			}
			return printVariable(w, v, out, tmpl)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&item, "item", "", "print only the value of this item")
	fs.StringVar(&out, "out", "", "output format: go-template, hcl, json, none or table")
	fs.StringVar(&tmpl, "template", "", "Go template for -out go-template")
	addAddressFlag(cmd, &address)
	return cmd
}
