package apiclient

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/droverhq/drover/tlsutil"
)

// The CLI's TLS settings from the environment, as Nomad's; each also
// reads a DROVER_ form first, as DROVER_ADDR before NOMAD_ADDR.
const (
	EnvCACert        = "NOMAD_CACERT"
	EnvCAPath        = "NOMAD_CAPATH"
	EnvClientCert    = "NOMAD_CLIENT_CERT"
	EnvClientKey     = "NOMAD_CLIENT_KEY"
	EnvTLSServerName = "NOMAD_TLS_SERVER_NAME"
	EnvSkipVerify    = "NOMAD_SKIP_VERIFY"
)

// env returns DROVER_<name> or else NOMAD_<name>.
func env(nomadName string) string {
	if v := os.Getenv("DROVER_" + strings.TrimPrefix(nomadName, "NOMAD_")); v != "" {
		return v
	}
	return os.Getenv(nomadName)
}

// TLSFiles completes the CLI's TLS flags with the environment: a flag
// given wins over DROVER_CACERT, which wins over NOMAD_CACERT, and so on.
// An unparsable NOMAD_SKIP_VERIFY is an error.
func TLSFiles(flags tlsutil.ClientFiles) (tlsutil.ClientFiles, error) {
	f := flags
	for _, e := range []struct {
		v    *string
		name string
	}{{&f.CACert, EnvCACert}, {&f.CAPath, EnvCAPath}, {&f.ClientCert, EnvClientCert}, {&f.ClientKey, EnvClientKey}, {&f.ServerName, EnvTLSServerName}} {
		if *e.v == "" {
			*e.v = env(e.name)
		}
	}
	if !f.Insecure {
		if s := env(EnvSkipVerify); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return f, fmt.Errorf("%s must be true or false (got %q)", EnvSkipVerify, s)
			}
			f.Insecure = b
		}
	}
	return f, nil
}

// WithScheme returns address with scheme:// in front when it names none
// ("host:port").
func WithScheme(address, scheme string) string {
	if strings.Contains(address, "://") {
		return address
	}
	return scheme + "://" + address
}

// NewTLS returns a client for address over HTTPS with tc (from package
// tlsutil). An address without a scheme is dialled over https; a nil tc
// is New.
func NewTLS(address string, tc *tls.Config) (*Client, error) {
	if tc == nil {
		return New(address)
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, TLSClientConfig: tc, ForceAttemptHTTP2: true}}
	return NewWithHTTPClient(WithScheme(address, "https"), hc)
}

// NewCLI returns the CLI's client: address as Address picks it, over TLS
// when any TLS setting is given by flag or environment (see TLSFiles). A
// DefaultAddress left unchanged becomes https:// when TLS is on.
func NewCLI(address string, flags tlsutil.ClientFiles) (*Client, error) {
	files, err := TLSFiles(flags)
	if err != nil {
		return nil, err
	}
	addr := Address(address)
	if !files.Any() {
		return New(addr)
	}
	if addr == DefaultAddress {
		addr = "https://" + strings.TrimPrefix(addr, "http://")
	}
	tc, err := tlsutil.CLIConfig(files)
	if err != nil {
		return nil, err
	}
	return NewTLS(addr, tc)
}
