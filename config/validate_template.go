package config

import "time"

// clientTemplate checks the client's template block: no negative
// durations or attempts, each min not above its max.
func (v *validator) clientTemplate(t *ClientTemplate) {
	for _, d := range []struct {
		path string
		d    time.Duration
	}{
		{"client.template.max_stale", t.MaxStale},
		{"client.template.block_query_wait", t.BlockQueryWait},
		{"client.template.wait.min", t.Wait.Min},
		{"client.template.wait.max", t.Wait.Max},
		{"client.template.wait_bounds.min", t.WaitBounds.Min},
		{"client.template.wait_bounds.max", t.WaitBounds.Max},
		{"client.template.nomad_retry.backoff", t.NomadRetry.Backoff},
		{"client.template.nomad_retry.max_backoff", t.NomadRetry.MaxBackoff},
		{"client.template.render_timeout", t.RenderTimeout},
	} {
		if d.d < 0 {
			v.errorf(d.path, "%s must not be negative (got %s)", d.path, d.d)
		}
	}
	if t.NomadRetry.Attempts < 0 {
		v.errorf("client.template.nomad_retry.attempts", "client.template.nomad_retry.attempts must not be negative (got %d)", t.NomadRetry.Attempts)
	}
	for _, w := range []struct {
		path string
		w    TemplateWait
	}{{"client.template.wait", t.Wait}, {"client.template.wait_bounds", t.WaitBounds}} {
		if w.w.Max != 0 && w.w.Min > w.w.Max {
			v.errorf(w.path+".max", "%s.max must not be less than %s.min (%s < %s)", w.path, w.path, w.w.Max, w.w.Min)
		}
	}
}
