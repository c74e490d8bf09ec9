package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

// "drover acl auth-method create|list|info|update|delete", as Nomad's
// (website/commands/acl.md).

func newACLAuthMethodCommand() *cobra.Command {
	am := &cobra.Command{Use: "auth-method", Short: "Create, list, read, update and delete ACL auth methods (JWT, OIDC)"}
	am.AddCommand(newACLAuthMethodCreateCommand(), newACLAuthMethodListCommand(), newACLAuthMethodInfoCommand(),
		newACLAuthMethodUpdateCommand(), newACLAuthMethodDeleteCommand())
	return am
}

// authMethodFields are the flags of auth-method create and update.
type authMethodFields struct {
	name, typ, locality, nameFormat, config string
	maxTTL                                  time.Duration
	isDefault                               bool
}

func (f *authMethodFields) add(cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	if create {
		fs.StringVar(&f.name, "name", "", "name of the auth method")
	}
	fs.StringVar(&f.typ, "type", "", "type of the auth method: JWT or OIDC")
	fs.StringVar(&f.locality, "token-locality", "", "tokens a login makes are local or global")
	fs.StringVar(&f.nameFormat, "token-name-format", "", "name of the tokens a login makes, with ${auth_method_type}, ${auth_method_name} and ${value.<claim>}")
	fs.DurationVar(&f.maxTTL, "max-token-ttl", 0, "how long the tokens a login makes live")
	fs.BoolVar(&f.isDefault, "default", false, "the default method of its type (a login that names none uses it)")
	fs.StringVar(&f.config, "config", "", "the method's configuration as JSON: inline, @PATH, or - for standard input")
}

// readAuthMethodConfig reads -config: JSON inline, from @PATH, or "-"
// (standard input).
func readAuthMethodConfig(cmd *cobra.Command, v string) (*structs.ACLAuthMethodConfig, error) {
	var b []byte
	var err error
	switch {
	case v == "-":
		b, err = io.ReadAll(io.LimitReader(cmd.InOrStdin(), 1<<20))
	case strings.HasPrefix(v, "@"):
		b, err = os.ReadFile(v[1:])
	default:
		b = []byte(v)
	}
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error reading -config: %v", err)}
	}
	var c structs.ACLAuthMethodConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error parsing -config: %v", err)}
	}
	return &c, nil
}

// printACLAuthMethod prints a method as Nomad's acl auth-method commands
// do; its secrets are never shown (the servers answer "redacted").
func printACLAuthMethod(w io.Writer, m *structs.ACLAuthMethod) {
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, row := range [][2]string{
		{"Name", m.Name}, {"Type", m.Type}, {"Locality", m.TokenLocality}, {"Max Token TTL", m.MaxTokenTTL.String()},
		{"Token Name Format", m.TokenNameFormat}, {"Default", fmt.Sprint(m.Default)},
		{"Create Index", fmt.Sprint(m.CreateIndex)}, {"Modify Index", fmt.Sprint(m.ModifyIndex)},
	} {
		fmt.Fprintf(tw, "%s\t= %s\n", row[0], row[1])
	}
	tw.Flush()
	if m.Config == nil {
		return
	}
	c := m.Config
	fmt.Fprintln(w, "\nAuth Method Config")
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, row := range [][2]string{
		{"JWT Validation Public Keys", strings.Join(c.JWTValidationPubKeys, ",")}, {"JWKS URL", c.JWKSURL},
		{"OIDC Discovery URL", c.OIDCDiscoveryURL}, {"OIDC Client ID", c.OIDCClientID}, {"OIDC Client Secret", c.OIDCClientSecret},
		{"OIDC Scopes", strings.Join(c.OIDCScopes, ",")}, {"Bound audiences", strings.Join(c.BoundAudiences, ",")},
		{"Bound issuer", strings.Join(c.BoundIssuer, ",")}, {"Allowed redirects URIs", strings.Join(c.AllowedRedirectURIs, ",")},
		{"Signing algorithms", strings.Join(c.SigningAlgs, ",")},
		{"Expiration Leeway", c.ExpirationLeeway.String()}, {"NotBefore Leeway", c.NotBeforeLeeway.String()},
		{"ClockSkew Leeway", c.ClockSkewLeeway.String()},
		{"Claim mappings", formatMapping(c.ClaimMappings)}, {"List claim mappings", formatMapping(c.ListClaimMappings)},
	} {
		fmt.Fprintf(tw, "%s\t= %s\n", row[0], row[1])
	}
	tw.Flush()
}

func formatMapping(m map[string]string) string {
	var out []string
	for _, k := range sortedStrings(m) {
		out = append(out, k+"/"+m[k])
	}
	return "{" + strings.Join(out, "; ") + "}"
}

func sortedStrings(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func newACLAuthMethodCreateCommand() *cobra.Command {
	var address string
	var f authMethodFields
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "create -name NAME -type JWT|OIDC -max-token-ttl DURATION -token-locality local|global -config JSON",
		Short: "Create an ACL auth method",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case f.name == "":
				return &exitError{code: 1, msg: "ACL auth-method name must be specified using the -name flag"}
			case f.typ == "":
				return &exitError{code: 1, msg: "ACL auth-method type must be specified using the -type flag"}
			case f.config == "":
				return &exitError{code: 1, msg: "Must provide ACL Auth Method Config in JSON format using the -config flag"}
			}
			cfg, err := readAuthMethodConfig(cmd, f.config)
			if err != nil {
				return err
			}
			m := &structs.ACLAuthMethod{Name: f.name, Type: strings.ToUpper(f.typ), TokenLocality: f.locality,
				TokenNameFormat: f.nameFormat, MaxTokenTTL: f.maxTTL, Default: f.isDefault, Config: cfg}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var out structs.ACLAuthMethod
			if _, err := c.Put(cmd.Context(), "/v1/acl/auth-method", m, &out); err != nil {
				return aclFailed("creating ACL auth method", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLAuthMethod(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	f.add(cmd, true)
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func getAuthMethod(cmd *cobra.Command, address, name string) (*structs.ACLAuthMethod, error) {
	c, err := apiClientFor(cmd, address)
	if err != nil {
		return nil, err
	}
	var m structs.ACLAuthMethod
	if _, err := c.Get(cmd.Context(), "/v1/acl/auth-method/"+url.PathEscape(name), nil, &m); err != nil {
		return nil, aclFailed("reading ACL auth method", err)
	}
	return &m, nil
}

func newACLAuthMethodUpdateCommand() *cobra.Command {
	var address string
	var f authMethodFields
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "update [flags] NAME",
		Short: "Change an ACL auth method",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := getAuthMethod(cmd, address, args[0])
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			if fs.Changed("type") {
				m.Type = strings.ToUpper(f.typ)
			}
			if fs.Changed("token-locality") {
				m.TokenLocality = f.locality
			}
			if fs.Changed("token-name-format") {
				m.TokenNameFormat = f.nameFormat
			}
			if fs.Changed("max-token-ttl") {
				m.MaxTokenTTL = f.maxTTL
			}
			if fs.Changed("default") {
				m.Default = f.isDefault
			}
			if fs.Changed("config") {
				if m.Config, err = readAuthMethodConfig(cmd, f.config); err != nil {
					return err
				}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var out structs.ACLAuthMethod
			if _, err := c.Put(cmd.Context(), "/v1/acl/auth-method/"+url.PathEscape(m.Name), m, &out); err != nil {
				return aclFailed("updating ACL auth method", err)
			}
			if o.set() {
				return o.write(cmd, &out)
			}
			printACLAuthMethod(cmd.OutOrStdout(), &out)
			return nil
		},
	}
	f.add(cmd, false)
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLAuthMethodListCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the ACL auth methods",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var ms []*structs.ACLAuthMethodListStub
			if _, err := c.Get(cmd.Context(), "/v1/acl/auth-methods", nil, &ms); err != nil {
				return aclFailed("listing ACL auth methods", err)
			}
			if o.set() {
				return o.write(cmd, ms)
			}
			w := cmd.OutOrStdout()
			if len(ms) == 0 {
				fmt.Fprintln(w, "No ACL auth methods found")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "Name\tType\tDefault")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%t\n", m.Name, m.Type, m.Default)
			}
			return tw.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLAuthMethodInfoCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show an ACL auth method (its secrets redacted)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := getAuthMethod(cmd, address, args[0])
			if err != nil {
				return err
			}
			if o.set() {
				return o.write(cmd, m)
			}
			printACLAuthMethod(cmd.OutOrStdout(), m)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newACLAuthMethodDeleteCommand() *cobra.Command {
	var address string
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete an ACL auth method and its binding rules",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			if _, err := c.Delete(cmd.Context(), "/v1/acl/auth-method/"+url.PathEscape(args[0]), nil, nil); err != nil {
				return aclFailed("deleting ACL auth method", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ACL auth method %s successfully deleted\n", args[0])
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	return cmd
}
