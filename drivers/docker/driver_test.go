package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/docker/dockertest"
	"github.com/droverhq/drover/structs"
)

// testTimeout bounds every wait in these tests.
const testTimeout = 60 * time.Second

// env is a test's daemon, image and node.
type env struct {
	t      *testing.T
	cli    *client.Client
	image  string
	nodeID string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	cli := dockertest.Client(t)
	e := &env{t: t, cli: cli, image: dockertest.BusyboxImage(t, cli), nodeID: structs.GenerateUUID()}
	// Whatever a test leaves behind under its node ID goes.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		list, _ := cli.ContainerList(ctx, container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", LabelNodeID+"="+e.nodeID))})
		for _, c := range list {
			_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		}
	})
	return e
}

// driver returns a driver closed at the end of the test.
func (e *env) driver() *Driver {
	d := New(Options{})
	e.t.Cleanup(func() { d.Close() })
	return d
}

// task returns a task config running the test image with a shell
// script, in an allocation directory of its own.
func (e *env) task(name, script string) *drivers.TaskConfig {
	e.t.Helper()
	root := e.t.TempDir()
	taskDir := filepath.Join(root, name)
	allocDir := filepath.Join(root, "alloc")
	for _, d := range []string{filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets"), filepath.Join(allocDir, "logs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	allocID := structs.GenerateUUID()
	return &drivers.TaskConfig{
		AllocID: allocID, TaskName: name, JobID: "job-" + name, JobName: "job-" + name, Namespace: "default",
		TaskGroup: "g", NodeID: e.nodeID, NodeName: "test-node",
		TaskDir: taskDir, AllocDir: allocDir,
		Env: map[string]string{"NOMAD_TASK_DIR": ContainerTaskDir, "NOMAD_ALLOC_ID": allocID},
		Config: map[string]any{
			"image": e.image, "command": "/bin/sh", "args": []any{"-c", script},
		},
		StdoutPath:  filepath.Join(allocDir, "logs", name+".stdout"),
		StderrPath:  filepath.Join(allocDir, "logs", name+".stderr"),
		LogConfig:   *structs.DefaultLogConfig(),
		KillTimeout: 5 * time.Second, KillSignal: "SIGTERM",
		NetworkMode: "host",
	}
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	h, err := d.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Destroy(h) })
	return h
}

func waitExit(t *testing.T, d *Driver, h *drivers.TaskHandle) drivers.ExitResult {
	t.Helper()
	ch, err := d.Wait(h)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-ch:
		return r
	case <-time.After(testTimeout):
		t.Fatal("task did not exit")
	}
	return drivers.ExitResult{}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func containerID(t *testing.T, h *drivers.TaskHandle) string {
	t.Helper()
	var st handleState
	if err := h.GetDriverState(&st); err != nil {
		t.Fatal(err)
	}
	return st.ContainerID
}

// eventually retries f until it succeeds or the test timeout passes.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestFingerprintReportsTheDaemon(t *testing.T) {
	e := newEnv(t)
	fp := e.driver().Fingerprint()
	if !fp.Healthy || fp.Undetected {
		t.Fatalf("fingerprint %+v, want healthy", fp)
	}
	v, err := e.cli.ServerVersion(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fp.Attributes["driver.docker"] != "1" || fp.Attributes["driver.docker.version"] != v.Version {
		t.Fatalf("attributes %v, want driver.docker=1 and version %s", fp.Attributes, v.Version)
	}
	if _, ok := fp.Attributes["driver.docker.volumes.enabled"]; ok {
		t.Fatal("volumes reported enabled by default")
	}
}

// TestFingerprintWithoutDaemon needs no daemon: the endpoint is a socket
// that does not exist.
func TestFingerprintWithoutDaemon(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "no-docker.sock")
	d := New(Options{Endpoint: "unix://" + sock, PingTimeout: 2 * time.Second})
	defer d.Close()
	fp := d.Fingerprint()
	if fp.Healthy || !fp.Undetected {
		t.Fatalf("fingerprint %+v, want undetected and unhealthy", fp)
	}
	if !strings.Contains(fp.HealthDescription, sock) {
		t.Fatalf("description %q does not name the endpoint", fp.HealthDescription)
	}
	if len(fp.Attributes) != 0 {
		t.Fatalf("attributes %v without a daemon", fp.Attributes)
	}
	cfg := &drivers.TaskConfig{AllocID: "a", TaskName: "t", Config: map[string]any{"image": "x"}}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := d.Start(ctx, cfg); !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("Start without a daemon: %v, want ErrStartFailed", err)
	}
}

func TestExitCodeEnvAndLogs(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("web", `echo "$GREETING from $NOMAD_TASK_DIR in $(pwd)"; echo oops >&2; exit 3`)
	cfg.Env["GREETING"] = "hello"
	cfg.Config["work_dir"] = "/tmp"
	h := start(t, d, cfg)
	r := waitExit(t, d, h)
	if r.ExitCode != 3 || r.Unknown || r.Err != nil || r.OOMKilled || r.Successful() {
		t.Fatalf("exit %+v, want code 3", r)
	}
	if got := readFile(t, cfg.StdoutPath+".0"); got != "hello from /local in /tmp\n" {
		t.Fatalf("stdout %q", got)
	}
	if got := readFile(t, cfg.StderrPath+".0"); got != "oops\n" {
		t.Fatalf("stderr %q", got)
	}
}

func TestLabelsAndNoHostEnvironment(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("labels", `env; sleep 30`)
	cfg.Config["labels"] = []any{map[string]any{"team": "web"}}
	h := start(t, d, cfg)
	c, err := e.cli.ContainerInspect(context.Background(), containerID(t, h))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"team": "web", LabelAllocID: cfg.AllocID, LabelTaskName: "labels", LabelJobName: "job-labels",
		LabelJobID: "job-labels", LabelGroup: "g", LabelNamespace: "default", LabelNodeID: e.nodeID,
		LabelNodeIDNmd: e.nodeID, LabelNodeName: "test-node",
	}
	for k, v := range want {
		if c.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Config.Labels[k], v)
		}
	}
	if c.Name != "/labels-"+cfg.AllocID {
		t.Errorf("container name %q", c.Name)
	}
	for _, kv := range c.Config.Env {
		if strings.HasPrefix(kv, "HOME=/root") || strings.Contains(kv, "/usr/local/go") {
			t.Errorf("host variable %q leaked into the container", kv)
		}
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestPortsArePublishedOnTheHostPort(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("http", `echo "served by $NOMAD_ALLOC_ID" > /local/index.html; exec httpd -f -p 80 -h /local`)
	host := freePort(t)
	cfg.Ports = []structs.PortMapping{{Label: "http", Value: host, To: 80, HostIP: "127.0.0.1"}}
	cfg.Config["ports"] = []any{"http"}
	h := start(t, d, cfg)
	url := fmt.Sprintf("http://127.0.0.1:%d/", host)
	eventually(t, "GET "+url, func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(b) != "served by "+cfg.AllocID+"\n" {
			return fmt.Errorf("HTTP %d %q", resp.StatusCode, b)
		}
		return nil
	})
	c, err := e.cli.ContainerInspect(context.Background(), containerID(t, h))
	if err != nil {
		t.Fatal(err)
	}
	for port, bs := range c.HostConfig.PortBindings {
		for _, b := range bs {
			if port.Int() != 80 || b.HostIP != "127.0.0.1" || b.HostPort != fmt.Sprint(host) {
				t.Errorf("binding %s -> %s:%s", port, b.HostIP, b.HostPort)
			}
		}
	}
}

func TestKillSignalThenKillTimeout(t *testing.T) {
	e := newEnv(t)
	d := e.driver()

	// The task traps its kill_signal and exits on it.
	cfg := e.task("trap", `trap 'echo caught USR1; exit 7' USR1; echo ready; while true; do sleep 0.1; done`)
	cfg.KillSignal = "SIGUSR1"
	h := start(t, d, cfg)
	eventually(t, "the task to be ready", func() error {
		if b, _ := os.ReadFile(cfg.StdoutPath + ".0"); !strings.Contains(string(b), "ready") {
			return errors.New("not yet")
		}
		return nil
	})
	if err := d.Stop(h, 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h); r.ExitCode != 7 {
		t.Fatalf("exit %+v, want 7 from the trap", r)
	}
	if got := readFile(t, cfg.StdoutPath+".0"); !strings.Contains(got, "caught USR1") {
		t.Fatalf("stdout %q", got)
	}

	// A task that ignores the signal is killed after the timeout.
	cfg2 := e.task("stubborn", `trap '' TERM; echo ready; while true; do sleep 0.1; done`)
	h2 := start(t, d, cfg2)
	eventually(t, "the task to be ready", func() error {
		if b, _ := os.ReadFile(cfg2.StdoutPath + ".0"); !strings.Contains(string(b), "ready") {
			return errors.New("not yet")
		}
		return nil
	})
	if err := d.Stop(h2, 300*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h2); r.ExitCode != 137 {
		t.Fatalf("exit %+v, want 137 (SIGKILL)", r)
	}
}

// TestOOMKilled: a task past its memory limit is killed by the kernel
// (exit 137), and the driver reports the kill as the daemon does
// (State.OOMKilled), which the task runner turns into the Terminated
// event's "OOM Killed" (client/taskrunner TestOOMKilledTaskEvent). On a
// cgroup v1 host the daemon hears of every OOM kill through the memory
// controller, so the flag must be set there; on some cgroup v2 hosts the
// daemon does not hear of it (website/drivers/docker.md), and the driver
// must then not guess it from the exit code either.
//
// On cgroup v1, containerd's shim starts watching the container's memory
// controller only after the task has started; a task killed before that
// goes unreported (the daemon's StartedAt after its FinishedAt). The task
// therefore allocates only once the driver's Start has returned: the
// daemon answers the start after the shim's.
func TestOOMKilled(t *testing.T) {
	e := newEnv(t)
	info, err := e.cli.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !info.MemoryLimit {
		if os.Getenv(dockertest.RequireEnv) == "1" {
			t.Fatalf("the daemon's kernel does not support memory limits (%s=1 requires them)", dockertest.RequireEnv)
		}
		t.Skipf("the daemon's kernel does not support memory limits; set %s=1 to make this a failure", dockertest.RequireEnv)
	}
	v2, version := cgroupV2(info.CgroupVersion), "1"
	if v2 {
		version = "2"
	}
	t.Logf("cgroup v%s (the daemon says %q, cgroup driver %s)", version, info.CgroupVersion, info.CgroupDriver)

	d := e.driver()
	cfg := e.task("oom", `while [ ! -e /local/go ]; do sleep 0.05; done; exec dd if=/dev/zero of=/dev/null bs=128M count=1`)
	cfg.Resources = &structs.AllocatedTaskResources{Memory: structs.AllocatedMemoryResources{MemoryMB: 16}}
	h := start(t, d, cfg)
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := waitExit(t, d, h)
	if r.ExitCode != 137 {
		t.Fatalf("exit %+v, want 137: the kernel kills the task past its 16 MB", r)
	}
	c, err := e.cli.ContainerInspect(context.Background(), containerID(t, h))
	if err != nil {
		t.Fatal(err)
	}
	if c.HostConfig.Memory != 16<<20 {
		t.Fatalf("memory limit %d", c.HostConfig.Memory)
	}
	if r.OOMKilled != c.State.OOMKilled {
		t.Fatalf("the driver reports OOMKilled %t, the daemon %t", r.OOMKilled, c.State.OOMKilled)
	}
	switch {
	case r.OOMKilled:
	case !v2:
		t.Fatalf("cgroup v1: the OOM kill is not reported (exit %+v; daemon state %+v)", r, c.State)
	default:
		t.Logf("cgroup v2: the daemon did not report the OOM kill (exit %+v): the driver reports no OOM kill either", r)
	}
}

// cgroupV2 reports whether the daemon's host runs cgroup v2: as the daemon
// says (Info.CgroupVersion), or, from an older daemon, as this machine's
// /sys/fs/cgroup says (cgroup.controllers exists only at a v2 root).
func cgroupV2(daemonVersion string) bool {
	if daemonVersion != "" {
		return daemonVersion == "2"
	}
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// TestRecoverReattachesToTheRunningContainer: a new driver (a restarted
// client) follows the same container from its handle, starts none, and
// catches up the output written while no driver followed it.
func TestRecoverReattachesToTheRunningContainer(t *testing.T) {
	e := newEnv(t)
	d1 := New(Options{})
	cfg := e.task("long", `echo first; while [ ! -e /local/go ]; do sleep 0.1; done; echo second; trap 'exit 0' TERM; while true; do sleep 0.1; done`)
	h, err := d1.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "first line", func() error {
		if b, _ := os.ReadFile(cfg.StdoutPath + ".0"); string(b) != "first\n" {
			return fmt.Errorf("stdout %q", b)
		}
		return nil
	})
	d1.Close() // the client dies; the container keeps running
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// "second" is written while nobody follows.
	time.Sleep(500 * time.Millisecond)

	d2 := e.driver()
	if err := d2.Recover(h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d2.Destroy(h) })
	list, err := e.cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelAllocID+"="+cfg.AllocID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID != containerID(t, h) || list[0].State != "running" {
		t.Fatalf("containers after recovery: %+v", list)
	}
	eventually(t, "the output written meanwhile", func() error {
		if b, _ := os.ReadFile(cfg.StdoutPath + ".0"); string(b) != "first\nsecond\n" {
			return fmt.Errorf("stdout %q", b)
		}
		return nil
	})
	if err := d2.Stop(h, 30*time.Second, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d2, h); !r.Successful() {
		t.Fatalf("exit %+v", r)
	}
}

// TestRecoverKnowsTheExitCodeOfAContainerThatEndedMeanwhile.
func TestRecoverKnowsTheExitCodeOfAContainerThatEndedMeanwhile(t *testing.T) {
	e := newEnv(t)
	d1 := New(Options{})
	cfg := e.task("brief", `while [ ! -e /local/go ]; do sleep 0.1; done; exit 5`)
	h, err := d1.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	d1.Close()
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	id := containerID(t, h)
	eventually(t, "the container to exit", func() error {
		c, err := e.cli.ContainerInspect(context.Background(), id)
		if err != nil {
			return err
		}
		if c.State.Running {
			return errors.New("still running")
		}
		return nil
	})
	d2 := e.driver()
	if err := d2.Recover(h); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d2, h); r.ExitCode != 5 || r.Unknown {
		t.Fatalf("exit %+v, want a known 5", r)
	}
	if err := d2.Destroy(h); err != nil {
		t.Fatal(err)
	}
	if _, err := e.cli.ContainerInspect(context.Background(), id); !cerrdefs.IsNotFound(err) {
		t.Fatalf("container after Destroy: %v", err)
	}
	if err := d2.Recover(h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("Recover of a removed container: %v, want ErrTaskNotFound", err)
	}
}

func TestReapOrphansRemovesOnlyThisNodesUnownedContainers(t *testing.T) {
	e := newEnv(t)
	d1 := New(Options{})
	kept := e.task("kept", `sleep 60`)
	orphan := e.task("orphan", `sleep 60`)
	other := e.task("other", `sleep 60`)
	other.NodeID = structs.GenerateUUID() // another client on the same daemon
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		list, _ := e.cli.ContainerList(ctx, container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", LabelNodeID+"="+other.NodeID))})
		for _, c := range list {
			_ = e.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		}
	})
	var handles []*drivers.TaskHandle
	for _, cfg := range []*drivers.TaskConfig{kept, orphan, other} {
		h, err := d1.Start(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		handles = append(handles, h)
	}
	d1.Close()

	d2 := e.driver()
	removed, err := d2.ReapOrphans(context.Background(), e.nodeID, func(allocID string) bool { return allocID == kept.AllocID })
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != "orphan-"+orphan.AllocID {
		t.Fatalf("removed %v, want only the orphan", removed)
	}
	for i, want := range []bool{true, false, true} {
		_, err := e.cli.ContainerInspect(context.Background(), containerID(t, handles[i]))
		if exists := err == nil; exists != want {
			t.Errorf("container %d exists=%v, want %v (%v)", i, exists, want, err)
		}
	}
}

func TestMissingImageFailsTheStartWithTheReason(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("missing", "true")
	cfg.Config["image"] = "drover-test/no-such-image:1"
	cfg.Config["image_pull_timeout"] = "20s"
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	_, err := d.Start(ctx, cfg)
	if !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("Start: %v, want ErrStartFailed", err)
	}
	if !strings.Contains(err.Error(), `failed to pull image "drover-test/no-such-image:1" (it is not present on this node)`) {
		t.Fatalf("error %q does not say why", err)
	}
	list, _ := e.cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelAllocID+"="+cfg.AllocID))})
	if len(list) != 0 {
		t.Fatalf("a container was created: %+v", list)
	}
}

func TestVolumesStayInTheAllocationUnlessEnabled(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("vol", `echo written > /data/out; echo shared > /shared/out`)
	cfg.Config["volumes"] = []any{"data:/data", "../alloc/data:/shared"}
	h := start(t, d, cfg)
	if r := waitExit(t, d, h); !r.Successful() {
		t.Fatalf("exit %+v: %s", r, readFile(t, cfg.StderrPath+".0"))
	}
	if got := readFile(t, filepath.Join(cfg.TaskDir, "data", "out")); got != "written\n" {
		t.Fatalf("data/out %q", got)
	}
	if got := readFile(t, filepath.Join(cfg.AllocDir, "data", "out")); got != "shared\n" {
		t.Fatalf("alloc/data/out %q", got)
	}

	refused := e.task("hostpath", "true")
	refused.Config["volumes"] = []any{"/etc:/host-etc:ro"}
	if _, err := d.Start(context.Background(), refused); !errors.Is(err, errVolumesDisabled) {
		t.Fatalf("Start with a host path: %v, want errVolumesDisabled", err)
	}
	// A symlink in the task dir that points outside is refused too.
	escape := e.task("symlink", "true")
	if err := os.Symlink("/etc", filepath.Join(escape.TaskDir, "etc")); err != nil {
		t.Fatal(err)
	}
	escape.Config["volumes"] = []any{"etc:/host-etc"}
	if _, err := d.Start(context.Background(), escape); !errors.Is(err, errVolumesDisabled) {
		t.Fatalf("Start with a symlink out: %v, want errVolumesDisabled", err)
	}
}

func TestRestartReplacesTheOldContainer(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("again", `echo run; exit 1`)
	h1 := start(t, d, cfg)
	waitExit(t, d, h1)
	// The task runner destroys a task before it restarts it; a container
	// left behind under the same name (a crash between the two) is
	// replaced too.
	d2 := e.driver()
	h2 := start(t, d2, cfg)
	waitExit(t, d2, h2)
	if containerID(t, h1) == containerID(t, h2) {
		t.Fatal("the same container ran twice")
	}
	if got := readFile(t, cfg.StdoutPath+".0"); got != "run\nrun\n" {
		t.Fatalf("stdout %q", got)
	}
}

func TestExecRunsInsideTheContainer(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("exec", `echo inside > /tmp/marker; sleep 60`)
	cfg.Env["CHECK_ME"] = "from-the-task"
	h := start(t, d, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	var out []byte
	var code int
	eventually(t, "exec to see the task's file", func() error {
		var err error
		out, code, err = d.Exec(ctx, h, []string{"/bin/sh", "-c", `cat /tmp/marker; echo "$CHECK_ME" >&2; exit 4`})
		if err != nil {
			return err
		}
		if string(out) != "inside\nfrom-the-task\n" {
			return fmt.Errorf("output %q", out)
		}
		return nil
	})
	if code != 4 {
		t.Fatalf("exit code %d, want 4", code)
	}

	// A command that outlives its deadline is killed and says so.
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, _, err := d.Exec(short, h, []string{"/bin/sleep", "30"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Exec past its deadline: %v", err)
	}
	c, err := e.cli.ContainerInspect(context.Background(), containerID(t, h))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the timed-out command to be gone", func() error {
		top, err := e.cli.ContainerTop(context.Background(), c.ID, nil)
		if err != nil {
			return err
		}
		for _, p := range top.Processes {
			if strings.Contains(strings.Join(p, " "), "sleep 30") {
				return fmt.Errorf("still running: %v", p)
			}
		}
		return nil
	})
}

func TestStatsOfARunningContainer(t *testing.T) {
	e := newEnv(t)
	d := e.driver()
	cfg := e.task("busy", `i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; echo done; sleep 60`)
	cfg.Resources = &structs.AllocatedTaskResources{Memory: structs.AllocatedMemoryResources{MemoryMB: 64}}
	h := start(t, d, cfg)
	eventually(t, "the busy loop to end", func() error {
		if b, _ := os.ReadFile(cfg.StdoutPath + ".0"); string(b) != "done\n" {
			return errors.New("not yet")
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	u, err := d.Stats(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if u.Memory.Usage == 0 || u.Memory.Usage > 64<<20 || u.CPU.Total < 10*time.Millisecond || u.CPU.User+u.CPU.System == 0 {
		t.Fatalf("usage %+v", u)
	}
	if u.Timestamp.IsZero() || len(u.Memory.Measured) == 0 || u.Pids != nil {
		t.Fatalf("usage %+v", u)
	}
	if err := d.Stop(h, time.Second, "SIGKILL"); err != nil {
		t.Fatal(err)
	}
	waitExit(t, d, h)
	if _, err := d.Stats(ctx, h); !errors.Is(err, drivers.ErrTaskNotFound) {
		t.Fatalf("Stats of an exited task: %v", err)
	}
}
