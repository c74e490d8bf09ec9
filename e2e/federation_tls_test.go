package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/tlsutil"
)

// Two regions over mutual TLS with verify_server_hostname, one CA, each
// server's certificate naming server.<its region>.nomad: `server join`
// federates them, and requests cross regions both ways (each server
// checks the other region's server name, and takes the other region's
// server certificate only for its join and what it forwards).
func TestFederationOverMutualTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two agent processes")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(droverBin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("drover %v: %v\n%s", args, err, out)
		}
	}
	run("tls", "ca", "create")
	run("tls", "cert", "create", "-cli")
	run("tls", "cert", "create", "-server", "-region", "east")
	run("tls", "cert", "create", "-server", "-region", "west")
	tlsFor := func(region string) string {
		cert, key := tlsutil.CertFileNames(tlsutil.RoleServer, region)
		return fmt.Sprintf(`
tls {
  http = true
  rpc  = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
  verify_server_hostname = true
  verify_https_client    = true
}
`, filepath.Join(dir, tlsutil.CAFileName), filepath.Join(dir, cert), filepath.Join(dir, key))
	}
	east := startRegionDevAgent(t, "east", "", tlsFor("east"))
	west := startRegionDevAgent(t, "west", "", tlsFor("west"))
	cli := func(p *agentProc, args ...string) (string, error) {
		// The command's words, then its flags, then the rest.
		n := 0
		for n < len(args) && !strings.HasPrefix(args[n], "-") && n < 3 {
			n++
		}
		if args[0] == "server" {
			n = 2
		}
		full := append(append(append([]string{}, args[:n]...), "-address", "https://"+p.httpAddr), cliTLSArgs(dir)...)
		return droverCLI(t, nil, append(full, args[n:]...)...)
	}
	for _, p := range []*agentProc{east, west} {
		eventually(t, 30*time.Second, p.name+"'s leader", func() error {
			out, err := cli(p, "operator", "raft", "list-peers")
			if err != nil || !strings.Contains(out, "leader") {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
	}
	out, err := cli(east, "server", "join", west.httpAddr)
	if err != nil || !strings.Contains(out, "Joined 1 servers successfully") {
		t.Fatalf("server join over TLS: %v\n%s", err, out)
	}
	// Each lists the other's server as alive: probed with the other
	// region's server name.
	eventually(t, 20*time.Second, "west's server alive in east's members", func() error {
		out, err := cli(east, "server", "members")
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "west-1.west") && strings.Contains(line, "alive") {
				return nil
			}
		}
		return fmt.Errorf("%v: %s", err, out)
	})
	for _, c := range []struct {
		via           *agentProc
		region, other string
	}{{east, "west", "west-1"}, {west, "east", "east-1"}} {
		eventually(t, 20*time.Second, "region "+c.region+" through "+c.via.name, func() error {
			out, err := cli(c.via, "operator", "raft", "list-peers", "-region", c.region)
			if err != nil || !strings.Contains(out, c.other) {
				return fmt.Errorf("%v: %s", err, out)
			}
			return nil
		})
	}
}
