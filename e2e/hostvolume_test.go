package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/jobspec"
	"github.com/droverhq/drover/structs"
)

// TestDockerHostVolumeOutlivesItsAlloc runs a docker task on a dev agent
// whose client offers a host_volume (from a -config file): the node
// reports it, the task's volume_mount binds it, each allocation appends a
// line to a file there and prints what it found. A second version of the
// job replaces the allocation (stop, then place), and the new container
// reads what the old one wrote. A job asking for a volume no node offers
// is not placed, and its failed placement names Nomad's "missing
// compatible host volumes". It needs a Docker daemon (skipped without
// one unless DROVER_REQUIRE_DOCKER=1).
func TestDockerHostVolumeOutlivesItsAlloc(t *testing.T) {
	cli := dockertest.Client(t)
	image := dockertest.BusyboxImage(t, cli)
	hostDir := t.TempDir()
	if err := os.Chmod(hostDir, 0o777); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(t.TempDir(), "client.hcl")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf("client {\n  host_volume \"shared\" {\n    path = %q\n  }\n}\n", hostDir)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startDevAgent(t, "-config", cfgPath)
	c := p.client()
	node := devNodeID(t, c)
	t.Cleanup(func() { removeNodeContainers(cli, node) })

	n, _, err := c.Nodes().Info(ctx(t), node, nil)
	if err != nil {
		t.Fatal(err)
	}
	if hv := n.HostVolumes["shared"]; hv == nil || hv.Path != hostDir || hv.ReadOnly {
		t.Fatalf("node host volumes %s, want shared at %s", jsonString(n.HostVolumes), hostDir)
	}

	job := func(version, source string) *structs.Job {
		t.Helper()
		src := fmt.Sprintf(`job "vol" {
  group "g" {
    volume "data" {
      type   = "host"
      source = %q
    }
    update {
      max_parallel     = 1
      min_healthy_time = "1s"
    }
    task "app" {
      driver = "docker"
      config {
        image   = %q
        command = "/bin/sh"
        args    = ["-c", "cat /data/log 2>/dev/null; echo %s >> /data/log; exec sleep 300"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`, source, image, version)
		j, _, err := jobspec.Parse("vol.hcl", []byte(src), jobspec.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	logFile := filepath.Join(hostDir, "log")
	waitLog := func(want string, jv uint64) {
		t.Helper()
		eventually(t, 60*time.Second, "the host volume's log reads "+strings.ReplaceAll(want, "\n", "|"), func() error {
			allocs, err := jobAllocs(t, c, "vol")
			if err != nil {
				return err
			}
			if run := runningAllocs(allocs, jv); len(run) != 1 {
				return fmt.Errorf("%d running at version %d", len(run), jv)
			}
			b, err := os.ReadFile(logFile)
			if err != nil {
				return err
			}
			if string(b) != want {
				return fmt.Errorf("log %q", b)
			}
			return nil
		})
	}
	registerJob(t, c, job("v1", "shared"))
	waitLog("v1\n", 0)
	allocs, _ := jobAllocs(t, c, "vol")
	first := runningAllocs(allocs, 0)[0]

	registerJob(t, c, job("v2", "shared"))
	waitLog("v1\nv2\n", 1)
	allocs, _ = jobAllocs(t, c, "vol")
	second := runningAllocs(allocs, 1)[0]
	if second == first {
		t.Fatalf("version 2 runs in the first allocation %s; want a replacement", first)
	}
	// The new container read what the old one wrote, before adding its line.
	eventually(t, 30*time.Second, "the second allocation's output", func() error {
		out, err := p.cli(t, "alloc", "logs", second, "app")
		if err != nil || out != "v1\n" {
			return fmt.Errorf("logs %q %v", out, err)
		}
		return nil
	})

	// A volume nobody offers: nothing placed, and the reason named.
	missing := job("v1", "nowhere")
	missing.ID, missing.Name = "novol", "novol"
	registerJob(t, c, missing)
	eventually(t, 30*time.Second, "the failed placement of novol", func() error {
		evals, _, err := c.Jobs().Evaluations(ctx(t), "novol", nil)
		if err != nil {
			return err
		}
		for _, e := range evals {
			if m := e.FailedTGAllocs["g"]; m != nil && m.ConstraintFiltered["missing compatible host volumes"] == 1 {
				return nil
			}
		}
		return fmt.Errorf("evaluations %s", jsonString(evals))
	})
}
