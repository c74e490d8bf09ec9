package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// allocFileJSON is the allocation's own fields in alloc.json: the outer
// Job, always nil and so left out, hides the allocation's.
type allocFileJSON struct {
	*structs.Allocation
	Job json.RawMessage `json:",omitempty"`
}

// allocFileBuffers are writeAllocFile's buffers.
var allocFileBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledAllocFile bounds the buffer kept for the next file.
const maxPooledAllocFile = 1 << 20

// writeAllocFile writes alloc.json's contents to w in one write: the
// allocation encoded without its job, then the job's encoding from jobs
// as the object's last member. It is the JSON object encoding/json
// writes for the allocation whole (members in another order), which
// earlier clients wrote and read; the job's bytes are copied, not
// encoded or scanned again (encoding/json checks every json.Marshaler's
// output, as long as encoding the job).
func writeAllocFile(w io.Writer, alloc *structs.Allocation, jobs *jobEncodings) error {
	job, err := jobs.encode(alloc.Job)
	if err != nil {
		return err
	}
	buf := allocFileBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	if err := json.NewEncoder(buf).Encode(allocFileJSON{Allocation: alloc}); err != nil {
		return err
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	if len(b) < 2 || b[len(b)-1] != '}' {
		return fmt.Errorf("encoding alloc %s: not a JSON object", alloc.ID)
	}
	sep := ","
	if len(b) == 2 {
		sep = ""
	}
	buf.Truncate(len(b) - 1)
	buf.WriteString(sep + `"Job":`)
	buf.Write(job)
	buf.WriteString("}\n")
	_, err = w.Write(buf.Bytes())
	if buf.Cap() <= maxPooledAllocFile {
		allocFileBuffers.Put(buf)
	}
	return err
}
