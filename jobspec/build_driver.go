package jobspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/droverhq/drover/structs"
)

// taskDriver checks a task's driver and, for docker, its config block,
// with the group's network: its mode and port labels.
func (b *builder) taskDriver(path string, tg *structs.TaskGroup, t *structs.Task, ports map[string]bool) {
	switch structs.CanonicalDriver(t.Driver) {
	case structs.DriverRawExec:
	case structs.DriverMock:
		for _, e := range structs.CheckMockConfig(t.Config) {
			b.err(path+".Config."+e.Key, "%s", e.Msg)
		}
	case structs.DriverExec:
		b.execConfig(path, t)
	case structs.DriverJava:
		b.javaConfig(path, t)
	case structs.DriverDocker:
		b.dockerConfig(path, tg, t, ports)
	case "":
		b.err(path+".Driver", "is required")
	default:
		b.err(path+".Driver", "%q is not supported by drover (raw_exec, exec, java, docker or mock)", t.Driver)
	}
	if networkMode(tg) == "bridge" && t.Driver != "" {
		b.bridgeTask(path, tg, t)
	}
}

// bridgeTask checks a task of a "bridge" group, by its driver's
// capability as Nomad's client does (website/networking.md): the driver
// must run tasks in the allocation's namespace. Every driver drover
// ships does, docker included (its tasks join the namespace of the
// allocation's pause container), in any mix.
func (b *builder) bridgeTask(path string, tg *structs.TaskGroup, t *structs.Task) {
	gpath, _, _ := strings.Cut(path, ".Tasks[")
	if modes := structs.DriverNetIsolationModes(t.Driver); modes != nil && !slices.Contains(modes, structs.NetIsolationGroup) {
		b.err(gpath+".Networks[0].Mode", "task %s does not support \"bridge\" networking mode (driver %s)", t.Name, t.Driver)
	}
}

// allocAddressModes checks the services with address_mode = "alloc":
// they advertise the allocation's own address, which only a group in
// bridge mode has (website/networking.md).
func (b *builder) allocAddressModes(path string, tg *structs.TaskGroup) {
	if tg.NetworkMode() == "bridge" {
		return
	}
	why := "the group's network mode is " + tg.NetworkMode()
	check := func(spath string, s *structs.Service) {
		if s != nil && s.AddressMode == structs.AddressModeAlloc {
			b.err(spath+".AddressMode", "\"alloc\" needs an address of the allocation's own, which a group has in \"bridge\" mode (%s)", why)
		}
	}
	for i, s := range tg.Services {
		check(fmt.Sprintf("%s.Services[%d]", path, i), s)
	}
	for i, t := range tg.Tasks {
		for j, s := range t.Services {
			check(fmt.Sprintf("%s.Tasks[%d].Services[%d]", path, i, j), s)
		}
	}
}

// execConfig checks an exec task's config block (website/drivers/
// exec.md): a command, and its keys and values.
func (b *builder) execConfig(path string, t *structs.Task) {
	cpath := path + ".Config"
	if t.Config == nil {
		b.err(cpath+".command", "is required (the exec driver needs a config block with a command)")
		return
	}
	_, errs := structs.ParseExecConfig(t.Config)
	for _, e := range errs {
		b.err(cpath+"."+e.Key, "%s", e.Msg)
	}
}

// javaConfig checks a java task's config block (website/drivers/
// java.md): a jar_path or a class, and its keys and values.
func (b *builder) javaConfig(path string, t *structs.Task) {
	cpath := path + ".Config"
	if t.Config == nil {
		b.err(cpath+".jar_path", "or class must be specified (the java driver needs a config block with a jar_path or a class)")
		return
	}
	_, errs := structs.ParseJavaConfig(t.Config)
	for _, e := range errs {
		b.err(cpath+"."+e.Key, "%s", e.Msg)
	}
}

// networkMode is the group network's mode, "host" when it has none.
func networkMode(tg *structs.TaskGroup) string {
	if len(tg.Networks) > 0 && tg.Networks[0] != nil && tg.Networks[0].Mode != "" {
		return tg.Networks[0].Mode
	}
	return "host"
}

// dockerConfig checks a docker task's config block (website/drivers/
// docker.md): its keys and values, that its ports name labels of the
// group network, that its network_mode fits the group's, and that no two
// tasks of the group publish the same port.
func (b *builder) dockerConfig(path string, tg *structs.TaskGroup, t *structs.Task, ports map[string]bool) {
	cpath := path + ".Config"
	if t.Config == nil {
		b.err(cpath+".image", "is required (the docker driver needs a config block with an image)")
		return
	}
	dc, errs := structs.ParseDockerConfig(t.Config)
	for _, e := range errs {
		b.err(cpath+"."+e.Key, "%s", e.Msg)
	}
	for i, l := range dc.Ports {
		if !ports[l] {
			b.err(fmt.Sprintf("%s.ports[%d]", cpath, i), "%q is not a port label of the group network%s", l, suggest(l, keys(ports)))
		}
	}
	mode := networkMode(tg)
	if mode == "bridge" && dc.NetworkMode != "" && dc.NetworkMode != "bridge" {
		b.err(cpath+".network_mode", "must be empty or \"bridge\" in a group whose network mode is \"bridge\" (got %q)", dc.NetworkMode)
	}
	mine := published(dc, mode)
	for _, other := range tg.Tasks {
		if other == nil || other.Driver != structs.DriverDocker {
			continue
		}
		odc, _ := structs.ParseDockerConfig(other.Config)
		for _, l := range published(odc, mode) {
			for _, m := range mine {
				if l == m {
					b.err(cpath+".ports", "publishes port %q, which task %q publishes too: a host port binds to one container", l, other.Name)
				}
			}
		}
	}
}

// published lists the port labels a docker task publishes on Docker's
// bridge: its ports list, except in a bridge group with no network_mode
// of its own, where it joins the allocation's namespace and the client
// maps the group's ports (as Nomad's, which ignores the list there).
func published(dc *structs.DockerConfig, mode string) []string {
	if mode == "bridge" && dc.NetworkMode == "" {
		return nil
	}
	return dc.Ports
}
