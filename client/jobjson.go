package client

import (
	"encoding/json"
	"sync"
	"weak"

	"github.com/droverhq/drover/structs"
)

// jobEncodings keeps the JSON encoding of the few job versions an agent
// saved last, so that saving an allocation (alloc.json, with its job)
// encodes the allocation's own fields and copies its job's bytes: the job
// is most of the file, and the allocations of one version share one
// decoded copy of it (JobCache), which the client never modifies. An
// entry is found by the job's identity (the copy itself, held weakly), so
// a copy decoded again later is encoded again rather than trusted to be
// the same. A jobEncodings is safe for concurrent use; the zero value is
// ready, and a nil one encodes every job each time.
type jobEncodings struct {
	mu      sync.Mutex
	entries [jobEncodingsKept]jobEncoding
	next    int // the entry to replace next
}

// jobEncodingsKept bounds the versions kept: a rollout runs two at a
// time on a node.
const jobEncodingsKept = 4

type jobEncoding struct {
	job  weak.Pointer[structs.Job]
	json []byte
}

// encode returns job's JSON encoding, from the cache when it holds this
// copy of the job. The bytes returned are shared: read them only.
func (c *jobEncodings) encode(job *structs.Job) ([]byte, error) {
	if c == nil || job == nil {
		return json.Marshal(job)
	}
	wp := weak.Make(job)
	c.mu.Lock()
	for _, e := range c.entries {
		if e.job == wp && e.json != nil {
			c.mu.Unlock()
			return e.json, nil
		}
	}
	c.mu.Unlock()
	b, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.entries[c.next] = jobEncoding{job: wp, json: b}
	c.next = (c.next + 1) % jobEncodingsKept
	c.mu.Unlock()
	return b, nil
}

// allocFileJSON is alloc.json as saveAlloc writes it: the allocation's
// fields, with its job's encoding in place of the Job field (the outer
// field hides the embedded one). It reads back as a structs.Allocation,
// as the files earlier clients wrote do.
type allocFileJSON struct {
	*structs.Allocation
	Job json.RawMessage
}
