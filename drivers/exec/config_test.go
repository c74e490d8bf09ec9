package exec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/droverhq/drover/drivers"
)

func TestParseConfig(t *testing.T) {
	c, err := parseConfig(map[string]any{
		"command": "/bin/sleep", "args": []any{"1", "2"}, "pid_mode": "host", "ipc_mode": "private",
		"cap_add": []any{"CAP_NET_ADMIN", "kill"}, "cap_drop": []string{"all"}, "work_dir": "/local",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := taskConfig{
		Command: "/bin/sleep", Args: []string{"1", "2"}, PidMode: "host", IpcMode: "private",
		CapAdd: []string{"net_admin", "kill"}, CapDrop: []string{"all"}, WorkDir: "/local",
	}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
	for _, bad := range []map[string]any{
		{},
		{"command": ""},
		{"command": 3},
		{"command": "x", "args": "y"},
		{"command": "x", "args": []any{1}},
		{"command": "x", "pid_mode": "shared"},
		{"command": "x", "ipc_mode": 1},
		{"command": "x", "cap_add": []any{"cap_flying"}},
		{"command": "x", "work_dir": "local"},
		{"command": "x", "image": "busybox"},
	} {
		if _, err := parseConfig(bad); !errors.Is(err, drivers.ErrInvalidConfig) {
			t.Errorf("%v: got %v, want ErrInvalidConfig", bad, err)
		}
	}
}

func TestTaskCaps(t *testing.T) {
	caps, err := taskCaps(DefaultAllowCaps(), nil, []string{"setuid", "setgid"})
	if err != nil {
		t.Fatal(err)
	}
	if len(caps) != len(DefaultAllowCaps())-2 || strings.Contains(strings.Join(caps, ","), "SETUID") {
		t.Fatalf("caps %v", caps)
	}
	if _, err := taskCaps(DefaultAllowCaps(), []string{"sys_admin"}, nil); err == nil || !strings.Contains(err.Error(), "sys_admin") {
		t.Fatalf("cap_add of a capability allow_caps lacks: %v", err)
	}
	caps, err = taskCaps([]string{"all"}, []string{"sys_admin"}, []string{"all"})
	if err != nil || len(caps) != 0 {
		t.Fatalf("drop all: %v %v", caps, err)
	}
	caps, err = taskCaps([]string{"kill", "net_raw"}, []string{"net_raw"}, nil)
	if err != nil || !reflect.DeepEqual(caps, []string{"CAP_KILL", "CAP_NET_RAW"}) {
		t.Fatalf("got %v %v", caps, err)
	}
}

func TestNewOptions(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("no state dir accepted")
	}
	dir := t.TempDir()
	if _, err := New(Options{StateDir: dir, DefaultPidMode: "shared"}); err == nil {
		t.Fatal("default_pid_mode shared accepted")
	}
	if _, err := New(Options{StateDir: dir, ChrootEnv: map[string]string{"bin": "/bin"}}); err == nil {
		t.Fatal("relative chroot_env accepted")
	}
	if _, err := New(Options{StateDir: dir, AllowCaps: []string{"cap_flying"}}); err == nil {
		t.Fatal("unknown allow_caps accepted")
	}
	d, err := New(Options{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if d.pidMode != ModePrivate || d.ipcMode != ModePrivate || len(d.chrootEnv) != len(DefaultChrootEnv()) {
		t.Fatalf("defaults %+v", d)
	}
}

func TestContainerID(t *testing.T) {
	if got := containerID("a1", "web"); got != "a1.web" {
		t.Fatal(got)
	}
	if got := containerID("a1", "web server/1"); strings.ContainsAny(got, " /") || got == containerID("a1", "web server/2") {
		t.Fatal(got)
	}
}
