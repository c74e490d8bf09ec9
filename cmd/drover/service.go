package main

import (
	"context"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// drover service list|info|delete: the registrations of services with
// provider "nomad", as Nomad's commands show them.

func init() { registerCommand("service", newServiceCommand) }

func newServiceCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "service", Short: "List, inspect and delete service registrations (provider \"nomad\")"}
	cmd.AddCommand(newServiceListCommand(), newServiceInfoCommand(), newServiceDeleteCommand())
	return cmd
}

// serviceFlags are the flags the service commands share.
type serviceFlags struct {
	opFlags
	namespace string
}

// addNamespace is kept for the service commands' files: -namespace is one
// of the global flags (addAddressFlag), "*" for every namespace the token
// may read.
func (f *serviceFlags) addNamespace(*cobra.Command) {}

// ns is -namespace, else the environment's; "" lets the agent default.
func (f *serviceFlags) ns(cmd *cobra.Command) string { return namespaceFlag(cmd) }

// listServices reads GET /v1/services.
func listServices(ctx context.Context, c *apiclient.Client, ns string) ([]*structs.ServiceRegistrationListStub, error) {
	var out []*structs.ServiceRegistrationListStub
	_, err := c.Get(ctx, "/v1/services", &apiclient.QueryOptions{Namespace: ns}, &out)
	return out, err
}

// serviceRegistrations reads GET /v1/service/{name}.
func serviceRegistrations(ctx context.Context, c *apiclient.Client, ns, name string) ([]*structs.ServiceRegistration, error) {
	var out []*structs.ServiceRegistration
	_, err := c.Get(ctx, "/v1/service/"+url.PathEscape(name), &apiclient.QueryOptions{Namespace: ns}, &out)
	return out, err
}
