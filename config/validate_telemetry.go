package config

// telemetry checks the telemetry block and the event stream's settings.
func (v *validator) telemetry() {
	t, s := v.c.Telemetry, v.c.Server
	if t.CollectionInterval <= 0 {
		v.errorf("telemetry.collection_interval", "telemetry.collection_interval must be positive (got %s)", t.CollectionInterval)
	}
	if s.EventBufferSize < 1 {
		v.errorf("server.event_buffer_size", "server.event_buffer_size must be at least 1 (got %d); server.enable_event_broker = false turns the event stream off", s.EventBufferSize)
	}
}
