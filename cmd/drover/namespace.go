package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/httpapi"
)

// "drover namespace apply|delete|inspect|list|status", as Nomad's, over
// /v1/namespaces and /v1/namespace/{name} (website/commands/namespace.md).
// A namespace is a stored object: apply creates or updates one (from its
// name and flags, or from an HCL or JSON specification), delete removes
// one that holds nothing, and status and inspect show what is stored.

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
		Use:   "apply [-description TEXT] [-quota NAME] [-json] NAME | FILE | -",
		Short: "Create or update a namespace",
		Long: `Creates or updates a namespace, as Nomad's namespace apply. The argument is
a specification file (HCL, or JSON with -json; "-" reads standard input)
or else the name of the namespace: an existing one keeps what it has and
takes -description and -quota when given; a new one gets them.

A specification sets name, description, quota, meta { … }, capabilities
{ enabled_task_drivers, disabled_task_drivers, enabled_network_modes,
disabled_network_modes }, node_pool_config { default, allowed, denied },
vault { … } and consul { … } (the last two stored only). With ACLs it
needs a management token.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			arg := args[0]
			var ns *httpapi.Namespace
			if st, serr := os.Stat(arg); arg == "-" || serr == nil && !st.IsDir() {
				if cmd.Flags().Changed("description") || cmd.Flags().Changed("quota") {
					fmt.Fprintln(cmd.ErrOrStderr(), "Flags are ignored when a file is specified!")
				}
				if ns, err = readNamespaceSpec(cmd, arg, fromJSON); err != nil {
					return err
				}
			} else {
				if arg == "" {
					return &exitError{code: 1, msg: "Namespace name required"}
				}
				var cur httpapi.Namespace
				_, err := c.Get(cmd.Context(), "/v1/namespace/"+url.PathEscape(arg), nil, &cur)
				switch {
				case err == nil:
					ns = &cur
				case apiclient.IsNotFound(err):
					ns = &httpapi.Namespace{Name: arg}
				default:
					return &exitError{code: 1, msg: fmt.Sprintf("Error looking up namespace: %v", err)}
				}
				if cmd.Flags().Changed("description") {
					ns.Description = description
				}
				if cmd.Flags().Changed("quota") {
					ns.Quota = quota
				}
			}
			if _, err := c.Put(cmd.Context(), "/v1/namespace", ns, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error applying namespace: %v", err)}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully applied namespace %q!\n", ns.Name)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&description, "description", "", "the namespace's description")
	cmd.Flags().StringVar(&quota, "quota", "", "the quota the namespace names (stored; drover enforces no quotas)")
	cmd.Flags().BoolVar(&fromJSON, "json", false, "the specification file is JSON (Nomad's API namespace object)")
	return cmd
}

// readNamespaceSpec reads a namespace specification from path ("-":
// standard input): JSON with isJSON, HCL otherwise.
func readNamespaceSpec(cmd *cobra.Command, path string, isJSON bool) (*httpapi.Namespace, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(cmd.InOrStdin())
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Failed to read file: %v", err)}
	}
	if isJSON {
		var ns httpapi.Namespace
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ns); err != nil {
			return nil, &exitError{code: 1, msg: fmt.Sprintf("Failed to parse namespace: %v", err)}
		}
		return &ns, nil
	}
	ns, err := parseNamespaceHCL(path, data)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing namespace specification: %v", err)}
	}
	return ns, nil
}

func newNamespaceDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete a namespace",
		Long: `Deletes a namespace, as Nomad's namespace delete: refused for "default" and
for a namespace that still holds a job that is not dead, an allocation
that is not terminal, or a variable.`,
		Args: cobra.ExactArgs(1),
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

// listNamespaces reads the namespaces whose name starts with prefix.
func listNamespaces(cmd *cobra.Command, c *apiclient.Client, prefix string) ([]*httpapi.Namespace, error) {
	var list []*httpapi.Namespace
	var q *apiclient.QueryOptions
	if prefix != "" {
		q = &apiclient.QueryOptions{Params: map[string]string{"prefix": prefix}}
	}
	if _, err := c.Get(cmd.Context(), "/v1/namespaces", q, &list); err != nil {
		return nil, err
	}
	return list, nil
}

// lookupNamespace finds the namespace name names by prefix, as Nomad's:
// the one match, or the exact one among several; several others are an
// error that lists them.
func lookupNamespace(cmd *cobra.Command, c *apiclient.Client, name string) (*httpapi.Namespace, error) {
	list, err := listNamespaces(cmd, c, name)
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error retrieving namespaces: %v", err)}
	}
	switch len(list) {
	case 0:
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error retrieving namespaces: Namespace %q matched no namespaces", name)}
	case 1:
		return list[0], nil
	}
	for _, ns := range list {
		if ns.Name == name {
			return ns, nil
		}
	}
	var b strings.Builder
	writeNamespaces(&b, list)
	return nil, &exitError{code: 1, msg: "Prefix matched multiple namespaces\n\n" + strings.TrimRight(b.String(), "\n")}
}

// writeNamespaces prints Nomad's table of namespaces, by name.
func writeNamespaces(w io.Writer, list []*httpapi.Namespace) {
	if len(list) == 0 {
		fmt.Fprintln(w, "No namespaces found")
		return
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	tw := newTabs(w)
	fmt.Fprintln(tw, "Name\tDescription")
	for _, ns := range list {
		fmt.Fprintf(tw, "%s\t%s\n", ns.Name, ns.Description)
	}
	_ = tw.Flush()
}

func newNamespaceInspectCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "inspect [-t TEMPLATE] NAME",
		Short: "Print a namespace as JSON",
		Long:  `Prints the namespace NAME names (by prefix, as Nomad's) as JSON, or formatted with -t.`,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ns, err := lookupNamespace(cmd, c, args[0])
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
			list, err := listNamespaces(cmd, c, "")
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error retrieving namespaces: %v", err)}
			}
			if o.set() {
				return o.write(cmd, list)
			}
			writeNamespaces(cmd.OutOrStdout(), list)
			return nil
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
		Long: `Shows the namespace NAME names (by prefix, as Nomad's): its description,
quota, capabilities, metadata and node pool, Vault and Consul settings.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			ns, err := lookupNamespace(cmd, c, args[0])
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, ns)
			}
			writeNamespaceStatus(cmd.OutOrStdout(), ns)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// writeNamespaceStatus prints a namespace as Nomad's namespace status.
func writeNamespaceStatus(w io.Writer, ns *httpapi.Namespace) {
	drivers, noDrivers, modes, noModes := "*", "", "*", ""
	if c := ns.Capabilities; c != nil {
		if len(c.EnabledTaskDrivers) > 0 {
			drivers = strings.Join(c.EnabledTaskDrivers, ",")
		}
		noDrivers = strings.Join(c.DisabledTaskDrivers, ",")
		if len(c.EnabledNetworkModes) > 0 {
			modes = strings.Join(c.EnabledNetworkModes, ",")
		}
		noModes = strings.Join(c.DisabledNetworkModes, ",")
	}
	printKV(w, [][2]string{
		{"Name", ns.Name},
		{"Description", ns.Description},
		{"Quota", ns.Quota},
		{"Enabled Drivers", drivers},
		{"Disabled Drivers", noDrivers},
		{"Enabled Network Modes", modes},
		{"Disabled Network Modes", noModes},
	})
	if len(ns.Meta) > 0 {
		fmt.Fprintln(w, "\nMetadata")
		keys := make([]string, 0, len(ns.Meta))
		for k := range ns.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([][2]string, len(keys))
		for i, k := range keys {
			pairs[i] = [2]string{k, ns.Meta[k]}
		}
		printKV(w, pairs)
	}
	cluster := func(title, def string, allowed, denied []string) {
		fmt.Fprintf(w, "\n%s\n", title)
		pairs := [][2]string{{"Default", def}}
		if len(allowed) > 0 {
			pairs = append(pairs, [2]string{"Allowed", strings.Join(allowed, ", ")})
		}
		if len(denied) > 0 {
			pairs = append(pairs, [2]string{"Denied", strings.Join(denied, ", ")})
		}
		printKV(w, pairs)
	}
	if c := ns.NodePoolConfiguration; c != nil {
		cluster("Node Pool Configuration", c.Default, c.Allowed, c.Denied)
	}
	if c := ns.VaultConfiguration; c != nil {
		cluster("Vault Configuration", c.Default, c.Allowed, c.Denied)
	}
	if c := ns.ConsulConfiguration; c != nil {
		cluster("Consul Configuration", c.Default, c.Allowed, c.Denied)
	}
}
