package agent

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Nomad's serf port (ports.serf; config/serf.go): a server given one
// answers the server join exchange (POST /v1/internal/join, with its
// checks, httpapi/access.go) there too; every other path is a 404.

// openSerf listens on the serf address, when there is one.
func (a *Agent) openSerf() error {
	if a.cfg.SerfAddr == "" || a.api == nil {
		return nil
	}
	ln, err := net.Listen("tcp", a.cfg.SerfAddr)
	if err != nil {
		return fmt.Errorf("serf (join) listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /v1/internal/join", a.api.Handler())
	a.serf = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: a.tls.HTTPServer()}
	a.serfListener = ln
	return nil
}

// serveSerf serves the serf address until closeSerf.
func (a *Agent) serveSerf() {
	if a.serf == nil {
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		serve := func() error { return a.serf.Serve(a.serfListener) }
		if a.tls.HTTPEnabled() {
			serve = func() error { return a.serf.ServeTLS(a.serfListener, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("serf (join) listener stopped", "error", err)
		}
	}()
}

// closeSerf stops serving the serf address.
func (a *Agent) closeSerf() {
	if a.serf != nil {
		_ = a.serf.Close()
		_ = a.serfListener.Close()
	}
}
