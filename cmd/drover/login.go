package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerCommand("login", newLoginCommand) }

// newLoginCommand is "drover login": a JWT exchanged for an ACL token
// through an auth method (PUT /v1/acl/login), as Nomad's. The OIDC
// browser flow is not supported; -type OIDC and -oidc-callback-addr are
// refused with that reason.
func newLoginCommand() *cobra.Command {
	var address, method, typ, loginToken string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "login [-method NAME] [-type JWT] -login-token JWT",
		Short: "Log in with a JWT through an ACL auth method, and print the ACL token it gives",
		Long: `Log in with a JWT through a JWT auth method: the servers verify the JWT
against the method's keys, bound audiences and issuers, evaluate its binding
rules over the JWT's claims, and answer a new ACL token with the roles and
policies they bind. Without -method the default JWT auth method is used.
The OIDC browser flow is not supported by drover.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if typ != "" && !strings.EqualFold(typ, structs.ACLAuthMethodTypeJWT) {
				return &exitError{code: 1, msg: fmt.Sprintf("Error: -type %s is not supported by drover: the OIDC browser flow is not supported; log in with a JWT auth method (-type JWT)", typ)}
			}
			if loginToken == "" {
				return &exitError{code: 1, msg: "Error: a JWT login needs -login-token"}
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var tok structs.ACLToken
			req := map[string]string{"AuthMethodName": method, "LoginToken": loginToken}
			if _, err := c.Put(cmd.Context(), "/v1/acl/login", req, &tok); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error performing login: %v", err)}
			}
			if o.set() {
				return o.write(cmd, &tok)
			}
			via := method
			if via == "" {
				via = "the default JWT auth method"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Successfully logged in via %s and %s\n\n", structs.ACLAuthMethodTypeJWT, via)
			printACLToken(cmd.OutOrStdout(), &tok)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&method, "method", "", "the auth method to log in with (default: the default JWT method)")
	fs.StringVar(&typ, "type", "", "the type of the auth method: JWT (OIDC is not supported)")
	fs.StringVar(&loginToken, "login-token", "", "the JWT to log in with")
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}
