package structs

// AllocNetworkStatus is an allocation's own network, as its client
// reports it once it has made it (a group in bridge mode), as Nomad's:
// the interface in the allocation's namespace and its address; empty for
// an allocation on the host's network. Services with address_mode =
// "alloc" advertise that address.
type AllocNetworkStatus struct {
	InterfaceName string
	Address       string
	AddressIPv6   string
}

// Copy returns a copy.
func (s *AllocNetworkStatus) Copy() *AllocNetworkStatus {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}
