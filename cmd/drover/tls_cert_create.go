package main

import (
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/tlsutil"
)

// newTLSCertCreateCommand is "drover tls cert create".
func newTLSCertCreateCommand() *cobra.Command {
	var (
		server, client, cli bool
		region, caFile, key string
		days                int
		dnsNames, ips       []string
	)
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a server's, a client's or the CLI's certificate, signed by the CA",
		Long: `Create a certificate and its key (ECDSA P-256) signed by the CA, in the
current directory, with Nomad's names: global-server-nomad.pem and
global-server-nomad-key.pem, global-client-nomad.pem…, global-cli-nomad.pem….

A server's certificate names server.<region>.nomad, a client's
client.<region>.nomad, the CLI's cli.<region>.nomad; each also names localhost,
and a server's and a client's 127.0.0.1. With verify_server_hostname only a
server's certificate can join Raft or call the servers' own routes. Add the
names and addresses by which the CLI reaches an agent with -additional-dnsname
and -additional-ipaddress. Existing files are never overwritten.

  drover tls cert create -server
  drover tls cert create -server -additional-ipaddress 10.0.0.5
  drover tls cert create -client
  drover tls cert create -cli`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			roles := map[bool]int{}
			roles[server]++
			roles[client]++
			roles[cli]++
			if roles[true] != 1 {
				return &exitError{code: 1, msg: "Please provide exactly one of -server, -client or -cli"}
			}
			role := tlsutil.RoleServer
			switch {
			case client:
				role = tlsutil.RoleClient
			case cli:
				role = tlsutil.RoleCLI
			}
			if days < 1 {
				return &exitError{code: 1, msg: "-days must be at least 1"}
			}
			if region == "" {
				return &exitError{code: 1, msg: "-region must not be empty"}
			}
			var addrs []net.IP
			for _, s := range ips {
				ip := net.ParseIP(strings.TrimSpace(s))
				if ip == nil {
					return &exitError{code: 1, msg: fmt.Sprintf("-additional-ipaddress %q is not an IP address", s)}
				}
				addrs = append(addrs, ip)
			}
			caPEM, err := os.ReadFile(caFile)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading CA file: %v (create one with: drover tls ca create)", err)}
			}
			caKey, err := os.ReadFile(key)
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error reading CA key file: %v", err)}
			}
			certFile, keyFile := tlsutil.CertFileNames(role, region)
			if err := refuseExisting("Certificate", certFile, keyFile); err != nil {
				return err
			}
			certPEM, keyPEM, err := tlsutil.GenerateCert(tlsutil.CertOptions{
				Role: role, Region: region, Days: days, DNSNames: dnsNames, IPs: addrs, CACert: caPEM, CAKey: caKey,
			})
			if err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error creating the certificate: %v", err)}
			}
			if err := writeNew(certFile, certPEM, 0o644); err != nil {
				return err
			}
			if err := writeNew(keyFile, keyPEM, 0o600); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			what := map[string]string{tlsutil.RoleServer: "Server", tlsutil.RoleClient: "Client", tlsutil.RoleCLI: "Cli"}[role]
			if role == tlsutil.RoleServer {
				fmt.Fprintln(w, "==> WARNING: Server Certificates grants authority to become a server and access all state in the cluster. "+
					"Do not distribute them to hosts that are not servers. Store them as securely as CA keys.")
			}
			fmt.Fprintf(w, "==> Using CA file %s and CA key %s\n", caFile, key)
			fmt.Fprintf(w, "==> %s Certificate saved to %s\n", what, certFile)
			fmt.Fprintf(w, "==> %s Certificate key saved to %s\n", what, keyFile)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&server, "server", false, "a server's certificate (server.<region>.nomad)")
	fs.BoolVar(&client, "client", false, "a client's certificate (client.<region>.nomad)")
	fs.BoolVar(&cli, "cli", false, "the CLI's certificate (cli.<region>.nomad)")
	fs.StringVar(&region, "region", "global", "region the certificate serves")
	fs.StringVar(&caFile, "ca", tlsutil.CAFileName, "the CA's certificate")
	fs.StringVar(&key, "key", tlsutil.CAKeyFileName, "the CA's key")
	fs.IntVar(&days, "days", tlsutil.DefaultCertDays, "days the certificate is valid")
	fs.StringArrayVar(&dnsNames, "additional-dnsname", nil, "another DNS name for the certificate (repeatable)")
	fs.StringArrayVar(&ips, "additional-ipaddress", nil, "another IP address for the certificate (repeatable)")
	return cmd
}
