package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
	"github.com/droverhq/drover/tlsutil"
)

// The global flags: those of every command that calls an agent's HTTP
// API, as Nomad's (Meta.FlagSet with FlagSetClient). Each falls back on
// the environment: DROVER_ADDR, NOMAD_ADDR; DROVER_REGION, NOMAD_REGION;
// DROVER_NAMESPACE, NOMAD_NAMESPACE; DROVER_TOKEN, NOMAD_TOKEN;
// DROVER_CACERT, NOMAD_CACERT, … (apiclient.TLSFiles). They are defined
// here only: a command that talks to an agent calls addAddressFlag.

// addAddressFlag adds the global flags to cmd, -address bound to address.
func addAddressFlag(cmd *cobra.Command, address *string) {
	fs := cmd.Flags()
	fs.StringVar(address, "address", "", "HTTP address of the agent (default $DROVER_ADDR, $NOMAD_ADDR, "+apiclient.DefaultAddress+
		"; https://127.0.0.1:4646 when a TLS flag is given)")
	fs.String("region", "", "region of the request: the agent forwards it to a server of that region (default $DROVER_REGION, $NOMAD_REGION)")
	fs.String("namespace", "", `namespace of the request (default $DROVER_NAMESPACE, $NOMAD_NAMESPACE, "default")`)
	fs.String("token", "", "ACL token sent as X-Nomad-Token (default $DROVER_TOKEN, $NOMAD_TOKEN)")
	fs.String("ca-cert", "", "PEM file of the CA that signed the agent's certificate (default $NOMAD_CACERT)")
	fs.String("ca-path", "", "directory of PEM files of CAs, instead of -ca-cert (default $NOMAD_CAPATH)")
	fs.String("client-cert", "", "PEM file of the certificate presented to the agent (default $NOMAD_CLIENT_CERT)")
	fs.String("client-key", "", "PEM file of -client-cert's key (default $NOMAD_CLIENT_KEY)")
	fs.String("tls-server-name", "", "name the agent's certificate must carry, such as server.global.nomad (default $NOMAD_TLS_SERVER_NAME)")
	fs.Bool("tls-skip-verify", false, "do not verify the agent's certificate (default $NOMAD_SKIP_VERIFY)")
	fs.Bool("insecure", false, "the former name of -tls-skip-verify")
	fs.Bool("no-color", false, "accepted as Nomad's: drover's output has no colours")
	fs.Bool("force-color", false, "accepted as Nomad's: drover's output has no colours")
	_ = fs.MarkHidden("insecure")
}

// globalFlag returns cmd's flag name, else DROVER_<ENV>, else NOMAD_<ENV>.
func globalFlag(cmd *cobra.Command, name, env string) string {
	if cmd != nil {
		if v, _ := cmd.Flags().GetString(name); v != "" {
			return v
		}
	}
	for _, e := range []string{"DROVER_" + env, "NOMAD_" + env} {
		if v := os.Getenv(e); v != "" {
			return v
		}
	}
	return ""
}

// namespaceFlag is -namespace, else $DROVER_NAMESPACE, else
// $NOMAD_NAMESPACE; "" lets the agent default ("default").
func namespaceFlag(cmd *cobra.Command) string { return globalFlag(cmd, "namespace", "NAMESPACE") }

// namespaceOrDefault is namespaceFlag, "default" when none is given.
func namespaceOrDefault(cmd *cobra.Command) string {
	if ns := namespaceFlag(cmd); ns != "" {
		return ns
	}
	return "default"
}

// regionFlag is -region, else $DROVER_REGION, else $NOMAD_REGION.
func regionFlag(cmd *cobra.Command) string { return globalFlag(cmd, "region", "REGION") }

// useJobRegion sends c's requests to the job's region, as Nomad's job run
// and job plan do: a job that names a region other than "global" (the
// jobs' default, which means the agent's own) overrides -region, and the
// evaluation and deployment that follow are read there too.
func useJobRegion(c *apiclient.Client, job *structs.Job) {
	if job != nil && job.Region != "" && job.Region != structs.DefaultRegion {
		c.SetRegion(job.Region)
	}
}

// tlsFlags reads the TLS flags addAddressFlag added to cmd.
func tlsFlags(cmd *cobra.Command) tlsutil.ClientFiles {
	var f tlsutil.ClientFiles
	if cmd == nil {
		return f
	}
	fs := cmd.Flags()
	f.CACert, _ = fs.GetString("ca-cert")
	f.ClientCert, _ = fs.GetString("client-cert")
	f.ClientKey, _ = fs.GetString("client-key")
	f.CAPath, _ = fs.GetString("ca-path")
	f.ServerName, _ = fs.GetString("tls-server-name")
	f.Insecure, _ = fs.GetBool("tls-skip-verify")
	if insecure, _ := fs.GetBool("insecure"); insecure {
		f.Insecure = true
	}
	return f
}

// apiClientFor returns the client of cmd's -address (or the environment),
// over TLS when TLS flags or variables are given.
func apiClientFor(cmd *cobra.Command, address string) (*apiclient.Client, error) {
	c, err := apiclient.NewCLI(address, tlsFlags(cmd))
	if err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error initializing client: %v", err)}
	}
	c.SetToken(tokenFlag(cmd))
	c.SetNamespace(namespaceFlag(cmd))
	c.SetRegion(regionFlag(cmd))
	return c, nil
}

// tokenFlag returns the ACL token: -token, else DROVER_TOKEN, else
// NOMAD_TOKEN.
func tokenFlag(cmd *cobra.Command) string {
	var flag string
	if cmd != nil {
		flag, _ = cmd.Flags().GetString("token")
	}
	return apiclient.Token(flag)
}

// nodeClientFor returns a client of a node's HTTP address (host:port),
// with cmd's TLS settings.
func nodeClientFor(cmd *cobra.Command, httpAddr string) (*apiclient.Client, error) {
	files, err := apiclient.TLSFiles(tlsFlags(cmd))
	if err != nil {
		return nil, err
	}
	var c *apiclient.Client
	if !files.Any() {
		c, err = apiclient.New(httpAddr)
	} else {
		tc, terr := tlsutil.CLIConfig(files)
		if terr != nil {
			return nil, terr
		}
		c, err = apiclient.NewTLS(httpAddr, tc)
	}
	if err != nil {
		return nil, err
	}
	c.SetToken(tokenFlag(cmd))
	return c, nil
}

// selfNode returns args, or with self the ID of the client node of the
// agent at -address (Nomad's -self of the node commands).
func selfNode(cmd *cobra.Command, address string, self bool, args []string) ([]string, error) {
	if !self {
		return args, nil
	}
	if len(args) > 0 {
		return nil, &exitError{code: 1, msg: "Error: -self takes no node ID"}
	}
	c, err := apiClientFor(cmd, address)
	if err != nil {
		return nil, err
	}
	var s structs.AgentSelf
	if _, err := c.Get(cmd.Context(), "/v1/agent/self", nil, &s); err != nil {
		return nil, &exitError{code: 1, msg: fmt.Sprintf("Error querying agent info: %v", err)}
	}
	id := s.Stats["client"]["node_id"]
	if id == "" {
		return nil, &exitError{code: 1, msg: "Error: the agent at -address runs no client node (-self)"}
	}
	return []string{id}, nil
}
