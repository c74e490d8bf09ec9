package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/structs"
)

// hostSecret is a host file, outside the allocation, that a task points
// its log at.
func hostSecret(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte("HOST-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A symlink in place of a task's log file, a FIFO there, or the log
// directory replaced by a link out: the endpoint answers 400 saying why,
// and never reads the host's file nor blocks on the FIFO.
func TestLogsRefuseWhatATaskPutInPlaceOfItsLog(t *testing.T) {
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, logDir, secret string)
		want  string
	}{
		{"symlink to a host file", func(t *testing.T, logDir, secret string) {
			if err := os.Symlink(secret, filepath.Join(logDir, "web.stdout.0")); err != nil {
				t.Fatal(err)
			}
		}, "alloc/logs/web.stdout.0 is not a regular file"},
		{"relative symlink out", func(t *testing.T, logDir, secret string) {
			rel, _ := filepath.Rel(logDir, secret)
			if err := os.Symlink(rel, filepath.Join(logDir, "web.stdout.1")); err != nil {
				t.Fatal(err)
			}
		}, "alloc/logs/web.stdout.1 is not a regular file"},
		{"fifo", func(t *testing.T, logDir, _ string) {
			if err := syscall.Mkfifo(filepath.Join(logDir, "web.stdout.0"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "alloc/logs/web.stdout.0 is not a regular file"},
		{"log directory linked out", func(t *testing.T, logDir, secret string) {
			if err := os.RemoveAll(logDir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Dir(secret), logDir); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("secret", filepath.Join(filepath.Dir(secret), "web.stdout.0")); err != nil {
				t.Fatal(err)
			}
		}, "log directory is refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, logDir, srv := newLogFixture(t)
			secret := hostSecret(t)
			c.setup(t, logDir, secret)
			for _, q := range []string{"", "&plain=true", "&origin=end&offset=5", "&follow=true"} {
				code, body := get(t, srv.URL+"/v1/client/fs/logs/a1?task=web&type=stdout"+q)
				if code != http.StatusBadRequest || !strings.Contains(body, c.want) || strings.Contains(body, "HOST-SECRET") {
					t.Fatalf("%s: %d %q, want 400 saying %q", q, code, body, c.want)
				}
			}
		})
	}
}

// A link put in place of a log file while the log is followed ends the
// stream; what is streamed never includes the host's file.
func TestLogsFollowStopsAtALinkPutInPlace(t *testing.T) {
	src, logDir, srv := newLogFixture(t)
	secret := hostSecret(t)
	if err := os.WriteFile(filepath.Join(logDir, "web.stdout.0"), []byte("first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/client/fs/logs/a1?task=web&type=stdout&follow=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var f streamFrame
	if err := dec.Decode(&f); err != nil || string(f.Data) != "first\n" {
		t.Fatalf("first frame %+v %v", f, err)
	}
	if err := os.Symlink(secret, filepath.Join(logDir, "web.stdout.1")); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	for dec.Decode(&f) == nil {
		got.Write(f.Data)
	}
	if ctx.Err() != nil {
		t.Fatal("the stream went on after the link was put in place")
	}
	if strings.Contains(got.String(), "HOST-SECRET") {
		t.Fatalf("streamed the host's file: %q", got.String())
	}
	src.setState("web", structs.TaskStateDead)
}
