package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskPath: a host path is found inside a task's root under the
// deepest chroot_env directory that holds it, at that directory's
// destination.
func TestTaskPath(t *testing.T) {
	d, err := New(Options{StateDir: t.TempDir(), ChrootEnv: map[string]string{
		"/usr": "/usr", "/opt/jdk": "/java", "/etc": "/etc", "/srv/x": "/srv/x",
	}})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{
		"/usr/lib/jvm/java-17-openjdk-amd64/bin/java": "/usr/lib/jvm/java-17-openjdk-amd64/bin/java",
		"/opt/jdk/bin/java":                           "/java/bin/java",
		"/opt/jdk":                                    "/java",
		"/opt/jdk2/bin/java":                          "",
		"/usr/../opt/x":                               "",
		"/srv/xy/java":                                "",
		"/home/me/bin/java":                           "",
		"/etc/alternatives/x":                         "/etc/alternatives/x",
	} {
		if got := d.TaskPath(host); got != want {
			t.Errorf("TaskPath(%q) = %q, want %q", host, got, want)
		}
	}
}

// TestSharedDirTakesTasksFiles: a task that is not root writes into the
// allocation's shared directory (/alloc), as in Nomad, but cannot move
// or remove what is not its own there (the client's logs/).
func TestSharedDirTakesTasksFiles(t *testing.T) {
	requireIsolation(t)
	d := newDriver(t, t.TempDir())
	cfg := newTask(t, `echo built > /alloc/Main.class && echo alloc-writable; `+
		`mv /alloc/logs /alloc/moved 2>/dev/null || echo logs-kept; rm -rf /alloc/logs 2>/dev/null; ls -d /alloc/logs`)
	if r := waitExit(t, d, start(t, d, cfg)); !r.Successful() {
		t.Fatalf("exit %+v, stdout %q", r, stdout(t, cfg))
	}
	out := stdout(t, cfg)
	for _, want := range []string{"alloc-writable\n", "logs-kept\n", "/alloc/logs\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q: %q", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cfg.AllocDir, "Main.class")); err != nil || string(b) != "built\n" {
		t.Errorf("alloc/Main.class on the host: %q %v", b, err)
	}
}
