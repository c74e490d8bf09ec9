package httpapi

import (
	"net/http"
	"runtime"
	"runtime/metrics"
	"time"
)

// GET /v1/operator/debug/heap runs a garbage collection on the receiving
// agent, then answers what its heap holds (HeapLive). It is how a
// benchmark reads a server's live heap per object stored: RSS holds the
// collector's headroom and memory not yet returned to the kernel. A
// collection stops the process's goroutines briefly (a few milliseconds at
// 100,000 allocs), so the route needs a management token and answers only
// requests from this machine (as /debug/pprof/).
func init() {
	register(route{"GET /v1/operator/debug/heap", localRoute, management, (*Server).debugHeap})
	routeAccess["GET /v1/operator/debug/heap"] = localOnly
}

// HeapLive is the answer of GET /v1/operator/debug/heap.
type HeapLive struct {
	// LiveBytes is the heap the collection just kept
	// (runtime/metrics /gc/heap/live:bytes); Objects the objects in it.
	LiveBytes uint64
	Objects   uint64
	// InUseBytes is the heap's spans in use, live objects and the
	// fragmentation around them (/memory/classes/heap/objects:bytes plus
	// /memory/classes/heap/unused:bytes).
	InUseBytes uint64
	// GCTook is how long the forced collection took, in nanoseconds.
	GCTook time.Duration
}

func (s *Server) debugHeap(_ http.ResponseWriter, _ *http.Request) (any, error) {
	start := time.Now()
	runtime.GC()
	took := time.Since(start)
	samples := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/heap/objects:objects"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(samples)
	v := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return samples[i].Value.Uint64()
	}
	return &HeapLive{LiveBytes: v(0), Objects: v(1), InUseBytes: v(2) + v(3), GCTook: took}, nil
}
