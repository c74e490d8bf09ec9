package httpapi

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/droverhq/drover/structs"
)

// WithPrometheusAddress sets the servers' analysis { prometheus_address }:
// the Prometheus server an analysis without an address of its own is
// measured against. Without one, such a job is refused.
func WithPrometheusAddress(addr string) Option {
	return func(s *Server) { s.prometheusAddress = addr }
}

// analysisAddressProblems lists the analyses of job that name no address
// when the servers have no analysis { prometheus_address }, each by its
// API path, with what to set.
func analysisAddressProblems(job *structs.Job, defaultAddress string) []string {
	if job == nil || defaultAddress != "" {
		return nil
	}
	var out []string
	for i, tg := range job.TaskGroups {
		if tg == nil || tg.Update == nil {
			continue
		}
		for j, a := range tg.Update.Analyses {
			if a != nil && a.Address == "" {
				out = append(out, fmt.Sprintf("Job.TaskGroups[%d].Update.Analyses[%d].Address: analysis %q of group %q names no address, and the servers have no "+
					"analysis { prometheus_address }: set the analysis' address or the servers' analysis.prometheus_address", i, j, a.Name, tg.Name))
			}
		}
	}
	return out
}

// checkAnalysisAddress refuses (400) a job with an analysis that no
// Prometheus server would measure.
func (s *Server) checkAnalysisAddress(job *structs.Job) error {
	if p := analysisAddressProblems(job, s.prometheusAddress); len(p) > 0 {
		return Errorf(http.StatusBadRequest, "invalid job: %s", strings.Join(p, "\n"))
	}
	return nil
}
