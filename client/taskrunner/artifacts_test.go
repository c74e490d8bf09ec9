package taskrunner

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/droverhq/drover/client/clock"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	zw.Close()
	return buf.Bytes()
}

// artifactServer serves files on 127.0.0.1; /slow never answers within
// the test's read timeout.
func artifactServer(t *testing.T, files map[string][]byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
			return
		}
		if r.URL.Path == "/headers" && r.Header.Get("X-Token") != "secret" {
			http.Error(w, "no token", http.StatusForbidden)
			return
		}
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestFetchArtifacts(t *testing.T) {
	script := []byte("#!/bin/sh\necho hi\n")
	tgz := tarGz(t, map[string]string{"app/run.sh": "run", "app/conf": "c"})
	zp := zipOf(t, map[string]string{"z.txt": "zipped"})
	big := bytes.Repeat([]byte("x"), 64<<10)
	url := artifactServer(t, map[string][]byte{
		"/run.sh": script, "/app.tar.gz": tgz, "/z.zip": zp, "/big": big, "/headers": []byte("ok"),
	})
	lim := ArtifactLimits{HTTPReadTimeout: 2 * time.Second, HTTPMaxSize: 32 << 10, DecompressionFileCountLimit: 10, DecompressionSizeLimit: 1 << 20}
	for _, c := range []struct {
		name  string
		a     structs.TaskArtifact
		lim   *ArtifactLimits
		files map[string]string // path under the task dir: content
		err   string            // a substring of the error, "" for success
	}{
		{name: "file, good checksum", a: structs.TaskArtifact{GetterSource: url + "/run.sh", GetterOptions: map[string]string{"checksum": sha(script)}},
			files: map[string]string{"local/run.sh": string(script)}},
		{name: "bad checksum", a: structs.TaskArtifact{GetterSource: url + "/run.sh", GetterOptions: map[string]string{"checksum": sha([]byte("other"))}},
			err: "Checksums did not match"},
		{name: "404", a: structs.TaskArtifact{GetterSource: url + "/missing"}, err: "404"},
		{name: "timeout", a: structs.TaskArtifact{GetterSource: url + "/slow"}, err: "deadline exceeded"},
		{name: "size limit", a: structs.TaskArtifact{GetterSource: url + "/big"}, err: "exceeds the client's http_max_size"},
		{name: "tar.gz unpacked", a: structs.TaskArtifact{GetterSource: url + "/app.tar.gz", RelativeDest: "local/x"},
			files: map[string]string{"local/x/app/run.sh": "run", "local/x/app/conf": "c"}},
		{name: "zip unpacked", a: structs.TaskArtifact{GetterSource: url + "/z.zip"}, files: map[string]string{"local/z.txt": "zipped"}},
		{name: "archive = false keeps the file", a: structs.TaskArtifact{GetterSource: url + "/app.tar.gz", GetterOptions: map[string]string{"archive": "false"}},
			files: map[string]string{"local/app.tar.gz": string(tgz)}},
		{name: "file count limit", a: structs.TaskArtifact{GetterSource: url + "/app.tar.gz"},
			lim: &ArtifactLimits{HTTPReadTimeout: 2 * time.Second, DecompressionFileCountLimit: 1, DecompressionSizeLimit: 1 << 20}, err: "too many files"},
		{name: "mode file and a destination", a: structs.TaskArtifact{GetterSource: url + "/run.sh", GetterMode: "file", RelativeDest: "local/bin/tool"},
			files: map[string]string{"local/bin/tool": string(script)}},
		{name: "headers", a: structs.TaskArtifact{GetterSource: url + "/headers", GetterHeaders: map[string]string{"X-Token": "secret"}},
			files: map[string]string{"local/headers": "ok"}},
		{name: "chown to nobody", a: structs.TaskArtifact{GetterSource: url + "/run.sh", Chown: true, RelativeDest: "local/owned"},
			files: map[string]string{"local/owned/run.sh": string(script)}},
		{name: "destination outside", a: structs.TaskArtifact{GetterSource: url + "/run.sh", RelativeDest: "../../etc"}, err: "escapes the task directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := lim
			if c.lim != nil {
				l = *c.lim
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			a := c.a
			err := FetchArtifacts(ctx, dir, "", []*structs.TaskArtifact{&a}, l)
			if c.err != "" {
				var ae *ArtifactError
				if err == nil || !errors.As(err, &ae) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), a.GetterSource) {
					t.Fatalf("error %v, want one naming %s and containing %q", err, a.GetterSource, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Chown && os.Geteuid() == 0 {
				// Run as root, the test can give the files away.
				if err := FetchArtifacts(ctx, dir, "nobody", []*structs.TaskArtifact{&a}, l); err != nil {
					t.Fatal(err)
				}
				fi, _ := os.Stat(filepath.Join(dir, "local/owned/run.sh"))
				if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid == 0 {
					t.Fatalf("run.sh still belongs to root")
				}
			}
			for p, want := range c.files {
				got, err := os.ReadFile(filepath.Join(dir, p))
				if err != nil || string(got) != want {
					t.Fatalf("%s: %q %v, want %q", p, got, err, want)
				}
			}
		})
	}
}

// A failed download is a "Failed Artifact Download" event naming the
// artifact, and the task's restart policy applies: one retry, then the
// task fails without ever starting. The failure here is a source on the
// client's own host, refused at run time (a variable could have made it
// one after the job was validated).
func TestArtifactFailureRestartPolicy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(src, []byte("tool"), 0o644); err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		h := &harness{t: t, clock: clock.NewFake(epoch)}
		h.driver = mock.New(mock.Options{Clock: h.clock})
		task := &structs.Task{Name: "web", Driver: "mock", KillTimeout: 5 * time.Second}
		policy := &structs.RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail}
		tr, err := New(Config{
			Task: task, JobType: structs.JobTypeBatch, Driver: h.driver, RestartPolicy: policy, Clock: h.clock,
			TaskConfig: &drivers.TaskConfig{AllocID: "a1", TaskName: "web", TaskDir: t.TempDir()},
			Artifacts: []*structs.TaskArtifact{{GetterSource: src, GetterMode: "file", RelativeDest: "local/tool",
				GetterOptions: map[string]string{"checksum": sha([]byte("not the tool"))}}},
			OnUpdate: func(u Update) { h.updates = append(h.updates, u) },
		})
		if err != nil {
			t.Fatal(err)
		}
		h.runner = tr
		tr.Run()
		h.advance(time.Second)
		h.advance(time.Second)
		h.wantState(structs.TaskStateDead, true, 1)
		want := "Received,Downloading Artifacts,Failed Artifact Download,Restarting,Downloading Artifacts,Failed Artifact Download,Not Restarting"
		if got := h.eventTypes(); got != want {
			t.Fatalf("events %s, want %s", got, want)
		}
		var failed *structs.TaskEvent
		for _, e := range tr.State().Events {
			if e.Type == structs.TaskArtifactDownloadFailed {
				failed = e
			}
		}
		if d := failed.Extra().DownloadError; !strings.Contains(d, src) || !strings.Contains(d, "path on the client's own host is refused") {
			t.Fatalf("DownloadError %q names neither the artifact nor the reason", d)
		}
	})
}

// insecure skips the check of an HTTPS server's certificate; without it
// a self-signed server is refused.
func TestArtifactInsecure(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("tls")) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := &structs.TaskArtifact{GetterSource: srv.URL + "/f", GetterMode: "file", RelativeDest: "local/f"}
	if err := FetchArtifacts(ctx, t.TempDir(), "", []*structs.TaskArtifact{a}, DefaultArtifactLimits()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("self-signed server without insecure: %v", err)
	}
	a.GetterInsecure = true
	dir := t.TempDir()
	if err := FetchArtifacts(ctx, dir, "", []*structs.TaskArtifact{a}, DefaultArtifactLimits()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "local/f")); string(b) != "tls" {
		t.Fatalf("fetched %q", b)
	}
}

// A kill while an artifact downloads stops the download: the task ends
// killed at once, never started, without waiting for the read timeout.
func TestKillDuringArtifactDownload(t *testing.T) {
	tr := downloadingRunner(t)
	began := time.Now()
	tr.Kill()
	select {
	case <-tr.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the runner did not end within 5s of the kill")
	}
	st := tr.State()
	if st.State != structs.TaskStateDead || !st.StartedAt.IsZero() || !strings.HasSuffix(eventList(tr), structs.TaskKilled) {
		t.Fatalf("state %s started %v events %s", st.State, st.StartedAt, eventList(tr))
	}
	if time.Since(began) > 3*time.Second {
		t.Fatalf("the kill waited %s for the download", time.Since(began))
	}
}

// downloadingRunner runs a task whose artifact downloads for ever, and
// returns once the download has begun.
func downloadingRunner(t *testing.T) *TaskRunner {
	t.Helper()
	url := artifactServer(t, nil)
	d := mock.New(mock.Options{})
	task := &structs.Task{Name: "web", Driver: "mock", KillTimeout: time.Second}
	tr, err := New(Config{
		Task: task, JobType: structs.JobTypeService, Driver: d,
		TaskConfig: &drivers.TaskConfig{AllocID: "a1", TaskName: "web", TaskDir: t.TempDir()},
		Artifacts:  []*structs.TaskArtifact{{GetterSource: url + "/slow"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr.Run()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(eventList(tr), structs.TaskDownloadingArtifacts) {
		if time.Now().After(deadline) {
			t.Fatalf("no download began: %s", eventList(tr))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return tr
}

func eventList(tr *TaskRunner) string {
	var out []string
	for _, e := range tr.State().Events {
		out = append(out, e.Type)
	}
	return strings.Join(out, ",")
}

// TestDetachDuringArtifactDownload: a client that shuts down detaches its
// runners; one downloading an artifact stops at once, and the cut-short
// download is neither a "Failed Artifact Download" nor a restart: the task
// stays pending for the next client.
func TestDetachDuringArtifactDownload(t *testing.T) {
	tr := downloadingRunner(t)
	tr.Detach()
	select {
	case <-tr.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the runner did not end within 5s of the detach")
	}
	st := tr.State()
	events := eventList(tr)
	if st.State != structs.TaskStatePending || st.Failed || strings.Contains(events, structs.TaskArtifactDownloadFailed) || strings.Contains(events, structs.TaskRestarting) {
		t.Fatalf("after the detach: state %s failed %v events %s", st.State, st.Failed, events)
	}
}

// An artifact may land in the allocation's shared directory (../alloc,
// the task's ${NOMAD_ALLOC_DIR}), as Nomad's jobs put one there for the
// other tasks; never in another task's directory, nor out through alloc/.
func TestFetchArtifactIntoTheSharedDir(t *testing.T) {
	url := artifactServer(t, map[string][]byte{"/go.mod": []byte("module x\n")})
	allocDir := t.TempDir()
	taskDir := filepath.Join(allocDir, "web")
	for _, d := range []string{taskDir, filepath.Join(allocDir, "alloc"), filepath.Join(allocDir, "other")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lim := ArtifactLimits{HTTPReadTimeout: 2 * time.Second, DecompressionFileCountLimit: 10, DecompressionSizeLimit: 1 << 20}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := &structs.TaskArtifact{GetterSource: url + "/go.mod", GetterMode: "file", RelativeDest: "../alloc/go.mod"}
	if err := FetchArtifacts(ctx, taskDir, "", []*structs.TaskArtifact{a}, lim); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(allocDir, "alloc", "go.mod")); err != nil || string(got) != "module x\n" {
		t.Fatalf("alloc/go.mod: %q %v", got, err)
	}
	for _, dest := range []string{"../other/go.mod", "../alloc/../other/go.mod", "../alloc/../../go.mod"} {
		a := &structs.TaskArtifact{GetterSource: url + "/go.mod", GetterMode: "file", RelativeDest: dest}
		if err := FetchArtifacts(ctx, taskDir, "", []*structs.TaskArtifact{a}, lim); !errors.Is(err, ErrArtifactDestination) {
			t.Errorf("%s: %v, want ErrArtifactDestination", dest, err)
		}
	}
	if _, err := os.Stat(filepath.Join(allocDir, "other", "go.mod")); !os.IsNotExist(err) {
		t.Fatalf("another task's directory took the file: %v", err)
	}
}
