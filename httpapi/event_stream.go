package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/acl"
	"github.com/droverhq/drover/stream"
	"github.com/droverhq/drover/structs"
)

// GET /v1/event/stream serves the server's event stream (package stream)
// as Nomad's: newline-delimited JSON frames {"Index": n, "Events": [...]},
// one per log entry with events the request matches, and a heartbeat
// frame {} every EventStreamConfig.Heartbeat. Any server serves it from
// its own copy of the state (a local route). A subscriber that reads
// slower than the state changes falls out of the buffer: it gets an error
// frame {"Error": "..."} and the stream ends; so does a subscriber whose
// connection accepts nothing for WriteTimeout. With ACLs on, the token is
// checked again at every heartbeat: a deleted or expired token ends the
// stream.

func init() {
	register(route{"GET /v1/event/stream", localRoute, eventTopics, (*Server).eventStream})
}

// Event stream defaults, as Nomad's heartbeat.
const (
	DefaultEventHeartbeat    = 10 * time.Second
	DefaultEventWriteTimeout = 30 * time.Second
)

// EventStreamConfig configures GET /v1/event/stream.
type EventStreamConfig struct {
	// Buffer is the server's event buffer (fsm.FSM.Events); nil answers
	// the route with 501.
	Buffer *stream.Buffer
	// Heartbeat is the interval of heartbeat frames (DefaultEventHeartbeat
	// when 0).
	Heartbeat time.Duration
	// WriteTimeout bounds each frame's write (DefaultEventWriteTimeout when
	// 0).
	WriteTimeout time.Duration
}

// WithEventStream serves the event stream from c.Buffer.
func WithEventStream(c EventStreamConfig) Option {
	return func(s *Server) {
		if c.Heartbeat <= 0 {
			c.Heartbeat = DefaultEventHeartbeat
		}
		if c.WriteTimeout <= 0 {
			c.WriteTimeout = DefaultEventWriteTimeout
		}
		s.events = c
	}
}

// eventTopicNames maps the names ?topic= accepts to topics.
var eventTopicNames = func() map[string]stream.Topic {
	m := map[string]stream.Topic{string(stream.TopicAll): stream.TopicAll}
	for _, t := range stream.Topics {
		m[string(t)] = t
	}
	return m
}()

// parseTopics reads ?topic= (repeated; Topic, Topic:key, Topic:*, *):
// every topic when none is given, as Nomad's; a key with a colon is
// refused, as Nomad's.
func parseTopics(r *http.Request) (map[stream.Topic][]string, error) {
	vals := r.URL.Query()["topic"]
	topics := map[stream.Topic][]string{}
	if len(vals) == 0 {
		topics[stream.TopicAll] = []string{"*"}
		return topics, nil
	}
	for _, v := range vals {
		name, key, _ := strings.Cut(v, ":")
		t, ok := eventTopicNames[name]
		if !ok {
			return nil, Errorf(http.StatusBadRequest, "invalid topic %q: unknown topic %q (one of Job, Allocation, Deployment, Evaluation, Node, *)", v, name)
		}
		if strings.Contains(key, ":") {
			// Nomad's words: a topic is Topic:key, one colon.
			return nil, Errorf(http.StatusBadRequest, "Invalid key value pair for topic: %s", v)
		}
		if key == "" {
			key = "*"
		}
		topics[t] = append(topics[t], key)
	}
	return topics, nil
}

// allowsEventTopics answers, for the route's ACL check, whether a may
// subscribe to the request's topics, as Nomad's: read-job in the
// request's namespace (any namespace for "*") for Job, Allocation,
// Deployment, Evaluation and Service, node:read for Node, a management token for
// NodePool and "*". Malformed topics are let through, for the handler to refuse (400).
func allowsEventTopics(a *acl.ACL, r *http.Request) bool {
	topics, err := parseTopics(r)
	if err != nil {
		return true
	}
	for t := range topics {
		switch t {
		case stream.TopicAll, stream.TopicNodePool:
			// NodePool needs a management token, as Nomad's: the stream
			// cannot leave out the pools a token may not read.
			if !a.IsManagement() {
				return false
			}
		case stream.TopicNode:
			if !a.AllowNodeRead() {
				return false
			}
		default:
			ns := namespaceOf(r)
			if ns == "*" && !a.AllowNamespaceOpAny(acl.NamespaceCapabilityReadJob) ||
				ns != "*" && !a.AllowNamespaceOp(ns, acl.NamespaceCapabilityReadJob) {
				return false
			}
		}
	}
	return true
}

// eventFrame is one entry's events as written.
type eventFrame struct {
	Index  uint64
	Events []json.RawMessage
}

// eventJSON is an event as Nomad writes it.
type eventJSON struct {
	Topic      stream.Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    map[string]any
}

// renderEvent writes an event as Nomad's: the payload holds the object
// under its topic's name (Job, Allocation, Deployment, Evaluation, Node)
// in the shape its read endpoint answers, an allocation without its job
// (as Nomad's, to keep events small); a purged job is marked Deleted.
func renderEvent(e *stream.Event) ([]byte, error) {
	p := map[string]any{}
	switch o := e.Payload.(type) {
	case *structs.Job:
		p["Job"] = viewJob(o)
		if e.Deleted {
			p["Deleted"] = true
		}
	case *structs.Allocation:
		v := viewAlloc(o)
		v.Job = nil
		p["Allocation"] = v
	case *structs.Evaluation:
		p["Evaluation"] = o
	case *structs.Deployment:
		p["Deployment"] = o
	case *structs.Node:
		p["Node"] = o
	case *structs.ServiceRegistration:
		p["Service"] = o
	case *structs.NodePool:
		p["NodePool"] = o
	}
	return json.Marshal(eventJSON{Topic: e.Topic, Type: e.Type, Key: e.Key, Namespace: e.Namespace,
		FilterKeys: e.FilterKeys, Index: e.Index, Payload: p})
}

// next is what the stream's reader hands the writer.
type next struct {
	batch *stream.Batch
	err   error
}

func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) (any, error) {
	cfg := s.events
	if cfg.Buffer == nil {
		return nil, Errorf(http.StatusNotImplemented, "the event stream is not enabled on this agent")
	}
	topics, err := parseTopics(r)
	if err != nil {
		return nil, err
	}
	req := stream.SubscribeRequest{Topics: topics, Namespace: namespaceOf(r)}
	if v := r.URL.Query().Get("index"); v != "" {
		if req.Index, err = strconv.ParseUint(v, 10, 64); err != nil {
			return nil, Errorf(http.StatusBadRequest, "invalid index %q", v)
		}
	}
	z := authzOf(r)
	if req.Namespace == "*" && z.enabled {
		// Across namespaces, only those whose jobs the token may read.
		a := z.acl
		req.Allow = func(e *stream.Event) bool {
			return e.Namespace == "" || a.AllowNamespaceOp(e.Namespace, acl.NamespaceCapabilityReadJob)
		}
	}
	sub := cfg.Buffer.Subscribe(req)
	defer sub.Close()

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	nexts := make(chan next, 1)
	go func() {
		for {
			b, err := sub.Next(ctx)
			select {
			case nexts <- next{b, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()

	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	write := func(b []byte) error {
		if err := rc.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		return rc.Flush()
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return written{}, nil
	}
	beat := time.NewTicker(cfg.Heartbeat)
	defer beat.Stop()
	for {
		var frame []byte
		select {
		case <-ctx.Done():
			return written{}, nil
		case <-s.streamsEnd:
			// The agent stops: the stream ends cleanly, as Nomad's, and
			// the subscriber reads the end of the body (io.EOF).
			return written{}, nil
		case <-beat.C:
			if err := s.recheckEventToken(r); err != nil {
				frame = errorFrame(err)
				_ = write(frame)
				return written{}, nil
			}
			frame = []byte("{}\n")
		case n := <-nexts:
			if n.err != nil {
				if ctx.Err() == nil {
					s.logger.Debug("event stream ended", "remote", r.RemoteAddr, "error", n.err)
					_ = write(errorFrame(n.err))
				}
				return written{}, nil
			}
			if frame, err = encodeFrame(n.batch); err != nil {
				_ = write(errorFrame(err))
				return written{}, nil
			}
		}
		if err := write(frame); err != nil {
			s.logger.Debug("event stream subscriber gone", "remote", r.RemoteAddr, "error", err)
			return written{}, nil
		}
	}
}

// encodeFrame renders a batch as one line.
func encodeFrame(b *stream.Batch) ([]byte, error) {
	f := eventFrame{Index: b.Index, Events: make([]json.RawMessage, len(b.Events))}
	for i, e := range b.Events {
		raw, err := e.Encoded(renderEvent)
		if err != nil {
			return nil, fmt.Errorf("encoding event %s %s at %d: %w", e.Topic, e.Key, e.Index, err)
		}
		f.Events[i] = raw
	}
	out, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// errorFrame is the last frame of a stream that ends on err.
func errorFrame(err error) []byte {
	b, _ := json.Marshal(struct{ Error string }{err.Error()})
	return append(b, '\n')
}

// recheckEventToken checks, with ACLs on, that the stream's token still
// grants what it subscribed to (not deleted, not expired, policies not
// narrowed).
func (s *Server) recheckEventToken(r *http.Request) error {
	if !s.aclConfig.Enabled {
		return nil
	}
	a, _, err := s.resolve(TokenFromRequest(r))
	if err != nil {
		return err
	}
	if !allowsEventTopics(a, r) {
		return fmt.Errorf("%w: the token no longer grants the subscribed topics", ErrPermissionDenied)
	}
	return nil
}

// CloseStreams ends every event stream cleanly (and any started later at
// once); the agent calls it when it shuts down, before it waits for the
// HTTP server's requests to finish.
func (s *Server) CloseStreams() {
	s.closeStreamsOnce.Do(func() { close(s.streamsEnd) })
}
