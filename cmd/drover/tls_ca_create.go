package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/tlsutil"
)

// newTLSCACreateCommand is "drover tls ca create".
func newTLSCACreateCommand() *cobra.Command {
	var commonName string
	var days int
	var o tlsutil.CAOptions
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a certificate authority (nomad-agent-ca.pem and nomad-agent-ca-key.pem)",
		Long: `Create a self-signed certificate authority (ECDSA P-256) in the current
directory: nomad-agent-ca.pem, which every agent and the CLI trust, and
nomad-agent-ca-key.pem, which signs the certificates ("drover tls cert create")
and must be kept secret, off the agents. Existing files are never overwritten.

  drover tls ca create
  drover tls ca create -days 3650

The subject's fields (-country, -locality, -organization, …) are Nomad's
flags; -name-constraint limits the names the CA signs to -domain ("nomad"),
localhost and each -additional-domain. With -domain the files are named
after it (DOMAIN-agent-ca.pem), as Nomad's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 1 {
				return &exitError{code: 1, msg: "-days must be at least 1"}
			}
			caFile, keyFile := tlsutil.CAFileName, tlsutil.CAKeyFileName
			if o.Domain != "" {
				caFile, keyFile = o.Domain+"-agent-ca.pem", o.Domain+"-agent-ca-key.pem"
			}
			if len(o.AdditionalDomains) > 0 && !o.NameConstraint {
				return &exitError{code: 1, msg: "-additional-domain is only used with -name-constraint"}
			}
			if err := refuseExisting("CA certificate", caFile, keyFile); err != nil {
				return err
			}
			o.CommonName, o.Days = commonName, days
			cert, key, err := tlsutil.GenerateCA(o)
			if err != nil {
				return err
			}
			if err := writeNew(caFile, cert, 0o644); err != nil {
				return err
			}
			if err := writeNew(keyFile, key, 0o600); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "==> CA certificate saved to: %s\n", caFile)
			fmt.Fprintf(w, "==> CA certificate key saved to: %s\n", keyFile)
			return nil
		},
	}
	cmd.Flags().StringVar(&commonName, "common-name", "", `common name of the CA (default "Nomad Agent CA <serial>")`)
	cmd.Flags().IntVar(&days, "days", tlsutil.DefaultCADays, "days the CA is valid")
	f := cmd.Flags()
	f.StringVar(&o.Country, "country", "", "the CA's country")
	f.StringVar(&o.Locality, "locality", "", "the CA's locality")
	f.StringVar(&o.Organization, "organization", "", `the CA's organization (default "Drover")`)
	f.StringVar(&o.OrganizationalUnit, "organizational-unit", "", "the CA's organizational unit")
	f.StringVar(&o.PostalCode, "postal-code", "", "the CA's postal code")
	f.StringVar(&o.Province, "province", "", "the CA's province")
	f.StringVar(&o.StreetAddress, "street-address", "", "the CA's street address")
	f.BoolVar(&o.NameConstraint, "name-constraint", false, "limit the names the CA signs to -domain, localhost and -additional-domain")
	f.StringVar(&o.Domain, "domain", "", `the cluster's domain for -name-constraint and the files' names (default "nomad")`)
	f.StringArrayVar(&o.AdditionalDomains, "additional-domain", nil, "another domain the CA may sign with -name-constraint (repeatable)")
	return cmd
}
