package java

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/drivers/exec/exectest"
	"github.com/droverhq/drover/structs"
)

// The test binary is re-executed as each task's init.
func init() { exec.Init() }

// testTimeout bounds every wait in these tests (a JVM starts in well
// under a second; two cores shared by many tests are slower).
const testTimeout = 60 * time.Second

// requireJava skips the test where the java driver cannot run (not root,
// no cgroups, no JVM), unless DROVER_REQUIRE_ISOLATION=1 makes that a
// failure.
func requireJava(t testing.TB) {
	t.Helper()
	exectest.Require(t, exec.Unsupported, func() string {
		if _, err := findJava("java"); err != nil {
			return err.Error() + " (Debian's default-jre-headless)"
		}
		return ""
	})
}

func newDriver(t testing.TB, o Options) *Driver {
	t.Helper()
	if o.StateDir == "" {
		o.StateDir = t.TempDir()
	}
	o.LogCheckInterval = 50 * time.Millisecond
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newTask lays out an allocation directory as the client does, with
// testdata's hello.jar and Hello.class in the task's local/, and returns
// the config of a java task with config.
func newTask(t testing.TB, config map[string]any) *drivers.TaskConfig {
	t.Helper()
	cfg := exectest.NewTask(t, config)
	cfg.KillTimeout = 5 * time.Second
	for _, f := range []string{"hello.jar", "Hello.class"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return cfg
}

func start(t *testing.T, d *Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	return exectest.Start(t, d, cfg, testTimeout)
}

func waitExit(t *testing.T, d *Driver, h *drivers.TaskHandle) drivers.ExitResult {
	t.Helper()
	return exectest.WaitExit(t, d, h, testTimeout)
}

func output(cfg *drivers.TaskConfig) string {
	b, _ := os.ReadFile(cfg.StdoutPath + ".0")
	e, _ := os.ReadFile(cfg.StderrPath + ".0")
	return string(b) + string(e)
}

// waitOutput waits until the task's stdout holds want.
func waitOutput(t *testing.T, cfg *drivers.TaskConfig, want string) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if strings.Contains(output(cfg), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("output never held %q: %q", want, output(cfg))
}

func TestParseVersion(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      Version
		ok        bool
	}{
		{"debian openjdk 17", "openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\nOpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)\n",
			Version{"17.0.15", "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)", "OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)"}, true},
		{"java 8 style", "java version \"1.8.0_402\"\nJava(TM) SE Runtime Environment (build 1.8.0_402-b07)\nJava HotSpot(TM) 64-Bit Server VM (build 25.402-b07, mixed mode)",
			Version{"1.8.0_402", "Java(TM) SE Runtime Environment (build 1.8.0_402-b07)", "Java HotSpot(TM) 64-Bit Server VM (build 25.402-b07, mixed mode)"}, true},
		{"options picked up first", "Picked up JAVA_TOOL_OPTIONS: -Xmx64m\nPicked up _JAVA_OPTIONS: -Xss1m\nopenjdk 21.0.2 2024-01-16 LTS\n  OpenJDK Runtime Environment Temurin-21.0.2+13 (build 21.0.2+13-LTS)\n  OpenJDK 64-Bit Server VM Temurin-21.0.2+13 (build 21.0.2+13-LTS, mixed mode)",
			Version{"21.0.2", "OpenJDK Runtime Environment Temurin-21.0.2+13 (build 21.0.2+13-LTS)", "OpenJDK 64-Bit Server VM Temurin-21.0.2+13 (build 21.0.2+13-LTS, mixed mode)"}, true},
		{"more lines (OpenJ9)", "openjdk version \"11.0.20\" 2023-07-18\nIBM Semeru Runtime Open Edition 11.0.20.0 (build 11.0.20+8)\nEclipse OpenJ9 VM 11.0.20.0 (build openj9-0.40.0, JRE 11 Linux amd64-64-Bit)\nOMR - 1\nJCL - 2",
			Version{"11.0.20", "IBM Semeru Runtime Open Edition 11.0.20.0 (build 11.0.20+8)", "Eclipse OpenJ9 VM 11.0.20.0 (build openj9-0.40.0, JRE 11 Linux amd64-64-Bit)"}, true},
		{"too short", "java: command not found\n", Version{}, false},
		{"empty", "", Version{}, false},
	} {
		got, ok := ParseVersion(c.out)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestArgs(t *testing.T) {
	c := &structs.JavaConfig{
		Class: "Hello", ClassPath: "local/a.jar:local/b.jar", JarPath: "local/app.jar",
		JvmOptions: []string{"-Xmx64m", "-Dx=y"}, Args: []string{"one", "two"},
	}
	want := []string{"-Xmx64m", "-Dx=y", "-cp", "local/a.jar:local/b.jar", "-jar", "local/app.jar", "Hello", "one", "two"}
	if got := Args(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("args %q, want %q", got, want)
	}
	if got := Args(&structs.JavaConfig{JarPath: "x.jar"}); !reflect.DeepEqual(got, []string{"-jar", "x.jar"}) {
		t.Fatalf("jar alone: %q", got)
	}
}

// TestConfigErrors: a bad block is refused before anything runs, each
// problem naming its key.
func TestConfigErrors(t *testing.T) {
	d := newDriver(t, Options{})
	for _, c := range []struct {
		config map[string]any
		want   string
	}{
		{map[string]any{}, "jar_path or class must be specified"},
		{map[string]any{"jar_path": "a.jar", "jvm_option": []any{"-Xmx1m"}}, "jvm_option is not a java driver option (did you mean jvm_options?)"},
		{map[string]any{"class": "Hello", "pid_mode": "shared"}, `pid_mode must be "private" or "host"`},
		{map[string]any{"class": "Hello", "work_dir": "local"}, "work_dir must be an absolute path"},
		{map[string]any{"class": "Hello", "cap_add": []any{"no_such_cap"}}, `cap_add names an unknown capability "no_such_cap"`},
		{map[string]any{"jar_path": 3}, "jar_path must be a string"},
	} {
		_, err := d.command(c.config)
		if !errors.Is(err, drivers.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.config, err, c.want)
		}
	}
}

// TestFingerprint: on a host with a JVM, Nomad's attributes from java
// -version; without one (or where exec cannot isolate), not detected,
// saying why, and tasks are refused.
func TestFingerprint(t *testing.T) {
	d := newDriver(t, Options{})
	fp := d.Fingerprint()
	if reason := exec.Unsupported(); reason != "" {
		if !fp.Undetected || !strings.Contains(fp.HealthDescription, reason) {
			t.Fatalf("unsupported host fingerprinted %+v", fp)
		}
	} else if _, err := findJava("java"); err == nil {
		if !fp.Healthy || fp.Attributes["driver.java"] != "1" || fp.Attributes["driver.java.version"] == "" ||
			fp.Attributes["driver.java.runtime"] == "" || fp.Attributes["driver.java.vm"] == "" {
			t.Fatalf("fingerprint %+v", fp)
		}
		if d.jvm == "" || !strings.HasPrefix(d.jvm, "/usr/") {
			t.Fatalf("the JVM inside a task's root: %q", d.jvm)
		}
	}

	none := newDriver(t, Options{Java: "/no/such/java"})
	fp = none.Fingerprint()
	if !fp.Undetected || fp.Healthy || fp.HealthDescription == "" || fp.Attributes["driver.java"] != "" {
		t.Fatalf("no JVM: %+v", fp)
	}
	cfg := newTask(t, map[string]any{"jar_path": "local/hello.jar"})
	if _, err := none.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) {
		t.Fatalf("a task without a JVM: %v", err)
	}
}

// TestFingerprintJVMOutsideChroot: a JVM that the client's chroot_env
// leaves out of a task's root is detected but unhealthy.
func TestFingerprintJVMOutsideChroot(t *testing.T) {
	requireJava(t)
	d := newDriver(t, Options{Options: exec.Options{ChrootEnv: map[string]string{"/bin": "/bin", "/etc": "/etc", "/lib": "/lib"}}})
	fp := d.Fingerprint()
	if fp.Undetected || fp.Healthy || !strings.Contains(fp.HealthDescription, "chroot_env") {
		t.Fatalf("fingerprint %+v", fp)
	}
	cfg := newTask(t, map[string]any{"jar_path": "local/hello.jar"})
	if _, err := d.Start(context.Background(), cfg); !errors.Is(err, drivers.ErrStartFailed) || !strings.Contains(err.Error(), "chroot_env") {
		t.Fatalf("start: %v", err)
	}
}

// TestRunsAJar: a jar_path relative to the task's directory runs in the
// JVM inside the task's isolation: as nobody, PID 1 of its own
// namespace, in its root (where a host file outside it is not), with its
// arguments, and its exit code is the task's.
func TestRunsAJar(t *testing.T) {
	requireJava(t)
	d := newDriver(t, Options{})
	secret := t.TempDir()
	if err := os.Chmod(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(secret, "marker")
	if err := os.WriteFile(marker, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := newTask(t, map[string]any{
		"jar_path":    "local/hello.jar",
		"jvm_options": []any{"-Xmx32m", "-Xss1m"},
		"args":        []any{"exists", "/local/hello.jar", "exists", marker, "exit", "3"},
	})
	r := waitExit(t, d, start(t, d, cfg))
	out := output(cfg)
	if r.ExitCode != 3 || r.Signal != 0 || r.Unknown {
		t.Fatalf("exit %+v, output %q", r, out)
	}
	for _, want := range []string{"hello from java exists /local/hello.jar", "user.name=nobody\n", "user.dir=/\n", "pid=1\n", "task_dir=/local\n",
		"exists /local/hello.jar=true\n", "exists " + marker + "=false\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q: %q", want, out)
		}
	}
	if mb := heapMB(t, out); mb > 32 {
		t.Errorf("jvm_options' -Xmx32m did not reach the JVM: a heap of %d MB", mb)
	}
}

// heapMB is the largest heap the test program's JVM chose, in MB.
func heapMB(t *testing.T, out string) int {
	t.Helper()
	i := strings.Index(out, "max_heap_mb=")
	if i < 0 {
		t.Fatalf("no heap size: %q", out)
	}
	var mb int
	fmt.Sscanf(out[i+len("max_heap_mb="):], "%d", &mb)
	return mb
}

// TestHeapFitsTheTask: a JVM given no heap size sizes it from the task's
// memory, which it reads from its cgroup (mounted read-only at
// /sys/fs/cgroup under cgroup v1), not from the host's.
func TestHeapFitsTheTask(t *testing.T) {
	requireJava(t)
	if exec.CgroupMode() == "v2" {
		t.Skip("under cgroup v2 a task has no /sys/fs/cgroup: its JVM sizes its heap from the host's memory")
	}
	d := newDriver(t, Options{})
	cfg := newTask(t, map[string]any{"jar_path": "local/hello.jar", "args": []any{"exit", "0"}})
	cfg.Resources.Memory.MemoryMB = 200
	if r := waitExit(t, d, start(t, d, cfg)); !r.Successful() {
		t.Fatalf("exit %+v, output %q", r, output(cfg))
	}
	if mb := heapMB(t, output(cfg)); mb <= 0 || mb >= 200 {
		t.Fatalf("the JVM's heap is %d MB in a task of 200 MB", mb)
	}
}

// TestRunsAClass: class and class_path, from a working directory of the
// task's choosing.
func TestRunsAClass(t *testing.T) {
	requireJava(t)
	d := newDriver(t, Options{})
	cfg := newTask(t, map[string]any{"class": "Hello", "class_path": ".", "work_dir": "/local", "args": []any{"exit", "0"}})
	if r := waitExit(t, d, start(t, d, cfg)); !r.Successful() {
		t.Fatalf("exit %+v, output %q", r, output(cfg))
	}
	if out := output(cfg); !strings.Contains(out, "hello from java exit 0\n") || !strings.Contains(out, "user.dir=/local\n") {
		t.Fatalf("output %q", out)
	}
}

// TestRunningJVM: a running JVM's usage is read from its cgroup, alloc
// exec runs inside its isolation, alloc signal reaches it, and a driver
// created anew (a restarted client) re-attaches to it and stops it,
// running its shutdown hooks.
func TestRunningJVM(t *testing.T) {
	requireJava(t)
	state := t.TempDir()
	d := newDriver(t, Options{Options: exec.Options{StateDir: state}})
	cfg := newTask(t, map[string]any{"jar_path": "local/hello.jar", "args": []any{"sleep", "600"}})
	h := start(t, d, cfg)
	waitOutput(t, cfg, "started")
	if h.Driver != Name {
		t.Fatalf("handle of driver %q", h.Driver)
	}

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	u, err := d.Stats(ctx, h)
	if err != nil || u.Memory.RSS == 0 && u.Memory.Usage == 0 {
		t.Fatalf("stats %+v %v", u, err)
	}
	out, code, err := d.Exec(ctx, h, []string{"/bin/sh", "-c", "id -u; ls /local"})
	if err != nil || code != 0 || !strings.HasPrefix(string(out), "65534\n") || !strings.Contains(string(out), "hello.jar") {
		t.Fatalf("exec: %d %q %v", code, out, err)
	}

	// alloc signal: SIGQUIT makes a JVM print its threads, and go on.
	if err := d.Signal(h, "SIGQUIT"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, cfg, "Full thread dump")

	d2 := newDriver(t, Options{Options: exec.Options{StateDir: state}})
	if err := d2.Recover(h); err != nil {
		t.Fatal(err)
	}
	if err := d2.Stop(h, testTimeout, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d2, h); !r.Unknown {
		t.Fatalf("a re-attached task's exit: %+v", r)
	}
	waitOutput(t, cfg, "stopping")
	if entries, _ := os.ReadDir(state); len(entries) != 0 {
		t.Fatalf("the stopped task left state behind: %v", entries)
	}
}

// TestStopRunsShutdownHooks: Stop's SIGTERM reaches the JVM, which runs
// its shutdown hooks and exits 143.
func TestStopRunsShutdownHooks(t *testing.T) {
	requireJava(t)
	d := newDriver(t, Options{})
	cfg := newTask(t, map[string]any{"class": "Hello", "class_path": "local/hello.jar", "args": []any{"sleep", "600"}})
	h := start(t, d, cfg)
	waitOutput(t, cfg, "started")
	if err := d.Stop(h, testTimeout, ""); err != nil {
		t.Fatal(err)
	}
	if r := waitExit(t, d, h); r.ExitCode != 143 {
		t.Fatalf("exit %+v", r)
	}
	waitOutput(t, cfg, "stopping")
}

// TestNewOptions: the plugin "java" block's settings are checked as
// exec's, the errors naming the java driver.
func TestNewOptions(t *testing.T) {
	for _, c := range []struct {
		o    exec.Options
		want string
	}{
		{exec.Options{StateDir: t.TempDir(), DefaultPidMode: "shared"}, `java default_pid_mode must be "private" or "host"`},
		{exec.Options{StateDir: t.TempDir(), DefaultIpcMode: "none"}, `java default_ipc_mode must be "private" or "host"`},
		{exec.Options{StateDir: t.TempDir(), AllowCaps: []string{"kill", "flying"}}, `java allow_caps[1]: unknown capability "flying"`},
		{exec.Options{}, "java needs a state directory"},
	} {
		if _, err := New(Options{Options: c.o}); !errors.Is(err, drivers.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
	d := newDriver(t, Options{})
	if d.Name() != Name || drivers.CapabilitiesOf(d).FSIsolation != drivers.FSIsolationChroot {
		t.Fatalf("name %q, capabilities %+v", d.Name(), drivers.CapabilitiesOf(d))
	}
}
