package apiclient_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/tlsutil"
	"github.com/droverhq/drover/tlsutil/tlstest"
)

func TestTLSFilesFromEnvironment(t *testing.T) {
	for _, k := range []string{"CACERT", "CLIENT_CERT", "CLIENT_KEY", "TLS_SERVER_NAME", "SKIP_VERIFY"} {
		t.Setenv("NOMAD_"+k, "")
		t.Setenv("DROVER_"+k, "")
	}
	t.Setenv("NOMAD_CACERT", "nomad-ca.pem")
	t.Setenv("NOMAD_CLIENT_CERT", "nomad-cert.pem")
	t.Setenv("DROVER_CLIENT_CERT", "drover-cert.pem")
	t.Setenv("NOMAD_CLIENT_KEY", "nomad-key.pem")
	t.Setenv("NOMAD_TLS_SERVER_NAME", "server.global.nomad")
	t.Setenv("NOMAD_SKIP_VERIFY", "true")
	f, err := apiclient.TLSFiles(tlsutil.ClientFiles{ClientKey: "flag-key.pem"})
	if err != nil {
		t.Fatal(err)
	}
	want := tlsutil.ClientFiles{CACert: "nomad-ca.pem", ClientCert: "drover-cert.pem", ClientKey: "flag-key.pem",
		ServerName: "server.global.nomad", Insecure: true}
	if f != want {
		t.Errorf("got %+v, want %+v (flag, then DROVER_, then NOMAD_)", f, want)
	}
	t.Setenv("NOMAD_SKIP_VERIFY", "sometimes")
	if _, err := apiclient.TLSFiles(tlsutil.ClientFiles{}); err == nil || !strings.Contains(err.Error(), "NOMAD_SKIP_VERIFY") {
		t.Errorf("bad NOMAD_SKIP_VERIFY: %v", err)
	}
}

func TestWithScheme(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:4646":         "https://127.0.0.1:4646",
		"http://127.0.0.1:4646":  "http://127.0.0.1:4646",
		"https://127.0.0.1:4646": "https://127.0.0.1:4646",
	} {
		if got := apiclient.WithScheme(in, "https"); got != want {
			t.Errorf("WithScheme(%q) = %q, want %q", in, got, want)
		}
	}
}

// The CLI's client over HTTPS against a server that requires client
// certificates: its own certificate opens the door; none, or one of
// another CA, does not.
func TestCLIOverHTTPS(t *testing.T) {
	for _, k := range []string{"CACERT", "CLIENT_CERT", "CLIENT_KEY", "TLS_SERVER_NAME", "SKIP_VERIFY", "ADDR"} {
		t.Setenv("NOMAD_"+k, "")
		t.Setenv("DROVER_"+k, "")
	}
	ca := tlstest.NewCA(t)
	other := tlstest.NewCA(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`"127.0.0.1:4647"`))
	}))
	srv.TLS = ca.Configurator(tlsutil.RoleServer).HTTPServer()
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "https://")

	leader := func(c *apiclient.Client) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var out string
		_, err := c.Get(ctx, "/v1/status/leader", nil, &out)
		return err
	}
	good := ca.CLI()
	c, err := apiclient.NewCLI(addr, good)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Address(), "https://") {
		t.Errorf("address %s: a host:port with TLS settings is dialled over https", c.Address())
	}
	if err := leader(c); err != nil {
		t.Fatalf("with the CLI's certificate: %v", err)
	}
	// The same settings from the environment.
	t.Setenv("NOMAD_CACERT", good.CACert)
	t.Setenv("NOMAD_CLIENT_CERT", good.ClientCert)
	t.Setenv("NOMAD_CLIENT_KEY", good.ClientKey)
	c, err = apiclient.NewCLI(addr, tlsutil.ClientFiles{})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader(c); err != nil {
		t.Fatalf("with the environment's certificate: %v", err)
	}
	t.Setenv("NOMAD_CLIENT_CERT", "")
	t.Setenv("NOMAD_CLIENT_KEY", "")

	noCert, err := apiclient.NewCLI(addr, tlsutil.ClientFiles{CACert: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	if err := leader(noCert); err == nil {
		t.Error("no client certificate, yet answered")
	}
	foreign := other.CLI()
	foreign.CACert = ca.CertFile
	fc, err := apiclient.NewCLI(addr, foreign)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader(fc); err == nil {
		t.Error("a certificate of another CA, yet answered")
	}
	// An agent certificate of another CA is refused by the CLI.
	wrongCA := good
	wrongCA.CACert = other.CertFile
	wc, err := apiclient.NewCLI(addr, wrongCA)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader(wc); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("the agent's certificate of another CA accepted: %v", err)
	}
	// Plain HTTP to the HTTPS port fails.
	plain, err := apiclient.New("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := leader(plain); err == nil {
		t.Error("plain HTTP answered")
	}
}

func TestNewCLIDefaultAddressTurnsHTTPS(t *testing.T) {
	for _, k := range []string{"ADDR", "CACERT", "CLIENT_CERT", "CLIENT_KEY", "TLS_SERVER_NAME", "SKIP_VERIFY"} {
		t.Setenv("NOMAD_"+k, "")
		t.Setenv("DROVER_"+k, "")
	}
	ca := tlstest.NewCA(t)
	c, err := apiclient.NewCLI("", tlsutil.ClientFiles{CACert: ca.CertFile})
	if err != nil {
		t.Fatal(err)
	}
	if c.Address() != "https://127.0.0.1:4646" {
		t.Errorf("address %s", c.Address())
	}
	c, err = apiclient.NewCLI("", tlsutil.ClientFiles{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Address() != apiclient.DefaultAddress {
		t.Errorf("address without TLS %s", c.Address())
	}
	if _, err := apiclient.NewCLI("", tlsutil.ClientFiles{CACert: "/nonexistent.pem"}); err == nil {
		t.Error("a missing CA file accepted")
	}
}
