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
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a certificate authority (nomad-agent-ca.pem and nomad-agent-ca-key.pem)",
		Long: `Create a self-signed certificate authority (ECDSA P-256) in the current
directory: nomad-agent-ca.pem, which every agent and the CLI trust, and
nomad-agent-ca-key.pem, which signs the certificates ("drover tls cert create")
and must be kept secret, off the agents. Existing files are never overwritten.

  drover tls ca create
  drover tls ca create -days 3650`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if days < 1 {
				return &exitError{code: 1, msg: "-days must be at least 1"}
			}
			if err := refuseExisting("CA certificate", tlsutil.CAFileName, tlsutil.CAKeyFileName); err != nil {
				return err
			}
			cert, key, err := tlsutil.GenerateCA(tlsutil.CAOptions{CommonName: commonName, Days: days})
			if err != nil {
				return err
			}
			if err := writeNew(tlsutil.CAFileName, cert, 0o644); err != nil {
				return err
			}
			if err := writeNew(tlsutil.CAKeyFileName, key, 0o600); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "==> CA certificate saved to: %s\n", tlsutil.CAFileName)
			fmt.Fprintf(w, "==> CA certificate key saved to: %s\n", tlsutil.CAKeyFileName)
			return nil
		},
	}
	cmd.Flags().StringVar(&commonName, "common-name", "", `common name of the CA (default "Nomad Agent CA <serial>")`)
	cmd.Flags().IntVar(&days, "days", tlsutil.DefaultCADays, "days the CA is valid")
	return cmd
}
