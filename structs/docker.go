package structs

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"time"
)

// DockerConfig is a docker task's config block, with Nomad's docker
// driver's names (website/drivers/docker.md). ParseDockerConfig reads it
// from a task's Config; the job file's checks and the driver share it.
type DockerConfig struct {
	Image      string
	Command    string
	Args       []string
	Entrypoint []string
	// Ports are labels of the group network's ports to publish.
	Ports       []string
	NetworkMode string
	Labels      map[string]string
	// Volumes are "source:target[:ro|rw]" binds; a relative source is
	// relative to the task's directory.
	Volumes          []string
	Mounts           []DockerMount
	ForcePull        bool
	WorkDir          string
	Hostname         string
	Init             bool
	ReadonlyRootfs   bool
	ImagePullTimeout time.Duration
	// Auth are the registry credentials the image is pulled with (nil:
	// none); AuthSoftFail pulls without them when they are refused.
	Auth         *DockerAuth
	AuthSoftFail bool
}

// DockerAuth is a docker task's auth block, as Nomad's. Its Password is
// a secret: it is never logged, and a DockerAuth prints without it.
type DockerAuth struct {
	Username      string
	Password      string
	Email         string
	ServerAddress string
}

// String shows the credentials without the password.
func (a *DockerAuth) String() string {
	if a == nil {
		return "<none>"
	}
	return fmt.Sprintf("{username %q server %q}", a.Username, a.ServerAddress)
}

// GoString is String, so that %#v hides the password too.
func (a *DockerAuth) GoString() string { return a.String() }

// DockerMount is one mount block.
type DockerMount struct {
	// Type is "bind", "volume" (Nomad's default) or "tmpfs".
	Type     string
	Target   string
	Source   string
	ReadOnly bool
	// TmpfsSizeBytes and TmpfsMode are a tmpfs mount's tmpfs_options.
	TmpfsSizeBytes int64
	TmpfsMode      uint32
}

// Docker mount types.
const (
	DockerMountBind   = "bind"
	DockerMountVolume = "volume"
	DockerMountTmpfs  = "tmpfs"
)

// DefaultImagePullTimeout bounds an image pull, as Nomad's
// image_pull_timeout.
const DefaultImagePullTimeout = 5 * time.Minute

// DockerReservedTargets are where the driver mounts the allocation's
// directories in every container; volumes and mounts may not take them.
var DockerReservedTargets = []string{"/alloc", "/local", "/secrets"}

// ConfigError is a problem with one key of a driver config: Key is its
// path inside the config block ("ports[1]", "mount[0].target").
type ConfigError struct {
	Key string
	Msg string
}

func (e ConfigError) Error() string { return e.Key + " " + e.Msg }

// dockerKeys are the docker config keys drover runs.
var dockerKeys = []string{
	"image", "command", "args", "entrypoint", "ports", "network_mode", "labels",
	"volumes", "mount", "force_pull", "work_dir", "hostname", "init",
	"readonly_rootfs", "image_pull_timeout", "auth", "auth_soft_fail",
}

// authKeys are the keys of a docker auth block.
var authKeys = []string{"username", "password", "email", "server_address"}

// dockerRefused are Nomad's docker config keys drover does not run, and
// why. Ignoring them would change what the container does.
var dockerRefused = map[string]string{
	"load":                     "images are not loaded from archives",
	"port_map":                 "write ports = [\"label\"] and the port's to in the group network",
	"mounts":                   "write mount blocks",
	"logging":                  "container output always goes to the task's log files (alloc logs)",
	"privileged":               "privileged containers are not run",
	"cap_add":                  "capabilities are Docker's defaults",
	"cap_drop":                 "capabilities are Docker's defaults",
	"devices":                  "no devices",
	"security_opt":             "security options are Docker's defaults",
	"userns_mode":              "namespaces are Docker's defaults",
	"pid_mode":                 "namespaces are Docker's defaults",
	"ipc_mode":                 "namespaces are Docker's defaults",
	"uts_mode":                 "namespaces are Docker's defaults",
	"cgroupns":                 "namespaces are Docker's defaults",
	"runtime":                  "containers use the daemon's default runtime",
	"isolation":                "containers use the daemon's default isolation",
	"volume_driver":            "no volume drivers",
	"dns_servers":              "containers use Docker's DNS settings",
	"dns_search_domains":       "containers use Docker's DNS settings",
	"dns_options":              "containers use Docker's DNS settings",
	"extra_hosts":              "containers use Docker's /etc/hosts",
	"network_aliases":          "no user-defined network aliases",
	"ipv4_address":             "addresses are assigned by Docker",
	"ipv6_address":             "addresses are assigned by Docker",
	"advertise_ipv6_address":   "addresses are assigned by Docker",
	"mac_address":              "addresses are assigned by Docker",
	"tty":                      "containers get no terminal",
	"interactive":              "containers get no standard input",
	"sysctl":                   "no sysctls",
	"ulimit":                   "limits are Docker's defaults",
	"shm_size":                 "shared memory is Docker's default",
	"pids_limit":               "no PID limit",
	"storage_opt":              "storage options are Docker's defaults",
	"memory_hard_limit":        "write memory_max in resources",
	"cpu_hard_limit":           "CPU is shared by weight (cpu in resources)",
	"cpu_cfs_period":           "CPU is shared by weight (cpu in resources)",
	"cpuset_cpus":              "no CPU pinning",
	"oom_score_adj":            "no OOM score adjustment",
	"group_add":                "no extra groups",
	"healthchecks":             "image health checks are not run; write a service check",
	"container_exists_timeout": "a container left by an earlier attempt is removed at once",
	"image_pull_context":       "images are pulled with the daemon's defaults",
}

// ParseDockerConfig reads a docker task's config block. It returns every
// problem it finds, each naming its key; the config is then what could be
// read, for further checks, and must not be run.
func ParseDockerConfig(m map[string]any) (*DockerConfig, []ConfigError) {
	p := &dockerParser{}
	c := &DockerConfig{ImagePullTimeout: DefaultImagePullTimeout}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		switch k {
		case "image":
			c.Image = p.str(k, v)
		case "command":
			c.Command = p.str(k, v)
		case "args":
			c.Args = p.strs(k, v)
		case "entrypoint":
			c.Entrypoint = p.strs(k, v)
		case "ports":
			c.Ports = p.strs(k, v)
		case "network_mode":
			c.NetworkMode = p.str(k, v)
		case "labels":
			c.Labels = p.labels(k, v)
		case "volumes":
			c.Volumes = p.strs(k, v)
		case "mount":
			c.Mounts = p.mounts(k, v)
		case "force_pull":
			c.ForcePull = p.boolean(k, v)
		case "work_dir":
			c.WorkDir = p.str(k, v)
		case "hostname":
			c.Hostname = p.str(k, v)
		case "init":
			c.Init = p.boolean(k, v)
		case "readonly_rootfs":
			c.ReadonlyRootfs = p.boolean(k, v)
		case "auth":
			c.Auth = p.auth(k, v)
		case "auth_soft_fail":
			c.AuthSoftFail = p.boolean(k, v)
		case "image_pull_timeout":
			if d := p.duration(k, v); d > 0 {
				c.ImagePullTimeout = d
			}
		default:
			if why, ok := dockerRefused[k]; ok {
				p.errf(k, "is not supported by drover (%s)", why)
			} else {
				p.errf(k, "is not a docker driver option%s", closest(k, dockerKeys))
			}
		}
	}
	if _, ok := m["image"]; !ok {
		p.errf("image", "is required")
	} else if c.Image == "" && !p.failed("image") {
		p.errf("image", "must not be empty")
	}
	if c.WorkDir != "" && !path.IsAbs(c.WorkDir) {
		p.errf("work_dir", "must be an absolute path in the container (got %q)", c.WorkDir)
	}
	switch {
	case c.NetworkMode == "", c.NetworkMode == "bridge", c.NetworkMode == "host",
		c.NetworkMode == "none", c.NetworkMode == "default":
	case strings.HasPrefix(c.NetworkMode, "container:"):
		p.errf("network_mode", "%q is not supported by drover (a task cannot join another container's network)", c.NetworkMode)
	}
	if (c.NetworkMode == "host" || c.NetworkMode == "none") && len(c.Ports) > 0 {
		p.errf("ports", "cannot be published with network_mode = %q", c.NetworkMode)
	}
	seen := map[string]bool{}
	for i, l := range c.Ports {
		if seen[l] {
			p.errf(fmt.Sprintf("ports[%d]", i), "names %q twice", l)
		}
		seen[l] = true
	}
	for k := range c.Labels {
		if strings.HasPrefix(k, "com.hashicorp.nomad.") || strings.HasPrefix(k, DockerLabelPrefix) {
			p.errf("labels."+k, "is set by drover on every container")
		}
	}
	for i, v := range c.Volumes {
		p.volume(fmt.Sprintf("volumes[%d]", i), v)
	}
	return c, p.errs
}

// DockerLabelPrefix starts drover's own container labels.
const DockerLabelPrefix = "com.droverhq.drover."

// ParseDockerVolume splits "source:target[:ro|rw]".
func ParseDockerVolume(v string) (source, target string, readOnly bool, err error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return "", "", false, fmt.Errorf("must be \"source:target\" or \"source:target:ro\" (got %q)", v)
	}
	source, target = parts[0], parts[1]
	if len(parts) == 3 {
		switch parts[2] {
		case "ro":
			readOnly = true
		case "rw":
		default:
			return "", "", false, fmt.Errorf("mode must be ro or rw (got %q)", parts[2])
		}
	}
	if source == "" {
		return "", "", false, fmt.Errorf("needs a source (got %q)", v)
	}
	if err := checkTarget(target); err != nil {
		return "", "", false, err
	}
	return source, target, readOnly, nil
}

func checkTarget(target string) error {
	if !path.IsAbs(target) {
		return fmt.Errorf("target must be an absolute path in the container (got %q)", target)
	}
	clean := path.Clean(target)
	for _, r := range DockerReservedTargets {
		if clean == r {
			return fmt.Errorf("target %s is where drover mounts the allocation's %s directory", clean, strings.TrimPrefix(r, "/"))
		}
	}
	return nil
}

// RelativeSourceEscapes reports whether a relative bind source, taken
// from the task's directory, leaves the allocation's directory.
func RelativeSourceEscapes(source string) bool {
	if path.IsAbs(source) {
		return false
	}
	// The task dir is <alloc>/<task>: one ".." reaches the allocation.
	p := path.Join("/alloc-root/task", source)
	return p != "/alloc-root" && !strings.HasPrefix(p, "/alloc-root/")
}

type dockerParser struct {
	errs []ConfigError
}

func (p *dockerParser) errf(key, format string, args ...any) {
	p.errs = append(p.errs, ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (p *dockerParser) failed(key string) bool {
	for _, e := range p.errs {
		if e.Key == key {
			return true
		}
	}
	return false
}

func (p *dockerParser) volume(key, v string) {
	source, _, _, err := ParseDockerVolume(v)
	if err != nil {
		p.errf(key, "%v", err)
		return
	}
	if RelativeSourceEscapes(source) {
		p.errf(key, "source %q leaves the allocation's directory", source)
	}
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a bool"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("%T", v)
}

func (p *dockerParser) str(key string, v any) string {
	s, ok := v.(string)
	if !ok {
		p.errf(key, "must be a string (got %s)", kindOf(v))
	}
	return s
}

func (p *dockerParser) boolean(key string, v any) bool {
	b, ok := v.(bool)
	if !ok {
		p.errf(key, "must be true or false (got %s)", kindOf(v))
	}
	return b
}

func (p *dockerParser) strs(key string, v any) []string {
	switch l := v.(type) {
	case []string:
		return append([]string(nil), l...)
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				p.errf(fmt.Sprintf("%s[%d]", key, i), "must be a string (got %s)", kindOf(e))
				continue
			}
			out = append(out, s)
		}
		return out
	}
	p.errf(key, "must be a list of strings (got %s)", kindOf(v))
	return nil
}

func (p *dockerParser) duration(key string, v any) time.Duration {
	var d time.Duration
	switch x := v.(type) {
	case string:
		var err error
		if d, err = time.ParseDuration(x); err != nil {
			p.errf(key, "must be a duration such as \"5m\" (got %q)", x)
			return 0
		}
	case int64:
		d = time.Duration(x)
	case float64:
		if x != math.Trunc(x) || x > math.MaxInt64 || x < math.MinInt64 {
			p.errf(key, "must be a whole number of nanoseconds (got %v)", x)
			return 0
		}
		d = time.Duration(x)
	default:
		p.errf(key, "must be a duration (got %s)", kindOf(v))
		return 0
	}
	if d <= 0 {
		p.errf(key, "must be positive (got %s)", d)
		return 0
	}
	return d
}

// blocks reads a block that a job file writes as a list of maps (one per
// block) and JSON as a map or a list of maps.
func (p *dockerParser) blocks(key string, v any) []map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return []map[string]any{x}
	case []any:
		out := make([]map[string]any, 0, len(x))
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				p.errf(fmt.Sprintf("%s[%d]", key, i), "must be a block (got %s)", kindOf(e))
				continue
			}
			out = append(out, m)
		}
		return out
	}
	p.errf(key, "must be a block (got %s)", kindOf(v))
	return nil
}

func (p *dockerParser) labels(key string, v any) map[string]string {
	out := map[string]string{}
	for _, m := range p.blocks(key, v) {
		for k, e := range m {
			s, ok := e.(string)
			if !ok {
				p.errf(key+"."+k, "must be a string (got %s)", kindOf(e))
				continue
			}
			out[k] = s
		}
	}
	return out
}

var mountKeys = []string{"type", "target", "source", "readonly", "tmpfs_options"}

func (p *dockerParser) mounts(key string, v any) []DockerMount {
	var out []DockerMount
	for i, m := range p.blocks(key, v) {
		mp := fmt.Sprintf("%s[%d]", key, i)
		mt := DockerMount{Type: DockerMountVolume}
		var tmpfs []map[string]any
		mkeys := make([]string, 0, len(m))
		for k := range m {
			mkeys = append(mkeys, k)
		}
		sort.Strings(mkeys)
		for _, k := range mkeys {
			e := m[k]
			switch k {
			case "type":
				mt.Type = p.str(mp+".type", e)
			case "target":
				mt.Target = p.str(mp+".target", e)
			case "source":
				mt.Source = p.str(mp+".source", e)
			case "readonly":
				mt.ReadOnly = p.boolean(mp+".readonly", e)
			case "tmpfs_options":
				tmpfs = p.blocks(mp+".tmpfs_options", e)
			case "bind_options":
				p.errf(mp+"."+k, "is not supported by drover (binds use Docker's default propagation)")
			case "volume_options":
				p.errf(mp+"."+k, "is not supported by drover (no volume drivers or labels)")
			default:
				p.errf(mp+"."+k, "is not an option of a mount block%s", closest(k, mountKeys))
			}
		}
		switch mt.Type {
		case DockerMountBind:
			if mt.Source == "" {
				p.errf(mp+".source", "is required for a bind mount")
			} else if RelativeSourceEscapes(mt.Source) {
				p.errf(mp+".source", "%q leaves the allocation's directory", mt.Source)
			}
		case DockerMountVolume:
			if strings.Contains(mt.Source, "/") {
				p.errf(mp+".source", "must name a Docker volume, not a path (got %q); use type = \"bind\"", mt.Source)
			}
		case DockerMountTmpfs:
			if mt.Source != "" {
				p.errf(mp+".source", "must be empty for a tmpfs mount")
			}
		default:
			if !p.failed(mp + ".type") {
				p.errf(mp+".type", "must be bind, volume or tmpfs (got %q)", mt.Type)
			}
		}
		if len(tmpfs) > 0 && mt.Type != DockerMountTmpfs {
			p.errf(mp+".tmpfs_options", "is for tmpfs mounts only")
		}
		for j, o := range tmpfs {
			op := fmt.Sprintf("%s.tmpfs_options[%d]", mp, j)
			for k, e := range o {
				switch k {
				case "size":
					n, ok := wholeNumber(e)
					if !ok || n < 0 {
						p.errf(op+".size", "must be a whole number of bytes (got %v)", e)
					}
					mt.TmpfsSizeBytes = n
				case "mode":
					n, ok := wholeNumber(e)
					if !ok || n < 0 || n > 0o7777 {
						p.errf(op+".mode", "must be a file mode such as 0755 written as a number (got %v)", e)
					}
					mt.TmpfsMode = uint32(n)
				default:
					p.errf(op+"."+k, "is not an option of tmpfs_options (size or mode)")
				}
			}
		}
		if mt.Target == "" {
			if !p.failed(mp + ".target") {
				p.errf(mp+".target", "is required")
			}
		} else if err := checkTarget(mt.Target); err != nil {
			p.errf(mp+".target", "%v", err)
		}
		out = append(out, mt)
	}
	return out
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && x >= math.MinInt64 && x <= math.MaxInt64 {
			return int64(x), true
		}
	}
	return 0, false
}

// closest suggests the nearest of names to s, as " (did you mean …?)",
// as the job file's other suggestions read.
func closest(s string, names []string) string {
	if len(s) > 64 {
		return ""
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// auth reads an auth block (one block, as Nomad's).
func (p *dockerParser) auth(key string, v any) *DockerAuth {
	bs := p.blocks(key, v)
	if len(bs) == 0 {
		return nil
	}
	if len(bs) > 1 {
		p.errf(key, "is one block (got %d)", len(bs))
	}
	a := &DockerAuth{}
	ks := make([]string, 0, len(bs[0]))
	for k := range bs[0] {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for _, k := range ks {
		e := bs[0][k]
		switch k {
		case "username":
			a.Username = p.str(key+".username", e)
		case "password":
			a.Password = p.str(key+".password", e)
		case "email":
			a.Email = p.str(key+".email", e)
		case "server_address":
			a.ServerAddress = p.str(key+".server_address", e)
		default:
			p.errf(key+"."+k, "is not an option of the auth block%s", closest(k, authKeys))
		}
	}
	return a
}
