package docker

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"

	"github.com/droverhq/drover/drivers"
)

// A bind source is resolved, symlinks included, inside the allocation's
// directory when the container is made: a link that a task, an artifact
// or a sibling put in local/ or alloc/ and that leads out is refused, and
// the daemon is handed the resolved path, never the task's link. Nothing
// is made on the host through a link.
func TestBindSourceSymlinks(t *testing.T) {
	hostDir := t.TempDir()
	marker := filepath.Join(hostDir, "marker")
	if err := os.WriteFile(marker, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hostVol := t.TempDir()
	for _, tc := range []struct {
		name    string
		links   map[string]string // path under the allocation: link target
		volumes []any
		mount   map[string]any
		enabled bool
		mounts  []drivers.MountConfig
		want    error
		bind    string // the resolved source, under the allocation ("" with want)
		abs     string // or this absolute source
		ro      bool
	}{
		{name: "local link out", links: map[string]string{"web/local/x": hostDir}, volumes: []any{"local/x:/d"}, want: errVolumesDisabled},
		{name: "local link to the marker", links: map[string]string{"web/local/m": marker}, volumes: []any{"local/m:/d"}, want: errVolumesDisabled},
		{name: "alloc link to /", links: map[string]string{"alloc/x": "/"}, volumes: []any{"../alloc/x:/d"}, want: errVolumesDisabled},
		{name: "absolute path through alloc link to /", links: map[string]string{"alloc/x": "/"}, volumes: []any{"{alloc}/alloc/x:/d"}, want: errVolumesDisabled},
		{name: "absolute path below an alloc link", links: map[string]string{"alloc/x": "/"}, volumes: []any{"{alloc}/alloc/x/etc:/d"}, want: errVolumesDisabled},
		{name: "relative link climbing out", links: map[string]string{"alloc/x": "../../../../../../../../.."}, volumes: []any{"../alloc/x:/d"}, want: errVolumesDisabled},
		{name: "chain out", links: map[string]string{"web/local/a": "../../alloc/b", "alloc/b": hostDir}, volumes: []any{"local/a:/d"}, want: errVolumesDisabled},
		{name: "missing leaf below a link out", links: map[string]string{"web/local/out": hostDir}, volumes: []any{"local/out/new:/d"}, want: errVolumesDisabled},
		{name: "mount bind through alloc link", links: map[string]string{"alloc/x": "/"}, mount: map[string]any{"type": "bind", "source": "../alloc/x", "target": "/d"}, want: errVolumesDisabled},
		{name: "mount bind absolute through alloc link", links: map[string]string{"alloc/x": "/"}, mount: map[string]any{"type": "bind", "source": "{alloc}/alloc/x", "target": "/d"}, want: errVolumesDisabled},
		{name: "link inside", links: map[string]string{"web/local/s": "../../alloc/data"}, volumes: []any{"local/s:/d"}, bind: "alloc/data"},
		{name: "absolute link inside", links: map[string]string{"alloc/s": "{alloc}/web/local"}, volumes: []any{"../alloc/s:/d"}, want: errVolumesDisabled},
		{name: "missing made inside", volumes: []any{"local/new/dir:/d"}, bind: "web/local/new/dir"},
		{name: "host volume named exactly", volumes: []any{hostVol + ":/d"}, mounts: []drivers.MountConfig{{TaskPath: "/hv", HostPath: hostVol}}, abs: hostVol},
		{name: "read-only host volume stays read-only", volumes: []any{hostVol + ":/d"}, mounts: []drivers.MountConfig{{TaskPath: "/hv", HostPath: hostVol, Readonly: true}}, abs: hostVol, ro: true},
		{name: "below a host volume", volumes: []any{hostVol + "/sub:/d"}, mounts: []drivers.MountConfig{{TaskPath: "/hv", HostPath: hostVol}}, want: errVolumesDisabled},
		{name: "enabled: host path", volumes: []any{hostDir + ":/d"}, enabled: true, abs: hostDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			taskDir, allocDir := taskDirs(t)
			root := filepath.Dir(taskDir)
			if err := os.MkdirAll(filepath.Join(taskDir, "local"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(allocDir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			fill := func(s string) string { return strings.ReplaceAll(s, "{alloc}", root) }
			for p, target := range tc.links {
				if err := os.Symlink(fill(target), filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}
			cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "web", TaskDir: taskDir, AllocDir: allocDir,
				Config: map[string]any{"image": "img"}, Mounts: tc.mounts}
			if tc.volumes != nil {
				var vs []any
				for _, v := range tc.volumes {
					vs = append(vs, fill(v.(string)))
				}
				cfg.Config["volumes"] = vs
			}
			if tc.mount != nil {
				m := map[string]any{}
				for k, v := range tc.mount {
					m[k] = v
					if s, ok := v.(string); ok {
						m[k] = fill(s)
					}
				}
				cfg.Config["mount"] = []any{m}
			}
			sp, err := specFor(t, cfg, tc.enabled)
			if b, _ := os.ReadFile(marker); string(b) != "host\n" {
				t.Fatalf("marker now %q", b)
			}
			if es, _ := os.ReadDir(hostDir); len(es) != 1 {
				t.Fatalf("host dir holds %v", es)
			}
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Fatalf("error %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tc.abs
			if tc.bind != "" {
				want = filepath.Join(root, tc.bind)
			}
			var sources []string
			var ro bool
			for _, b := range sp.host.Binds {
				src, rest, _ := strings.Cut(b, ":")
				sources = append(sources, src)
				if src == want {
					ro = rest == "/d:ro"
				}
			}
			for _, m := range sp.host.Mounts {
				if m.Type == mount.TypeBind {
					sources = append(sources, m.Source)
				}
			}
			if !slices.Contains(sources, want) {
				t.Fatalf("binds %v, want %s", sources, want)
			}
			if ro != tc.ro {
				t.Fatalf("binds %v: read-only %v, want %v", sp.host.Binds, ro, tc.ro)
			}
		})
	}
}
