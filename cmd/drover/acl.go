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

// newACLCommand is "drover acl": bootstrap, policy, token, role,
// auth-method and binding-rule, as Nomad's
// (website/commands/acl.md).
func newACLCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "acl", Short: "Bootstrap the ACL system; manage ACL policies, roles, tokens, auth methods and binding rules"}
	policy := &cobra.Command{Use: "policy", Short: "Create, list, read and delete ACL policies"}
	policy.AddCommand(newACLPolicyApplyCommand(), newACLPolicyListCommand(), newACLPolicyInfoCommand(), newACLPolicyDeleteCommand(), newACLPolicySelfCommand())
	token := &cobra.Command{Use: "token", Short: "Create, list, read, update and delete ACL tokens"}
	token.AddCommand(newACLTokenCreateCommand(), newACLTokenListCommand(), newACLTokenInfoCommand(),
		newACLTokenUpdateCommand(), newACLTokenDeleteCommand(), newACLTokenSelfCommand())
	cmd.AddCommand(newACLBootstrapCommand(), policy, token, newACLRoleCommand(), newACLAuthMethodCommand(), newACLBindingRuleCommand())
	return cmd
}

// aclFailed is the error of a failed ACL call, in Nomad's words.
func aclFailed(what string, err error) error {
	return &exitError{code: 1, msg: fmt.Sprintf("Error %s: %v", what, err)}
}

// hiddenSecret stands for a SecretID the servers do not answer: a token
// made before they sealed secrets, or one read by a token that is neither
// it nor a management token.
const hiddenSecret = "<hidden>"

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
		if len(t.Roles) > 0 {
			var names []string
			for _, r := range t.Roles {
				names = append(names, r.ID+"/"+r.Name)
			}
			roles = "[" + strings.Join(names, " ") + "]"
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
