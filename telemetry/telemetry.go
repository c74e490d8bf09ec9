// Package telemetry holds the agent's metrics: the process's go-metrics
// sinks and the /v1/metrics handler.
//
// Drover measures with hashicorp/go-metrics, as Nomad does, through its
// compat package (the one hashicorp/raft writes to): so Raft's own figures
// (nomad.raft.apply, nomad.raft.commitTime, nomad.raft.leader.lastContact…)
// are published under Nomad's names with nothing to write. Two sinks
// receive every measurement: go-metrics' in-memory sink, whose
// DisplayMetrics is Nomad's JSON MetricsSummary (GET /v1/metrics), and,
// with telemetry { prometheus_metrics = true }, its Prometheus sink, a
// collector registered in a client_golang registry that promhttp renders
// in the Prometheus text format (?format=prometheus): the exposition is
// the Prometheus project's own code, not written here.
//
// Timers are in milliseconds (go-metrics' granularity); in Prometheus
// they are summaries with the 0.5, 0.9 and 0.99 quantiles over the last
// 10 seconds, and _sum and _count over the process's life. Labels take
// bounded values only (a route pattern, a status, a scheduler type),
// never an ID. The catalog (catalog.go) lists every figure drover adds.
package telemetry

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics/compat"
	prometheussink "github.com/hashicorp/go-metrics/compat/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ServiceName prefixes every metric, as Nomad's: nomad.raft.apply,
// nomad.nomad.broker.total_ready, nomad.drover.http.request.
const ServiceName = "nomad"

// Config configures the process's metrics.
type Config struct {
	// PrometheusMetrics serves ?format=prometheus.
	PrometheusMetrics bool
	// CollectionInterval is how often the runtime's gauges are sampled
	// (and the agent's collectors run); 1s when 0.
	CollectionInterval time.Duration
}

// Telemetry is the process's metrics.
type Telemetry struct {
	cfg      Config
	inmem    *metrics.InmemSink
	registry *prometheus.Registry // nil without PrometheusMetrics
}

var (
	setupMu sync.Mutex
	global  *Telemetry
)

// Setup builds the process's sinks and makes them go-metrics' global
// destination. Metrics are process-wide (Raft writes to the global), so
// only the first call builds them: later calls (a test starting a second
// agent in the same process) return the first Telemetry.
func Setup(cfg Config) (*Telemetry, error) {
	setupMu.Lock()
	defer setupMu.Unlock()
	if global != nil {
		return global, nil
	}
	if cfg.CollectionInterval <= 0 {
		cfg.CollectionInterval = time.Second
	}
	t := &Telemetry{cfg: cfg, inmem: metrics.NewInmemSink(10*time.Second, time.Minute)}
	sinks := metrics.FanoutSink{t.inmem}
	if cfg.PrometheusMetrics {
		t.registry = prometheus.NewRegistry()
		t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		ps, err := prometheussink.NewPrometheusSinkFrom(prometheussink.PrometheusOpts{
			// Never expire: every label set is bounded, and a counter
			// that vanished while idle would break rate().
			Expiration:         0,
			Registerer:         t.registry,
			Name:               "drover",
			GaugeDefinitions:   gaugeDefinitions(),
			CounterDefinitions: counterDefinitions(),
			SummaryDefinitions: summaryDefinitions(),
		})
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, ps)
	}
	mc := metrics.DefaultConfig(ServiceName)
	mc.EnableHostname = false
	mc.EnableHostnameLabel = false
	mc.EnableRuntimeMetrics = true
	mc.ProfileInterval = cfg.CollectionInterval
	if _, err := metrics.NewGlobal(mc, sinks); err != nil {
		return nil, err
	}
	global = t
	return t, nil
}

// Interval is the collection interval (1s for a nil Telemetry).
func (t *Telemetry) Interval() time.Duration {
	if t == nil {
		return time.Second
	}
	return t.cfg.CollectionInterval
}

// Handler serves GET /v1/metrics: Nomad's JSON MetricsSummary, or with
// ?format=prometheus the Prometheus text format (415 when
// prometheus_metrics is off, as Nomad's). A nil Telemetry answers 501.
func (t *Telemetry) Handler() http.Handler {
	if t == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "metrics are not enabled on this agent", http.StatusNotImplemented)
		})
	}
	var prom http.Handler
	if t.registry != nil {
		prom = promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "Invalid method", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Query().Get("format") == "prometheus" {
			if prom == nil {
				http.Error(w, "Prometheus is not enabled", http.StatusUnsupportedMediaType)
				return
			}
			prom.ServeHTTP(w, r)
			return
		}
		summary, err := t.inmem.DisplayMetrics(w, r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		b, err := json.Marshal(summary)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(append(b, '\n'))
	})
}
