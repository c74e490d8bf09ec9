package httpapi

import "github.com/droverhq/drover/structs"

// jobView is a job as Nomad's job answers carry it: with the fields
// Nomad's server always writes — a dispatched child's Dispatched and
// token, which the stored job omits when unset, and the Consul and Vault
// namespaces and job tokens drover has not. The official
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
	return &jobView{Job: j, Dispatched: j.Dispatched, DispatchIdempotencyToken: j.DispatchIdempotencyToken}
}

// viewJobs returns the answer forms of jobs, in order.
func viewJobs(jobs []*structs.Job) []*jobView {
	out := make([]*jobView, len(jobs))
	for i, j := range jobs {
		out[i] = viewJob(j)
	}
	return out
}
