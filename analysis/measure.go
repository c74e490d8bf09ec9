// Package analysis measures a rollout's analyses (website/rollouts.md, "Analysis: metrics decide"): one
// instant query against the provider, its runtime references substituted,
// and the outcome of the block's success and failure expressions over the
// result. The deployment watcher decides what runs gate; the leader calls
// Measure and writes the measurement through Raft.
package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/droverhq/drover/structs"
)

// Refs are the runtime references a query may name.
type Refs struct {
	JobName       string // ${job.name}
	JobVersion    uint64 // ${job.version}: the version being rolled out
	StableVersion uint64 // ${stable.version}: the version it replaces
	Group         string // ${group.name}
	DeploymentID  string // ${deployment.id}
	Zone          string // ${zone}: the current zone of a zone rollout, else ""
}

// RefNames are the references a query may name, without their "${…}".
var RefNames = []string{"job.name", "job.version", "stable.version", "group.name", "deployment.id", "zone"}

// Substitute replaces the runtime references of E.1 in query. Any other
// "${…}" is left as it is.
func Substitute(query string, refs Refs) string {
	if !strings.Contains(query, "${") {
		return query
	}
	return strings.NewReplacer(
		"${job.name}", refs.JobName,
		"${job.version}", strconv.FormatUint(refs.JobVersion, 10),
		"${stable.version}", strconv.FormatUint(refs.StableVersion, 10),
		"${group.name}", refs.Group,
		"${deployment.id}", refs.DeploymentID,
		"${zone}", refs.Zone,
	).Replace(query)
}

// QueryTimeout bounds one query; tests shorten it.
var QueryTimeout = structs.AnalysisQueryTimeout

// Measure takes one measurement of a at now (the leader's stamp).
// defaultAddress is the servers' analysis { prometheus_address }, used
// when a names none. It never fails: an unreachable provider, an HTTP or
// PromQL error, a timeout, an empty result, NaN, or an expression that
// does not give a bool is a measurement with Outcome "error" and its
// message.
func Measure(ctx context.Context, a *structs.Analysis, defaultAddress string, refs Refs, now time.Time) (m *structs.AnalysisMeasurement) {
	m = &structs.AnalysisMeasurement{At: now}
	defer func() {
		if r := recover(); r != nil {
			m = &structs.AnalysisMeasurement{At: now, Outcome: structs.AnalysisOutcomeError, Error: fmt.Sprintf("analysis: internal error: %v", r)}
		}
	}()
	if a == nil {
		return errorMeasurement(m, "analysis: no analysis")
	}
	if a.Provider != "" && a.Provider != structs.AnalysisProviderPrometheus {
		return errorMeasurement(m, fmt.Sprintf("unknown provider %q", a.Provider))
	}
	address := a.Address
	if address == "" {
		address = defaultAddress
	}
	if address == "" {
		return errorMeasurement(m, "no Prometheus address: the analysis has no address and the servers have no analysis { prometheus_address }")
	}
	values, err := query(ctx, address, Substitute(a.Query, refs), now)
	if err != nil {
		return errorMeasurement(m, err.Error())
	}
	r := values[0]
	m.Result = &r
	m.Results = values
	outcome, err := Evaluate(a.Success, a.Failure, values)
	if err != nil {
		return errorMeasurement(m, err.Error())
	}
	m.Outcome = outcome
	return m
}

func errorMeasurement(m *structs.AnalysisMeasurement, msg string) *structs.AnalysisMeasurement {
	m.Outcome = structs.AnalysisOutcomeError
	m.Error = msg
	return m
}

// query runs q as an instant query at address and returns the values of
// its samples (a scalar is one value). An empty result or a NaN is an
// error.
func query(ctx context.Context, address, q string, now time.Time) ([]float64, error) {
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("prometheus address %q is not an http(s) URL", address)
	}
	client, err := promapi.NewClient(promapi.Config{Address: address})
	if err != nil {
		return nil, fmt.Errorf("prometheus %s: %v", address, err)
	}
	ctx, cancel := context.WithTimeout(ctx, QueryTimeout)
	defer cancel()
	val, _, _, err := promv1.NewAPI(client).Query(ctx, q, now)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("prometheus %s: no answer within %s", address, QueryTimeout)
		}
		var perr *promv1.Error
		if errors.As(err, &perr) {
			msg := perr.Msg
			if perr.Detail != "" && perr.Detail != perr.Msg {
				msg += ": " + perr.Detail
			}
			return nil, fmt.Errorf("prometheus %s: %s: %s", address, perr.Type, msg)
		}
		return nil, fmt.Errorf("prometheus %s: %v", address, err)
	}
	var values []float64
	switch v := val.(type) {
	case model.Vector:
		for _, s := range v {
			values = append(values, float64(s.Value))
		}
	case *model.Scalar:
		values = []float64{float64(v.Value)}
	default:
		return nil, fmt.Errorf("prometheus %s: the query gives a %s, not a vector or a scalar", address, val.Type())
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("prometheus %s: the query gives an empty result", address)
	}
	for i, f := range values {
		if math.IsNaN(f) {
			if len(values) == 1 {
				return nil, errors.New("the query gives NaN")
			}
			return nil, fmt.Errorf("the query gives NaN (sample %d of %d)", i+1, len(values))
		}
	}
	return values, nil
}
