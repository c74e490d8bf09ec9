package exec

import "testing"

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
