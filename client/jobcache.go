package client

import (
	"encoding/json"
	"runtime"
	"sync"
	"weak"

	"github.com/droverhq/drover/structs"
)

// JobCache shares one decoded copy of each job version among the
// allocations that run it. Every allocation the servers send carries its
// job, so without sharing a node holds one copy of the job per
// allocation, and a fleet of simulated nodes one per allocation of the
// fleet. A copy is keyed by namespace, job ID, version and
// JobModifyIndex (the index of the job's last change of specification),
// and held weakly: once no allocation refers to it, it is collected and
// its entry removed. The client never modifies a job it was sent.
//
// A JobCache is safe for concurrent use; one may be shared by the agents
// of many nodes in one process (Config.Jobs).
type JobCache struct {
	mu   sync.Mutex
	jobs map[structs.JobRef]weak.Pointer[structs.Job]
	// encoded holds the JSON encoding of cached copies that were saved
	// (encode), dropped with the copy.
	encoded map[structs.JobRef]jobEncoding
}

// jobEncoding is the JSON encoding of one copy of a job.
type jobEncoding struct {
	wp   weak.Pointer[structs.Job]
	json []byte
}

// NewJobCache returns an empty cache.
func NewJobCache() *JobCache {
	return &JobCache{jobs: map[structs.JobRef]weak.Pointer[structs.Job]{}, encoded: map[structs.JobRef]jobEncoding{}}
}

// Share returns the cached copy of job's version if one is live, else
// caches job and returns it. A nil job (or cache) is returned as given.
func (c *JobCache) Share(job *structs.Job) *structs.Job {
	if c == nil || job == nil {
		return job
	}
	k := job.Ref()
	c.mu.Lock()
	defer c.mu.Unlock()
	if wp, ok := c.jobs[k]; ok {
		if j := wp.Value(); j != nil {
			return j
		}
	}
	wp := weak.Make(job)
	c.jobs[k] = wp
	runtime.AddCleanup(job, c.forget, jobCacheEntry{k, wp})
	return job
}

type jobCacheEntry struct {
	key structs.JobRef
	wp  weak.Pointer[structs.Job]
}

// forget drops a collected job's entry and its encoding, unless a newer
// copy took them.
func (c *JobCache) forget(e jobCacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs[e.key] == e.wp {
		delete(c.jobs, e.key)
	}
	if c.encoded[e.key].wp == e.wp {
		delete(c.encoded, e.key)
	}
}

// encode returns job's JSON encoding, kept with the cached copy when job
// is that copy: saving an allocation (alloc.json, with its job) then
// encodes the allocation's own fields and copies its job's bytes, the job
// being most of the file. Another copy of the version is encoded each
// time. The bytes returned are shared: read them only. A nil cache
// encodes every job each time.
func (c *JobCache) encode(job *structs.Job) ([]byte, error) {
	if c == nil || job == nil {
		return json.Marshal(job)
	}
	k, wp := job.Ref(), weak.Make(job)
	c.mu.Lock()
	e, ok := c.encoded[k]
	c.mu.Unlock()
	if ok && e.wp == wp {
		return e.json, nil
	}
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.jobs[k] == wp {
		c.encoded[k] = jobEncoding{wp: wp, json: b}
	}
	c.mu.Unlock()
	return b, nil
}

// Len returns the number of entries (live or not yet forgotten).
func (c *JobCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.jobs)
}

// shareJobs points each allocation at the cache's copy of its job.
func (c *JobCache) shareJobs(allocs []*structs.Allocation) {
	for _, a := range allocs {
		if a != nil {
			a.Job = c.Share(a.Job)
		}
	}
}
