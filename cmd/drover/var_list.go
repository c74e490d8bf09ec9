package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

func newVarListCommand() *cobra.Command {
	var address string
	var quiet bool
	var o outputFlags
	var outFmt, tmpl string
	var pages pageFlags
	cmd := &cobra.Command{
		Use:   "list [-q] [-json] [-out table|terse|json|go-template [-template T]] [PREFIX]",
		Short: "List variables",
		Long: `List the variables whose path starts with PREFIX (every variable without
one), in the namespace ("*" for every namespace); only those the token may
list. -q (or -out terse) prints their paths alone; -out json is -json,
-out go-template with -template is -t.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch outFmt {
			case "", "table":
			case "terse":
				quiet = true
			case "json":
				o.json = true
			case "go-template":
				if tmpl == "" {
					return &exitError{code: 1, msg: "A template must be supplied using '-template' when using go-template formatting"}
				}
				o.tmpl = tmpl
			default:
				return &exitError{code: 1, msg: fmt.Sprintf("Invalid -out value %q: one of go-template, json, table, terse", outFmt)}
			}
			if tmpl != "" && outFmt != "go-template" {
				return &exitError{code: 1, msg: "The -template flag is only valid when using 'go-template' formatting"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			q := &apiclient.QueryOptions{Namespace: namespaceOrDefault(cmd)}
			if len(args) == 1 {
				q.Prefix = args[0]
			}
			vs, err := c.VarList(cmd.Context(), q)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving vars: %v", err)}
			}
			if vs == nil {
				vs = []*structs.VariableMetadata{}
			}
			if vs, err = filterItems(pages.filter, vs); err != nil {
				return err
			}
			vs, next := pageOf(pages, vs, func(v *structs.VariableMetadata) string { return v.Namespace + "/" + v.Path })
			if o.json && pages.perPage > 0 {
				// Nomad's paged JSON: the page and where the next starts.
				return o.write(cmd, map[string]any{"Data": vs, "QueryMeta": map[string]any{"NextToken": next}})
			}
			defer warnNextPage(cmd, next)
			if o.set() {
				return o.write(cmd, vs)
			}
			w := cmd.OutOrStdout()
			if quiet {
				for _, v := range vs {
					fmt.Fprintln(w, v.Path)
				}
				return nil
			}
			if len(vs) == 0 {
				if q.Prefix != "" {
					fmt.Fprintf(w, "No matching variables found with prefix %q\n", q.Prefix)
				} else {
					fmt.Fprintln(w, "No variables found")
				}
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "Namespace\tPath\tLast Updated")
			for _, v := range vs {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Namespace, v.Path, formatTime(v.ModifyTime))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the variables' paths")
	cmd.Flags().StringVar(&outFmt, "out", "", "table (default), terse, json or go-template")
	cmd.Flags().StringVar(&tmpl, "template", "", "the Go template of -out go-template")
	pages.add(cmd)
	pages.addFilter(cmd)
	o.add(cmd)
	addAddressFlag(cmd, &address)
	return cmd
}
