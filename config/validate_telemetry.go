package config

import "net/url"

// telemetry checks the telemetry block, the event stream's settings and
// the analysis block's address.
func (v *validator) telemetry() {
	t, s := v.c.Telemetry, v.c.Server
	if t.CollectionInterval <= 0 {
		v.errorf("telemetry.collection_interval", "telemetry.collection_interval must be positive (got %s)", t.CollectionInterval)
	}
	if a := v.c.Analysis.PrometheusAddress; a != "" {
		if u, err := url.Parse(a); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf("analysis.prometheus_address", "analysis.prometheus_address must be an http or https URL such as \"http://127.0.0.1:9090\" (got %q)", a)
		}
	}
	if s.EventBufferSize < 1 {
		v.errorf("server.event_buffer_size", "server.event_buffer_size must be at least 1 (got %d); server.enable_event_broker = false turns the event stream off", s.EventBufferSize)
	}
}
