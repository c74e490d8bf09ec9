package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { registerCommand("acl", newACLCommand) }

// newACLCommand is "drover acl": bootstrap, policy and token, as Nomad's
// (website/commands/acl.md).
func newACLCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "acl", Short: "Bootstrap the ACL system; manage ACL policies and tokens"}
	policy := &cobra.Command{Use: "policy", Short: "Create, list, read and delete ACL policies"}
	policy.AddCommand(newACLPolicyApplyCommand(), newACLPolicyListCommand(), newACLPolicyInfoCommand(), newACLPolicyDeleteCommand())
	token := &cobra.Command{Use: "token", Short: "Create, list, read, update and delete ACL tokens"}
	token.AddCommand(newACLTokenCreateCommand(), newACLTokenListCommand(), newACLTokenInfoCommand(),
		newACLTokenUpdateCommand(), newACLTokenDeleteCommand(), newACLTokenSelfCommand())
	cmd.AddCommand(newACLBootstrapCommand(), policy, token)
	return cmd
}

// aclFailed is the error of a failed ACL call, in Nomad's words.
func aclFailed(what string, err error) error {
	return &exitError{code: 1, msg: fmt.Sprintf("Error %s: %v", what, err)}
}

// hiddenSecret stands for a SecretID the servers no longer know: they
// keep only its hash, and show it once, to the request that creates it.
const hiddenSecret = "<hidden: shown only when the token was created>"

// printACLToken prints a token as Nomad's acl token commands do.
func printACLToken(w io.Writer, t *structs.ACLToken) {
	secret := t.SecretID
	if secret == "" {
		secret = hiddenSecret
	}
	expiry := "<none>"
	if t.ExpirationTime != nil {
		expiry = t.ExpirationTime.String()
	}
	policies, roles := "n/a", "n/a"
	if t.Type != structs.ACLTokenTypeManagement {
		policies, roles = "<none>", "<none>"
		if len(t.Policies) > 0 {
			policies = "[" + strings.Join(t.Policies, " ") + "]"
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, row := range [][2]string{
		{"Accessor ID", t.AccessorID}, {"Secret ID", secret}, {"Name", t.Name}, {"Type", t.Type},
		{"Global", fmt.Sprint(t.Global)}, {"Create Time", t.CreateTime.String()}, {"Expiry Time", expiry},
		{"Create Index", fmt.Sprint(t.CreateIndex)}, {"Modify Index", fmt.Sprint(t.ModifyIndex)},
		{"Policies", policies}, {"Roles", roles},
	} {
		fmt.Fprintf(tw, "%s\t= %s\n", row[0], row[1])
	}
	tw.Flush()
}
