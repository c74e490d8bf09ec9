package docker

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// TestPropertyBindSourcesStayInside makes random symlink layouts of the
// kind a task (or an artifact, or a sibling) can leave in local/ and
// alloc/, and random path-shaped bind sources — relative, absolute into
// the allocation, absolute on the host, with "..", links and meta-like
// fragments — as volumes strings and mount blocks. With docker volumes off
// (the default), every source the daemon would be handed is inside the
// allocation (or is a host volume the task mounts, exactly), and nothing
// is made or changed on the host outside it.
func TestPropertyBindSourcesStayInside(t *testing.T) {
	var built, refused int
	words := []string{"..", ".", "local", "alloc", "secrets", "x", "up", "root", "data", "etc", "new", "l1"}
	for seed := uint64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 11))
		taskDir, allocDir := taskDirs(t)
		root := filepath.Dir(taskDir)
		host := t.TempDir()
		hostVol := t.TempDir()
		os.WriteFile(filepath.Join(host, "marker"), []byte("host"), 0o644)
		for _, d := range []string{filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets"), filepath.Join(allocDir, "data")} {
			os.MkdirAll(d, 0o755)
		}
		targets := []string{"/", host, host + "/marker", "..", "../..", "../../..", "../../../..", "../alloc", "../../alloc/data", "data", root, root + "/web", "x"}
		for range 1 + rng.IntN(5) {
			dir := []string{"alloc", "web/local", "web/secrets", "alloc/data"}[rng.IntN(4)]
			name := []string{"x", "up", "root", "l1", "data"}[rng.IntN(5)]
			os.Symlink(targets[rng.IntN(len(targets))], filepath.Join(root, dir, name))
		}
		randSrc := func() string {
			parts := make([]string, 1+rng.IntN(4))
			for i := range parts {
				parts[i] = words[rng.IntN(len(words))]
			}
			p := strings.Join(parts, "/")
			switch rng.IntN(5) {
			case 0:
				return root + "/" + p
			case 1:
				return host + "/" + p
			case 2:
				return "/" + p
			}
			return p
		}
		var volumes []any
		var mounts []any
		for range 1 + rng.IntN(3) {
			volumes = append(volumes, randSrc()+":/d"+fmt.Sprint(len(volumes)))
		}
		if rng.IntN(2) == 0 {
			mounts = append(mounts, map[string]any{"type": "bind", "source": randSrc(), "target": "/m"})
		}
		cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "web", TaskDir: taskDir, AllocDir: allocDir,
			Config: map[string]any{"image": "img", "volumes": volumes},
			Mounts: []drivers.MountConfig{{TaskPath: "/hv", HostPath: hostVol}}}
		if mounts != nil {
			cfg.Config["mount"] = mounts
		}
		dc, errs := structs.ParseDockerConfig(cfg.Config)
		if len(errs) > 0 {
			continue // the job's validation refuses it before any client sees it
		}
		sp, err := buildSpec(cfg, dc, false)
		if es, _ := os.ReadDir(host); len(es) != 1 {
			t.Fatalf("seed %d: the host directory now holds %v (volumes %v, mounts %v)", seed, es, volumes, mounts)
		}
		if b, _ := os.ReadFile(filepath.Join(host, "marker")); string(b) != "host" {
			t.Fatalf("seed %d: the host's marker changed", seed)
		}
		if err != nil {
			refused++
			continue
		}
		built++
		inside := func(p string) bool {
			return p == filepath.Clean(hostVol) || p == root || strings.HasPrefix(p, root+"/")
		}
		for _, b := range sp.host.Binds {
			src, _, _ := strings.Cut(b, ":")
			if !inside(src) {
				t.Fatalf("seed %d: bind %q leaves the allocation (volumes %v)", seed, b, volumes)
			}
		}
		for _, m := range sp.host.Mounts {
			if m.Type == mount.TypeBind && !inside(m.Source) {
				t.Fatalf("seed %d: mount of %q leaves the allocation (mounts %v)", seed, m.Source, mounts)
			}
		}
	}
	// Both outcomes must occur, or the property says nothing.
	if built < 20 || refused < 20 {
		t.Fatalf("%d specs built, %d refused: the generator needs widening", built, refused)
	}
}
