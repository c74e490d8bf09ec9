package structs

// Network isolation modes of a driver's tasks, as Nomad's driver
// capabilities name them.
const (
	// NetIsolationHost: the task uses the host's network.
	NetIsolationHost = "host"
	// NetIsolationGroup: the task joins its allocation's network
	// namespace (a group network in "bridge" mode).
	NetIsolationGroup = "group"
)

// DriverNetIsolationModes lists the network isolation modes of a driver
// drover ships, as Nomad's capabilities of the same driver: every one
// runs in the host's network or in the allocation's namespace. nil for a
// driver drover does not ship.
func DriverNetIsolationModes(driver string) []string {
	switch CanonicalDriver(driver) {
	case DriverRawExec, DriverExec, DriverJava, DriverDocker, DriverMock:
		return []string{NetIsolationHost, NetIsolationGroup}
	}
	return nil
}

// NetworkMode is the mode of the group's network: "host" when it has
// none.
func (tg *TaskGroup) NetworkMode() string {
	if tg != nil && len(tg.Networks) > 0 && tg.Networks[0] != nil && tg.Networks[0].Mode != "" {
		return tg.Networks[0].Mode
	}
	return "host"
}
