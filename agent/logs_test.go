package agent

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/client/allocrunner"
	"github.com/droverhq/drover/structs"
)

// fakeAllocs is an allocSource over one allocation whose task state a
// test changes.
type fakeAllocs struct {
	mu   sync.Mutex
	info client.AllocInfo
}

func (f *fakeAllocs) Alloc(id string) (client.AllocInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.info.Alloc == nil || id != f.info.Alloc.ID {
		return client.AllocInfo{}, false
	}
	return f.info, true
}

func (f *fakeAllocs) setState(task, state string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.info.TaskStates = map[string]*structs.TaskState{task: {State: state}}
}

func newLogFixture(t *testing.T) (*fakeAllocs, string, *httptest.Server) {
	t.Helper()
	dir := allocrunner.NewAllocDir(t.TempDir(), "a1")
	if err := os.MkdirAll(dir.LogDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	job := &structs.Job{ID: "j", TaskGroups: []*structs.TaskGroup{{Name: "g", Tasks: []*structs.Task{{Name: "web"}}}}}
	src := &fakeAllocs{info: client.AllocInfo{
		Alloc: &structs.Allocation{ID: "a1", TaskGroup: "g", Job: job}, Dir: dir,
	}}
	src.setState("web", structs.TaskStateRunning)
	h := &clientHandler{src: src, logger: hclog.NewNullLogger(), poll: 5 * time.Millisecond}
	srv := httptest.NewServer(h.routes())
	t.Cleanup(srv.Close)
	return src, dir.LogDir(), srv
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestLogsReadRotatedFilesInOrderFromEitherOrigin(t *testing.T) {
	_, logDir, srv := newLogFixture(t)
	for i, s := range []string{"one\n", "two\n", "three\n"} {
		if err := os.WriteFile(filepath.Join(logDir, "web.stdout."+string(rune('0'+i))), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := srv.URL + "/v1/client/fs/logs/a1?task=web&type=stdout&plain=true"
	cases := []struct{ query, want string }{
		{"", "one\ntwo\nthree\n"},
		{"&offset=2", "e\ntwo\nthree\n"},
		{"&origin=end&offset=8", "o\nthree\n"},
		{"&origin=end&offset=100", "one\ntwo\nthree\n"},
		{"&offset=100", ""},
	}
	for _, c := range cases {
		code, body := get(t, base+c.query)
		if code != 200 || body != c.want {
			t.Errorf("%s: %d %q, want %q", c.query, code, body, c.want)
		}
	}
	// Without plain: Nomad's frames, base64 data.
	code, body := get(t, srv.URL+"/v1/client/fs/logs/a1?task=web&type=stdout")
	if code != 200 {
		t.Fatalf("frames: %d %s", code, body)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	var got strings.Builder
	for dec.More() {
		var f streamFrame
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(f.File, "alloc/logs/web.stdout.") {
			t.Errorf("frame file %q", f.File)
		}
		got.Write(f.Data)
	}
	if got.String() != "one\ntwo\nthree\n" {
		t.Errorf("frames carry %q", got.String())
	}
}

func TestLogsRefuseUnknownAllocsTasksAndBadParameters(t *testing.T) {
	_, _, srv := newLogFixture(t)
	cases := []struct {
		path string
		code int
	}{
		{"/v1/client/fs/logs/nope?task=web&type=stdout", 404},
		{"/v1/client/fs/logs/a1?task=db&type=stdout", 404},
		{"/v1/client/fs/logs/a1?type=stdout", 400},
		{"/v1/client/fs/logs/a1?task=web&type=stdall", 400},
		{"/v1/client/fs/logs/a1?task=web&type=stdout&origin=middle", 400},
		{"/v1/client/fs/logs/a1?task=web&type=stdout&offset=-1", 400},
		{"/v1/client/fs/logs/a1?task=web&type=stdout&follow=maybe", 400},
	}
	for _, c := range cases {
		if code, body := get(t, srv.URL+c.path); code != c.code {
			t.Errorf("%s: %d %q, want %d", c.path, code, body, c.code)
		}
	}
}

func TestLogsFollowUntilTheTaskIsDeadAcrossARotation(t *testing.T) {
	src, logDir, srv := newLogFixture(t)
	live := filepath.Join(logDir, "web.stderr.0")
	if err := os.WriteFile(live, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		code int
		body string
	}
	done := make(chan result, 1)
	go func() {
		code, body := get(t, srv.URL+"/v1/client/fs/logs/a1?task=web&type=stderr&plain=true&follow=true")
		done <- result{code, body}
	}()
	appendTo := func(path, s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		_, _ = f.WriteString(s)
	}
	time.Sleep(30 * time.Millisecond)
	appendTo(live, "b")
	time.Sleep(30 * time.Millisecond)
	// A rotation as rawexec does it: .1 becomes the live file.
	appendTo(filepath.Join(logDir, "web.stderr.1"), "c")
	time.Sleep(30 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("the follow ended while the task runs: %+v", r)
	default:
	}
	src.setState("web", structs.TaskStateDead)
	select {
	case r := <-done:
		if r.code != 200 || r.body != "abc" {
			t.Fatalf("followed %d %q, want abc", r.code, r.body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follow did not end after the task died")
	}
}
