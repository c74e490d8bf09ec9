package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// appTarball is a tar.gz of app/version.txt holding version.
func appTarball(t *testing.T, version string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	body := []byte(version)
	if err := tw.WriteHeader(&tar.Header{Name: "app/version.txt", Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	tw.Write(body)
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func sha256Of(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// serveFiles serves files, by URL path, on 127.0.0.1 until t ends (any
// other path is a 404) and returns the base URL.
func serveFiles(t testing.TB, files map[string][]byte) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// TestArtifactRawExec runs a raw_exec service on a dev agent whose
// artifact, a tar.gz served on 127.0.0.1, is fetched, checked and
// unpacked into local/ before the task starts; the task reads it. A
// second version of the job, with the next tarball, rolls out and its
// allocation reads the new file. A job with a wrong checksum never starts:
// its task fails with a "Failed Artifact Download" event naming the
// artifact.
func TestArtifactRawExec(t *testing.T) {
	v1, v2 := appTarball(t, "v1"), appTarball(t, "v2")
	base := serveFiles(t, map[string][]byte{"/app-v1.tar.gz": v1, "/app-v2.tar.gz": v2})

	p := startDevAgent(t)
	c := p.client()
	out := t.TempDir()
	jobFile := func(id, version, checksum string) *structs.Job {
		t.Helper()
		script := fmt.Sprintf(`cat "$NOMAD_TASK_DIR/app/version.txt" > %s/$NOMAD_ALLOC_ID; exec sleep 300`, out)
		src := fmt.Sprintf(`job %q {
  group "g" {
    update {
      max_parallel     = 1
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }
    restart {
      attempts = 1
      delay    = "1s"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      artifact {
        source = "%s/app-${NOMAD_META_version}.tar.gz"
        options {
          checksum = %q
        }
      }
      meta {
        version = %q
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, id, script, base, checksum, version)
		job, _, err := jobspec.Parse(id+".hcl", []byte(src), jobspec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return job
	}
	// readVersion waits for a running allocation of the job at version
	// jv and returns what its task read from the artifact.
	readVersion := func(jobID string, jv uint64) string {
		t.Helper()
		var got string
		eventually(t, 60*time.Second, jobID+" reads its artifact", func() error {
			allocs, err := jobAllocs(t, c, jobID)
			if err != nil {
				return err
			}
			run := runningAllocs(allocs, jv)
			if len(run) != 1 {
				return fmt.Errorf("%d running allocs at version %d: %s", len(run), jv, jsonString(allocs))
			}
			b, err := os.ReadFile(filepath.Join(out, run[0]))
			if err != nil {
				return err
			}
			got = string(b)
			return nil
		})
		return got
	}

	registerJob(t, c, jobFile("app", "v1", sha256Of(v1)))
	if got := readVersion("app", 0); got != "v1" {
		t.Fatalf("version 0 read %q from its artifact, want v1", got)
	}
	registerJob(t, c, jobFile("app", "v2", sha256Of(v2)))
	if got := readVersion("app", 1); got != "v2" {
		t.Fatalf("version 1 read %q from its artifact, want v2", got)
	}

	// A wrong checksum: the download fails, is retried once (the restart
	// policy), and the task fails without having started.
	registerJob(t, c, jobFile("bad", "v1", sha256Of(v2)))
	eventually(t, 60*time.Second, "the bad job's task fails on its artifact", func() error {
		allocs, err := jobAllocs(t, c, "bad")
		if err != nil || len(allocs) == 0 {
			return fmt.Errorf("allocs %v %v", len(allocs), err)
		}
		a, _, err := c.Allocations().Info(ctx(t), allocs[0].ID, nil)
		if err != nil {
			return err
		}
		st := a.TaskStates["app"]
		if st == nil || st.State != structs.TaskStateDead || !st.Failed {
			return fmt.Errorf("task state %s", jsonString(st))
		}
		if !st.StartedAt.IsZero() {
			t.Fatalf("the task started despite its bad artifact: %s", jsonString(st))
		}
		var failures int
		for _, e := range st.Events {
			if e.Type == structs.TaskArtifactDownloadFailed {
				failures++
				if d := e.Extra().DownloadError; !strings.Contains(d, base+"/app-v1.tar.gz") || !strings.Contains(d, "Checksums did not match") {
					t.Fatalf("event names neither the artifact nor the reason: %s", jsonString(e))
				}
			}
		}
		if failures != 2 || a.ClientStatus != structs.AllocClientStatusFailed {
			return fmt.Errorf("%d artifact failures, alloc %s: %s", failures, a.ClientStatus, jsonString(st.Events))
		}
		return nil
	})
}
