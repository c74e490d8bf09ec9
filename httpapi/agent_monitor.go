package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// GET /v1/agent/monitor streams the agent's log lines as they are
// written, as Nomad's:
//
//	?log_level=   the lowest level sent (trace, debug, info, warn, error;
//	              default info), whatever level the agent logs at
//	?log_json=    true: each line as JSON
//	?log_include_location=  true: each line names the source line
//	?plain=       true: the lines as text; otherwise Nomad's frames, one
//	              JSON object {"Data": <base64 of the lines>} after another
//	?node_id=, ?server_id=  another agent's log (agent_target.go)
//
// It needs agent:read. Lines are buffered up to monitorBuffer per request;
// a reader that falls behind loses lines, and is told how many in a line
// of its own, as Nomad's. A heartbeat frame ({}) is sent every
// monitorHeartbeat while nothing is logged.

func init() {
	register(route{"GET /v1/agent/monitor", localRoute, agentRead, (*Server).agentMonitor})
}

// LogSinkBackend lets the API follow the agent's log.
type LogSinkBackend interface {
	// RegisterLogSink sends every line the agent logs, at any level, to
	// sink until the returned function is called.
	RegisterLogSink(sink hclog.SinkAdapter) (deregister func())
}

// Bounds of a monitor stream.
const (
	monitorBuffer     = 512
	monitorHeartbeat  = 10 * time.Second
	monitorWriteLimit = 10 * time.Second
)

// monitorOptions are a monitor request's parameters.
type monitorOptions struct {
	level    hclog.Level
	json     bool
	location bool
	plain    bool
}

func parseMonitorOptions(r *http.Request) (monitorOptions, error) {
	q := r.URL.Query()
	o := monitorOptions{level: hclog.Info}
	if v := q.Get("log_level"); v != "" {
		o.level = hclog.LevelFromString(v)
		if o.level == hclog.NoLevel || o.level == hclog.Off {
			return o, Errorf(http.StatusBadRequest, "Unknown log level: %s", v)
		}
	}
	for _, b := range []struct {
		name, what string
		to         *bool
	}{{"log_json", "log json", &o.json}, {"plain", "plain", &o.plain}, {"log_include_location", "log_include_location", &o.location}} {
		v := q.Get(b.name)
		if v == "" {
			continue
		}
		p, err := strconv.ParseBool(v)
		if err != nil {
			return o, Errorf(http.StatusBadRequest, "Unknown option for %s: %v", b.what, err)
		}
		*b.to = p
	}
	return o, nil
}

func (s *Server) agentMonitor(w http.ResponseWriter, r *http.Request) (any, error) {
	o, err := parseMonitorOptions(r)
	if err != nil {
		return nil, err
	}
	addr, err := s.agentTarget(r)
	if err != nil {
		return nil, err
	}
	if addr != "" {
		s.forwardToAgent(w, r, addr)
		return written{}, nil
	}
	b, ok := s.backend.(LogSinkBackend)
	if !ok {
		return nil, Errorf(http.StatusNotImplemented, "this agent cannot stream its log")
	}
	lines := newLineQueue(monitorBuffer)
	deregister := b.RegisterLogSink(hclog.NewSinkAdapter(&hclog.LoggerOptions{
		Level: o.level, JSONFormat: o.json, IncludeLocation: o.location, Output: lines,
		// The sink formats the agent's lines itself, never in colour.
		Color: hclog.ColorOff,
	}))
	defer deregister()
	return s.streamMonitor(w, r, o, lines)
}

// streamMonitor writes the queued lines until the request ends or a write
// fails.
func (s *Server) streamMonitor(w http.ResponseWriter, r *http.Request, o monitorOptions, lines *lineQueue) (any, error) {
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	write := func(b []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(monitorWriteLimit)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	frame := func(data []byte) []byte {
		if o.plain {
			return data
		}
		b, _ := json.Marshal(struct{ Data []byte }{data})
		return b
	}
	if o.plain {
		w.Header().Set("Content-Type", "text/plain")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return written{}, nil
	}
	beat := time.NewTicker(monitorHeartbeat)
	defer beat.Stop()
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return written{}, nil
		case <-beat.C:
			if !o.plain {
				if err := write([]byte("{}")); err != nil {
					return written{}, nil
				}
			}
		case <-lines.ready:
			data, dropped := lines.take()
			if dropped > 0 {
				data = append([]byte(fmt.Sprintf("[WARN]  monitor: monitor dropped %d logs during monitor request\n", dropped)), data...)
			}
			if len(data) == 0 {
				continue
			}
			if err := write(frame(data)); err != nil {
				return written{}, nil
			}
			beat.Reset(monitorHeartbeat)
		}
	}
}

// lineQueue is the bounded buffer between the log sink (any goroutine)
// and the stream: a write never blocks the logger; past max lines, lines
// are counted as dropped.
type lineQueue struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	n       int
	max     int
	dropped int
	ready   chan struct{}
}

func newLineQueue(max int) *lineQueue {
	return &lineQueue{max: max, ready: make(chan struct{}, 1)}
}

// Write takes one formatted line (or several) from the sink.
func (q *lineQueue) Write(p []byte) (int, error) {
	q.mu.Lock()
	if q.n >= q.max {
		q.dropped++
	} else {
		q.buf.Write(p)
		q.n++
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return len(p), nil
}

// take returns the queued lines and how many were dropped since the last
// take.
func (q *lineQueue) take() ([]byte, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := bytes.Clone(q.buf.Bytes())
	dropped := q.dropped
	q.buf.Reset()
	q.n, q.dropped = 0, 0
	return out, dropped
}
