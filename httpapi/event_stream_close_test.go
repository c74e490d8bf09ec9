package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/droverhq/drover/stream"
)

// CloseStreams (the agent's shutdown) ends an open event stream with the
// end of its body, as Nomad's: the subscriber reads io.EOF, not a cut
// connection; a stream opened afterwards ends at once.
func TestCloseStreamsEndsEventStreamsCleanly(t *testing.T) {
	b := newFakeBackend()
	cfg := EventStreamConfig{Buffer: stream.NewBuffer(8)}
	b.fsm.SetEvents(cfg.Buffer)
	api := New(b, nil, WithEventStream(cfg))
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/event/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	api.CloseStreams()
	api.CloseStreams() // twice is harmless
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the stream ended with %v, want its end (io.EOF)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end")
	}
	resp2, err := http.Get(srv.URL + "/v1/event/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if _, err := io.Copy(io.Discard, resp2.Body); err != nil {
		t.Fatal(err)
	}
}
