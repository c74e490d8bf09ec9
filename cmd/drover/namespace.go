package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/httpapi"
	"github.com/droverhq/drover/structs"
)

// "drover namespace apply|delete|inspect|list|status", as Nomad's, over
// /v1/namespaces and /v1/namespace/{name} (website/commands/namespace.md).
// A namespace in drover exists once a job, a variable or a service names
// it; drover stores no description, meta or quota yet.

func init() {
	groupShorts["namespace"] = "List, read, apply and delete namespaces"
	registerSubcommand("namespace apply", newNamespaceApplyCommand)
	registerSubcommand("namespace delete", newNamespaceDeleteCommand)
	registerSubcommand("namespace inspect", newNamespaceInspectCommand)
	registerSubcommand("namespace list", newNamespaceListCommand)
	registerSubcommand("namespace status", newNamespaceStatusCommand)
}

func newNamespaceApplyCommand() *cobra.Command {
	var address, description, quota string
	var fromJSON bool
	cmd := &cobra.Command{
		Use:   "apply [-description TEXT] NAME | FILE",
		Short: "Create or update a namespace",
		Long: `Applies the namespace NAME, or the namespace of the HCL or JSON specification
FILE, as Nomad's namespace apply. In drover a namespace exists once a job,
a variable or a service names it: applying one by its name alone is
accepted; a description, meta, quota or capabilities are refused, as
drover does not store them yet.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ns := map[string]any{"Name": args[0]}
			if st, err := os.Stat(args[0]); err == nil && !st.IsDir() || args[0] == "-" {
				spec, err := readNamespaceSpec(cmd, args[0], fromJSON)
				if err != nil {
					return err
				}
				ns = spec
			}
			if cmd.Flags().Changed("description") {
				ns["Description"] = description
			}
			if cmd.Flags().Changed("quota") {
				ns["Quota"] = quota
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Put(cmd.Context(), "/v1/namespace", ns, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error applying namespace: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully applied namespace %q!\n", ns["Name"])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&description, "description", "", "the namespace's description (refused: drover does not store one yet)")
	cmd.Flags().StringVar(&quota, "quota", "", "the namespace's quota (refused: quotas are a Nomad Enterprise feature)")
	cmd.Flags().BoolVar(&fromJSON, "json", false, "FILE is JSON")
	return cmd
}

// readNamespaceSpec reads a namespace specification: JSON (Nomad's API
// object), or HCL with name and description attributes.
func readNamespaceSpec(cmd *cobra.Command, path string, isJSON bool) (map[string]any, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error reading namespace specification: %v", err)}
	}
	if trimmed := strings.TrimSpace(string(data)); isJSON || strings.HasPrefix(trimmed, "{") {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing namespace specification: %v", err)}
		}
		return m, nil
	}
	m, err := parseSimpleHCL(path, data, map[string]string{"name": "Name", "description": "Description", "quota": "Quota"})
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing namespace specification: %v", err)}
	}
	return m, nil
}

func newNamespaceDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a namespace",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Delete(cmd.Context(), "/v1/namespace/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error deleting namespace: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully deleted namespace %q!\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}

// getNamespace reads one namespace.
func getNamespace(cmd *cobra.Command, c *apiclient.Client, name string) (*httpapi.Namespace, error) {
	var ns httpapi.Namespace
	if _, err := c.Get(cmd.Context(), "/v1/namespace/"+url.PathEscape(name), nil, &ns); err != nil {
		if apiclient.IsNotFound(err) {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("Namespace %q not found", name)}
		}
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error retrieving namespace: %v", err)}
	}
	return &ns, nil
}

func newNamespaceInspectCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "inspect [-t TEMPLATE] NAME",
		Short: "Print a namespace as JSON",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ns, err := getNamespace(cmd, c, args[0])
			if err != nil {
				return err
			}
			if o.tmpl == "" {
				o.json = true
			}
			return o.write(cmd, ns)
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd) // -json is what inspect prints without -t
	return cmd
}

func newNamespaceListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list [-json | -t TEMPLATE]",
		Short: "List namespaces",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var list []*httpapi.Namespace
			if _, err := c.Get(cmd.Context(), "/v1/namespaces", nil, &list); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving namespaces: %v", err)}
			}
			if o.set() {
				return o.write(cmd, list)
			}
			out := cmd.OutOrStdout()
			if len(list) == 0 {
				fmt.Fprintln(out, "No namespaces found")
				return nil
			}
			tw := newTabs(out)
			fmt.Fprintln(tw, "Name\tDescription")
			for _, ns := range list {
				fmt.Fprintf(tw, "%s\t%s\n", ns.Name, ns.Description)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newNamespaceStatusCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "status [-json | -t TEMPLATE] NAME",
		Short: "Show a namespace",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ns, err := getNamespace(cmd, c, args[0])
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, ns)
			}
			printKV(cmd.OutOrStdout(), [][2]string{
				{"Name", ns.Name},
				{"Description", ns.Description},
				{"Quota", ns.Quota},
				{"EnabledDrivers", ""},
				{"DisabledDrivers", ""},
				{"DefaultNodePool", structs.DefaultNodePool},
			})
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}
