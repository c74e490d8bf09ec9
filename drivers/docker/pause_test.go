package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/image"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/structs"
)

// The pause image's file system: busybox, its sh and sleep, /tmp.
func TestPauseRootfs(t *testing.T) {
	b, err := PauseRootfs([]byte("BUSYBOX"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		got[h.Name] = fmt.Sprintf("%c %o %s%s", h.Typeflag, h.Mode, h.Linkname, body)
	}
	want := map[string]string{
		"bin/": "5 755 ", "bin/busybox": "0 755 BUSYBOX", "bin/sh": "2 777 busybox", "bin/sleep": "2 777 busybox", "tmp/": "5 1777 ",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	ch := strings.Join(pauseImageChanges(), "\n")
	if !strings.Contains(ch, `CMD ["/bin/sh","-c","trap 'exit 0' TERM INT;`) || !strings.Contains(ch, "LABEL "+PauseLabel+"=") {
		t.Fatalf("changes %s", ch)
	}
}

// A task of a bridge group the docker driver networks joins the pause
// container: network mode container:<ID>, no port of its own published
// (the client maps the group's), no hostname of its own. A task with
// its own network_mode keeps it, as Nomad's.
func TestSpecJoinsThePauseContainer(t *testing.T) {
	ports := []structs.PortMapping{{Label: "http", Value: 23001, To: 80, HostIP: "127.0.0.1"}}
	cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "t", Ports: ports, NetworkMode: "bridge", NetNSPath: "/run/docker/netns/x",
		NetworkContainerID: "abc123", Config: map[string]any{"image": "img", "ports": []any{"http"}}}
	sp, err := specFor(t, cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if sp.host.NetworkMode != "container:abc123" || len(sp.host.PortBindings) != 0 || len(sp.config.ExposedPorts) != 0 {
		t.Fatalf("network %q bindings %v exposed %v", sp.host.NetworkMode, sp.host.PortBindings, sp.config.ExposedPorts)
	}
	cfg.Config["network_mode"] = "bridge"
	if sp, err = specFor(t, cfg, false); err != nil || sp.host.NetworkMode != "bridge" || len(sp.host.PortBindings) != 2 {
		t.Fatalf("own network_mode: %v %q %v", err, sp.host.NetworkMode, sp.host.PortBindings)
	}
	delete(cfg.Config, "network_mode")
	cfg.Config["hostname"] = "web"
	if _, err := specFor(t, cfg, false); err == nil || !errors.Is(err, drivers.ErrInvalidConfig) || !strings.Contains(err.Error(), "hostname") {
		t.Fatalf("hostname: %v", err)
	}
}

// Without busybox the default pause image cannot be built: the error
// says what to install or set.
func TestPauseImageNeedsBusybox(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	old := pauseBusybox
	pauseBusybox = filepath.Join(t.TempDir(), "busybox")
	t.Cleanup(func() { pauseBusybox = old })
	err := d.buildPauseImage(context.Background(), "drover-test/pause:never")
	if err == nil || !strings.Contains(err.Error(), "busybox-static") || !strings.Contains(err.Error(), "infra_image") {
		t.Fatalf("error %v", err)
	}
}

func netnsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// The pause container: built from the local image, named and labelled
// as Nomad's, network mode none; a second CreateNetwork finds it
// (created false); a task joins its namespace; SIGTERM ends it at once;
// DestroyNetwork removes it; ReapOrphans removes one whose allocation
// is gone.
func TestPauseContainerHoldsTheNamespace(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	// The image builds under a tag of the test's own (the default one is
	// built the same way, on demand).
	tag := "drover-test/pause:" + e.nodeID[:8]
	if err := d.buildPauseImage(ctx, tag); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = e.cli.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true}) })
	d.opts.InfraImage = tag

	cfg := e.task("web", "readlink /proc/self/ns/net")
	req := &drivers.NetworkRequest{AllocID: cfg.AllocID, JobID: cfg.JobID, JobName: cfg.JobName, Namespace: "default", TaskGroup: "g", NodeID: e.nodeID, NodeName: "test-node"}
	sb, created, err := d.CreateNetwork(ctx, req)
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	c, err := e.cli.ContainerInspect(ctx, PauseName(cfg.AllocID))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != sb.ContainerID || c.HostConfig.NetworkMode != "none" || c.Config.Image != tag ||
		c.Config.Labels[LabelAllocID] != cfg.AllocID || c.Config.Labels[LabelNodeID] != e.nodeID || c.HostConfig.RestartPolicy.Name != "unless-stopped" {
		t.Fatalf("pause container %+v %+v", c.Config, c.HostConfig)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(sb.NetNSPath, &fs); err != nil || fs.Type != 0x6e736673 { // NSFS_MAGIC
		t.Fatalf("%s is not a namespace: %v %x", sb.NetNSPath, err, fs.Type)
	}
	again, created, err := d.CreateNetwork(ctx, req)
	if err != nil || created || *again != *sb {
		t.Fatalf("second create: %+v %v %v, want %+v", again, created, err, sb)
	}

	// A task joins it.
	cfg.NetworkMode, cfg.NetNSPath, cfg.NetworkContainerID = "bridge", sb.NetNSPath, sb.ContainerID
	h := start(t, d, cfg)
	if r := waitExit(t, d, h); r.ExitCode != 0 {
		t.Fatalf("exit %+v", r)
	}
	want := fmt.Sprintf("net:[%d]", netnsInode(t, sb.NetNSPath))
	if got := strings.TrimSpace(readFile(t, cfg.StdoutPath+".0")); !strings.HasPrefix(got, want) {
		t.Fatalf("the task's namespace %q, the pause container's %s", got, want)
	}

	// SIGTERM ends the pause process at once, with status 0.
	began := time.Now()
	ten := 10
	if err := e.cli.ContainerStop(ctx, sb.ContainerID, container.StopOptions{Timeout: &ten}); err != nil {
		t.Fatal(err)
	}
	if c, err := e.cli.ContainerInspect(ctx, sb.ContainerID); err != nil || c.State.ExitCode != 0 || time.Since(began) > 5*time.Second {
		t.Fatalf("stop: %v exit %d after %s", err, c.State.ExitCode, time.Since(began))
	}
	// A stopped one is replaced.
	sb2, created, err := d.CreateNetwork(ctx, req)
	if err != nil || !created || sb2.ContainerID == sb.ContainerID {
		t.Fatalf("replace: %+v %v %v", sb2, created, err)
	}
	if err := d.DestroyNetwork(ctx, cfg.AllocID, e.nodeID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ContainerInspect(ctx, sb2.ContainerID); !cerrdefs.IsNotFound(err) {
		t.Fatalf("pause container left: %v", err)
	}
	if err := d.DestroyNetwork(ctx, cfg.AllocID, e.nodeID); err != nil {
		t.Fatalf("destroying none: %v", err)
	}

	// One left by an allocation that is gone goes with the orphans.
	req.AllocID = structs.GenerateUUID()
	if _, _, err := d.CreateNetwork(ctx, req); err != nil {
		t.Fatal(err)
	}
	removed, err := d.ReapOrphans(ctx, e.nodeID, func(string) bool { return false })
	if err != nil || len(removed) != 1 || removed[0] != PauseName(req.AllocID) {
		t.Fatalf("reaped %v %v", removed, err)
	}
}

// A container of the pause name that another node started is not
// touched.
func TestPauseContainerOfAnotherNode(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	allocID := structs.GenerateUUID()
	c, err := e.cli.ContainerCreate(ctx, &container.Config{Image: e.image, Cmd: []string{"sleep", "60"},
		Labels: map[string]string{LabelNodeID: e.nodeID}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, PauseName(allocID))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
	_, _, err = d.CreateNetwork(ctx, &drivers.NetworkRequest{AllocID: allocID, NodeID: "other-node"})
	if err == nil || !strings.Contains(err.Error(), "this node did not start") {
		t.Fatalf("create: %v", err)
	}
	if err := d.DestroyNetwork(ctx, allocID, "other-node"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ContainerInspect(ctx, c.ID); err != nil {
		t.Fatalf("another node's container removed: %v", err)
	}
}
