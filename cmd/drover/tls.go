package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
)

func init() { registerCommand("tls", newTLSCommand) }

// newTLSCommand is "drover tls": the certificates of a cluster's mutual
// TLS, as Nomad's "nomad tls".
func newTLSCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tls",
		Short: "Create a CA and the certificates of servers, clients and the CLI",
		Long: `Create the certificate authority of a cluster and the certificates its agents
and the CLI present to each other, in the current directory, with Nomad's file
names. See website/production.md for a whole cluster.

  drover tls ca create
  drover tls cert create -server
  drover tls cert create -client
  drover tls cert create -cli`,
	}
	ca := &cobra.Command{Use: "ca", Short: "Create a certificate authority"}
	ca.AddCommand(newTLSCACreateCommand())
	cert := &cobra.Command{Use: "cert", Short: "Create a certificate signed by the CA"}
	cert.AddCommand(newTLSCertCreateCommand())
	cmd.AddCommand(ca, cert)
	return cmd
}

// writeNew writes data to a file that must not exist yet (a CA key is
// never overwritten by mistake), with the given mode.
func writeNew(path string, data []byte, mode fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("file %s already exists", path)
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// refuseExisting fails when any of paths exists, before anything is
// written.
func refuseExisting(what string, paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return &exitError{code: 1, msg: fmt.Sprintf("%s file %q already exists", what, p)}
		}
	}
	return nil
}
