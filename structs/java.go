package structs

import "sort"

// JavaConfig is a java task's config block, as Nomad's java driver reads
// it (website/drivers/java.md): what the JVM runs — a jar, or a class
// found on a class path — with its options and the program's arguments,
// and the isolation settings exec's block has too.
type JavaConfig struct {
	// Class is the class whose main method runs; ClassPath the JVM's -cp.
	Class     string
	ClassPath string
	// JarPath is the jar the JVM runs (-jar), relative to the working
	// directory (the task's root unless WorkDir) or absolute inside the
	// task's root.
	JarPath string
	// JvmOptions come before what the JVM runs; Args after it.
	JvmOptions []string
	Args       []string
	// PidMode, IpcMode, CapAdd, CapDrop and WorkDir are exec's
	// (ExecConfig).
	PidMode string
	IpcMode string
	CapAdd  []string
	CapDrop []string
	WorkDir string
}

// javaKeys are the java config keys drover runs: all of Nomad's.
var javaKeys = []string{"class", "class_path", "jar_path", "jvm_options", "args", "pid_mode", "ipc_mode", "cap_add", "cap_drop", "work_dir"}

// ParseJavaConfig reads a java task's config block. It returns every
// problem it finds, each naming its key; the config is then what could be
// read and must not be run.
func ParseJavaConfig(m map[string]any) (*JavaConfig, []ConfigError) {
	p := &dockerParser{}
	c := &JavaConfig{}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "class":
			c.Class = p.str(k, v)
		case "class_path":
			c.ClassPath = p.str(k, v)
		case "jar_path":
			c.JarPath = p.str(k, v)
		case "jvm_options":
			c.JvmOptions = p.strs(k, v)
		case "args":
			c.Args = p.strs(k, v)
		case "pid_mode":
			c.PidMode = p.mode(k, v)
		case "ipc_mode":
			c.IpcMode = p.mode(k, v)
		case "cap_add":
			c.CapAdd = p.caps(k, v)
		case "cap_drop":
			c.CapDrop = p.caps(k, v)
		case "work_dir":
			c.WorkDir = p.workDir(k, v)
		default:
			p.errf(k, "is not a java driver option%s", closest(k, javaKeys))
		}
	}
	if c.Class == "" && c.JarPath == "" && !p.failed("class") && !p.failed("jar_path") {
		// Nomad's words: "jar_path or class must be specified".
		p.errf("jar_path", "or class must be specified (the JVM runs a jar or a class)")
	}
	return c, p.errs
}
