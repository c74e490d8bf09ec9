package config

import (
	"os"
	"strconv"

	"github.com/droverhq/drover/tlsutil"
)

// tlsFiles are the tls block's file settings.
var tlsFiles = []string{"tls.ca_file", "tls.cert_file", "tls.key_file"}

// tls checks the tls block: with http or rpc on, the three files must be
// readable PEM, the certificate must pair with the key and chain to the
// CA and, with verify_server_hostname, name the agent's role. Each
// problem is located at the file setting it is about.
func (v *validator) tls() {
	t := v.c.TLS
	paths := map[string]string{"tls.ca_file": t.CAFile, "tls.cert_file": t.CertFile, "tls.key_file": t.KeyFile}
	if !t.HTTP && !t.RPC {
		for _, p := range append(tlsFiles, "tls.verify_server_hostname", "tls.verify_https_client") {
			if v.c.IsSet(p) {
				v.warnf(p, "%s is ignored: neither tls.http nor tls.rpc is on", p)
			}
		}
		return
	}
	missing := false
	for _, p := range tlsFiles {
		if paths[p] == "" {
			v.r.errorf(firstOf(v, p, "tls.http", "tls.rpc"), p, "%s is required when tls.http or tls.rpc is on", p)
			missing = true
		}
	}
	if missing {
		return
	}
	unreadable := false
	for _, p := range tlsFiles {
		if _, err := os.ReadFile(paths[p]); err != nil {
			v.errorf(p, "%s: cannot read %s: %v", p, paths[p], unwrapPath(err))
			unreadable = true
		}
	}
	if unreadable {
		return
	}
	if _, err := tlsutil.LoadCA(t.CAFile); err != nil {
		v.errorf("tls.ca_file", "tls.ca_file: %v", err)
		return
	}
	if _, _, err := tlsutil.LoadKeyPair(t.CertFile, t.KeyFile); err != nil {
		v.errorf("tls.key_file", "tls.cert_file and tls.key_file do not make a certificate and its key: %v", err)
		return
	}
	c, err := tlsutil.New(v.c.TLSConfig())
	if err != nil {
		v.errorf("tls.cert_file", "tls.cert_file: %v", err)
		return
	}
	role := tlsutil.RoleClient
	if v.c.Server.Enabled {
		role = tlsutil.RoleServer
	}
	if err := c.CheckRole(role); err != nil {
		v.errorf("tls.cert_file", "tls.cert_file: %v (drover tls cert create -%s)", err, role)
	}
	if t.VerifyHTTPSClient && !t.HTTP {
		v.warnf("tls.verify_https_client", "tls.verify_https_client is ignored: tls.http is off")
	}
	if t.RPC && v.c.Server.Enabled && !t.VerifyServerHostname {
		v.r.warnf(firstOf(v, "tls.verify_server_hostname", "tls.rpc"), "tls.verify_server_hostname",
			"tls.verify_server_hostname is off: any certificate the CA signed, a client's too, can join Raft as a server")
	}
}

// rawExec checks Nomad's older client option that enables raw_exec.
func (v *validator) rawExec() {
	s, ok := v.c.Client.Options[OptionRawExecEnable]
	if !ok {
		return
	}
	if _, err := strconv.ParseBool(s); err != nil {
		v.errorf("client.options", `client.options %q must be "1", "true", "0" or "false" (got %q)`, OptionRawExecEnable, s)
	}
}

// unwrapPath drops the path from a *PathError, which the message names
// already.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
