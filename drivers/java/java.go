// Package java is the java driver: it runs a jar, or a class from a class
// path, in a JVM isolated as the exec driver isolates its tasks, as
// Nomad's java driver does. The driver is exec's (drivers/exec), built
// with NewFor around a command of its own: the host's java binary, found
// on the client's PATH with its symlinks resolved (Debian's
// /usr/bin/java → /etc/alternatives/java → /usr/lib/jvm/…/bin/java), at
// its path inside the task's root, where the client's chroot_env binds it
// (/usr by default), followed by the task's jvm_options, -cp class_path,
// -jar jar_path, class and args.
//
// Everything else — the chroot, namespaces, cgroup, user, logs, signals,
// resource usage, alloc exec, re-attaching after a client restart — is
// exec's, under the name "java": its handles, its plugin "java" block and
// a state directory of its own.
package java

import (
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/exec"
	"github.com/droverhq/drover/structs"
)

// Name is the driver's name.
const Name = structs.DriverJava

// Options tune the driver: exec's (the client's plugin "java" { config {
// … } } block sets the Nomad ones), and the java binary.
type Options struct {
	exec.Options
	// Java is the java binary ("": "java" on the client's PATH, as
	// Nomad's).
	Java string
}

// versionTimeout bounds java -version.
const versionTimeout = 30 * time.Second

// Driver is the java driver: exec's driver whose tasks run the JVM.
// Create it with New.
type Driver struct {
	*exec.Driver
	java string

	fpOnce sync.Once
	fp     drivers.Fingerprint
	// jvm is the java binary's path inside a task's root, once the
	// fingerprint found it.
	jvm string
}

var (
	_ drivers.Driver           = (*Driver)(nil)
	_ drivers.Capable          = (*Driver)(nil)
	_ drivers.TaskSignaler     = (*Driver)(nil)
	_ drivers.StatsDriver      = (*Driver)(nil)
	_ drivers.ExecTaskDriver   = (*Driver)(nil)
	_ drivers.StreamExecDriver = (*Driver)(nil)
	_ drivers.OrphanReaper     = (*Driver)(nil)
)

// New returns a java driver, or an error when its options are invalid.
func New(o Options) (*Driver, error) {
	d := &Driver{java: o.Java}
	if d.java == "" {
		d.java = "java"
	}
	ed, err := exec.NewFor(Name, d.command, o.Options)
	if err != nil {
		return nil, err
	}
	d.Driver = ed
	return d, nil
}

// Fingerprint reports the driver as detected where exec can isolate tasks
// and java -version runs, with Nomad's attributes: driver.java = 1,
// driver.java.version, driver.java.runtime and driver.java.vm. A JVM the
// client's chroot_env does not bring into a task's root is detected but
// unhealthy. The host is probed once, as exec's.
func (d *Driver) Fingerprint() drivers.Fingerprint {
	d.fpOnce.Do(func() { d.fp = d.fingerprint() })
	return d.fp
}

func (d *Driver) fingerprint() drivers.Fingerprint {
	base := d.Driver.Fingerprint()
	if base.Undetected {
		return drivers.Fingerprint{Undetected: true, HealthDescription: "java runs its JVM isolated as exec's tasks: " + base.HealthDescription}
	}
	host, err := findJava(d.java)
	if err != nil {
		return drivers.Fingerprint{Undetected: true, HealthDescription: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), versionTimeout)
	defer cancel()
	cmd := osexec.CommandContext(ctx, host, "-version")
	cmd.WaitDelay = time.Second // a child left holding its output does not hold the client
	out, err := cmd.CombinedOutput()
	if err != nil {
		return drivers.Fingerprint{Undetected: true, HealthDescription: fmt.Sprintf("%s -version: %v", host, err)}
	}
	v, ok := ParseVersion(string(out))
	if !ok {
		return drivers.Fingerprint{Undetected: true, HealthDescription: fmt.Sprintf("%s -version printed what is not a JVM's version: %q", host, firstLine(string(out)))}
	}
	fp := drivers.Fingerprint{
		Attributes: map[string]string{
			"driver.java": "1", "driver.java.version": v.Version,
			"driver.java.runtime": v.Runtime, "driver.java.vm": v.VM,
		},
		Healthy: true, HealthDescription: "Healthy",
	}
	d.jvm = d.TaskPath(host)
	if d.jvm == "" {
		fp.Healthy = false
		fp.HealthDescription = fmt.Sprintf("java is %s, which no chroot_env directory of this client brings into a task's root", host)
	}
	return fp
}

// findJava resolves the java binary as Nomad's driver does: looked up on
// the client's PATH, then its symlinks resolved, so that the path is the
// binary's own and holds in a task's root whatever /etc/alternatives
// says.
func findJava(name string) (string, error) {
	p, err := osexec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("no java found: %w", err)
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("java %s: %w", p, err)
	}
	if !filepath.IsAbs(r) {
		if r, err = filepath.Abs(r); err != nil {
			return "", err
		}
	}
	if fi, err := os.Stat(r); err != nil || fi.IsDir() {
		return "", fmt.Errorf("java %s is not a file", r)
	}
	return r, nil
}

// Start runs the task's JVM, where the fingerprint found one.
func (d *Driver) Start(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if fp := d.Fingerprint(); fp.Undetected || !fp.Healthy {
		return nil, fmt.Errorf("%w: java cannot run tasks on this client: %s", drivers.ErrStartFailed, fp.HealthDescription)
	}
	return d.Driver.Start(ctx, cfg)
}

// command makes the exec command of a java task: the JVM, inside the
// task's root, with the arguments of its config block.
func (d *Driver) command(m map[string]any) (exec.Command, error) {
	c, errs := structs.ParseJavaConfig(m)
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		return exec.Command{}, fmt.Errorf("%w: java %s", drivers.ErrInvalidConfig, strings.Join(msgs, "; "))
	}
	d.Fingerprint()
	if d.jvm == "" {
		return exec.Command{}, fmt.Errorf("%w: no JVM in a task's root on this client: %s", drivers.ErrStartFailed, d.fp.HealthDescription)
	}
	return exec.Command{
		Command: d.jvm, Args: Args(c),
		PidMode: c.PidMode, IpcMode: c.IpcMode, CapAdd: c.CapAdd, CapDrop: c.CapDrop, WorkDir: c.WorkDir,
	}, nil
}

// Args is the JVM's command line after the java binary, in Nomad's order:
// jvm_options, -cp class_path, -jar jar_path, class, then args.
func Args(c *structs.JavaConfig) []string {
	var out []string
	out = append(out, c.JvmOptions...)
	if c.ClassPath != "" {
		out = append(out, "-cp", c.ClassPath)
	}
	if c.JarPath != "" {
		out = append(out, "-jar", c.JarPath)
	}
	if c.Class != "" {
		out = append(out, c.Class)
	}
	return append(out, c.Args...)
}
