package httpapi

import "github.com/droverhq/drover/structs"

// jobView is a job as Nomad's job answers carry it: with the fields
// Nomad's server always writes, empty here because drover has no parent
// jobs, dispatch, Consul or Vault namespaces or job tokens. The official
// Go client decodes them into pointers, which tools dereference without a
// nil check; the answer keeps them filled, never stored.
type jobView struct {
	*structs.Job
	Dispatched               bool
	DispatchIdempotencyToken string
	ConsulNamespace          string
	VaultNamespace           string
	NomadTokenID             string
}

// viewJob returns j's answer form; nil stays nil.
func viewJob(j *structs.Job) *jobView {
	if j == nil {
		return nil
	}
	return &jobView{Job: j}
}

// viewJobs returns the answer forms of jobs, in order.
func viewJobs(jobs []*structs.Job) []*jobView {
	out := make([]*jobView, len(jobs))
	for i, j := range jobs {
		out[i] = viewJob(j)
	}
	return out
}
