package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/droverhq/drover/structs"
)

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
// (JobCache.encode) as the object's last member. It is the JSON object encoding/json
// writes for the allocation whole (members in another order), which
// earlier clients wrote and read; the job's bytes are copied, not
// encoded or scanned again (encoding/json checks every json.Marshaler's
// output, as long as encoding the job).
func writeAllocFile(w io.Writer, alloc *structs.Allocation, jobs *JobCache) error {
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
