package structs

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"golang.org/x/crypto/blake2b"
)

// A namespace is a stored object, as Nomad's: "default" always exists
// (every store starts with it, see state.New) and can never be deleted;
// any other is created by PUT /v1/namespace and must exist before a job or
// a variable is written in it.

// DefaultNamespaceDescription is Nomad's description of "default".
const DefaultNamespaceDescription = "Default shared namespace"

// Nomad's bounds of a namespace.
const (
	MaxNamespaceNameLen        = 128
	MaxNamespaceDescriptionLen = 256
)

// validNamespaceName is Nomad's pattern of a namespace's name.
var validNamespaceName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")

// Namespace is Nomad's namespace (api.Namespace and the server's
// structs.Namespace). Quota, VaultConfiguration and ConsulConfiguration
// are stored as given (quotas, Vault and multi-cluster Consul are out of
// drover's scope); Capabilities are enforced at job registration;
// NodePoolConfiguration is stored.
type Namespace struct {
	Name                  string
	Description           string
	Quota                 string
	Capabilities          *NamespaceCapabilities
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	VaultConfiguration    *NamespaceVaultConfiguration
	ConsulConfiguration   *NamespaceConsulConfiguration
	Meta                  map[string]string
	RequiredExtraClaims   map[string]string `json:",omitempty"`
	OptionalExtraClaims   map[string]string `json:",omitempty"`
	// Hash is the BLAKE2b-256 of the fields a user sets, as Nomad's.
	Hash        []byte
	CreateIndex uint64
	ModifyIndex uint64
}

// NamespaceCapabilities are what jobs of a namespace may use: a task
// driver or a group network mode is allowed when Enabled… is empty or
// names it, and Disabled… does not name it.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string
	DisabledTaskDrivers  []string
	EnabledNetworkModes  []string
	DisabledNetworkModes []string
}

// NamespaceNodePoolConfiguration is a namespace's node pool settings, as
// Nomad's.
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceVaultConfiguration is a namespace's Vault clusters, as Nomad's
// (stored only).
type NamespaceVaultConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceConsulConfiguration is a namespace's Consul clusters, as
// Nomad's (stored only).
type NamespaceConsulConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceUpsertRequest creates or replaces namespaces (Raft entry).
type NamespaceUpsertRequest struct {
	Namespaces []*Namespace
}

// NamespaceDeleteRequest deletes namespaces (Raft entry).
type NamespaceDeleteRequest struct {
	Namespaces []string
}

// ValidNamespaceName reports whether name matches Nomad's pattern.
func ValidNamespaceName(name string) bool { return validNamespaceName.MatchString(name) }

// Validate checks the namespace as Nomad's Namespace.Validate, with
// Nomad's words; several problems are listed as Nomad's multierror does.
func (n *Namespace) Validate() error {
	var errs []error
	if !validNamespaceName.MatchString(n.Name) {
		errs = append(errs, fmt.Errorf("invalid name %q. Must match regex %s", n.Name, validNamespaceName))
	}
	if len(n.Description) > MaxNamespaceDescriptionLen {
		errs = append(errs, fmt.Errorf("description longer than %d", MaxNamespaceDescriptionLen))
	}
	if c := n.NodePoolConfiguration; c != nil {
		if len(c.Allowed) > 0 && len(c.Denied) > 0 {
			errs = append(errs, errors.New("invalid node pool configuration: allowed and denied node pools are mutually exclusive"))
		}
		for _, p := range slices.Concat([]string{c.Default}, c.Allowed, c.Denied) {
			if p != "" && !ValidNodePoolGlob(p) {
				errs = append(errs, fmt.Errorf("invalid node pool configuration: invalid node pool %q", p))
			}
		}
	}
	for _, c := range []struct {
		what            string
		allowed, denied []string
	}{
		{"vault", vaultAllowed(n.VaultConfiguration), vaultDenied(n.VaultConfiguration)},
		{"consul", consulAllowed(n.ConsulConfiguration), consulDenied(n.ConsulConfiguration)},
	} {
		if len(c.allowed) > 0 && len(c.denied) > 0 {
			errs = append(errs, fmt.Errorf("invalid %s configuration: allowed and denied clusters are mutually exclusive", c.what))
		}
	}
	return MultiError(errs)
}

func vaultAllowed(c *NamespaceVaultConfiguration) []string {
	if c == nil {
		return nil
	}
	return c.Allowed
}

func vaultDenied(c *NamespaceVaultConfiguration) []string {
	if c == nil {
		return nil
	}
	return c.Denied
}

func consulAllowed(c *NamespaceConsulConfiguration) []string {
	if c == nil {
		return nil
	}
	return c.Allowed
}

func consulDenied(c *NamespaceConsulConfiguration) []string {
	if c == nil {
		return nil
	}
	return c.Denied
}

// validPoolPattern is Nomad's pattern of a node pool's name, with `*`
// allowed for the namespace's Allowed and Denied globs.
var validPoolPattern = regexp.MustCompile("^[a-zA-Z0-9-_*]{1,128}$")

// ValidNodePoolGlob reports whether p is a node pool name, or a pattern
// of one with `*`.
func ValidNodePoolGlob(p string) bool { return validPoolPattern.MatchString(p) }

// MultiError words errs as Nomad's go-multierror does ("1 error
// occurred:\n\t* …\n\n"), nil when there are none.
func MultiError(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	points := make([]string, len(errs))
	for i, e := range errs {
		points[i] = "* " + e.Error()
	}
	if len(errs) == 1 {
		return fmt.Errorf("1 error occurred:\n\t%s\n\n", points[0])
	}
	return fmt.Errorf("%d errors occurred:\n\t%s\n\n", len(errs), strings.Join(points, "\n\t"))
}

// SetHash computes and sets Hash from the fields a user sets, in Nomad's
// order, so that two servers (and Nomad) agree on it.
func (n *Namespace) SetHash() []byte {
	h, _ := blake2b.New256(nil) // only fails for a key longer than 64 bytes
	w := func(s string) { _, _ = h.Write([]byte(s)) }
	w(n.Name)
	w(n.Description)
	w(n.Quota)
	if c := n.Capabilities; c != nil {
		for _, l := range [][]string{c.EnabledTaskDrivers, c.DisabledTaskDrivers, c.EnabledNetworkModes, c.DisabledNetworkModes} {
			for _, s := range l {
				w(s)
			}
		}
	}
	cluster := func(def string, allowed, denied []string) {
		w(def)
		for _, s := range allowed {
			w(s)
		}
		for _, s := range denied {
			w(s)
		}
	}
	if c := n.NodePoolConfiguration; c != nil {
		cluster(c.Default, c.Allowed, c.Denied)
	}
	if c := n.VaultConfiguration; c != nil {
		cluster(c.Default, c.Allowed, c.Denied)
	}
	if c := n.ConsulConfiguration; c != nil {
		cluster(c.Default, c.Allowed, c.Denied)
	}
	keys := make([]string, 0, len(n.Meta))
	for k := range n.Meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w(k)
		w(n.Meta[k])
	}
	n.Hash = h.Sum(nil)
	return n.Hash
}

// Copy returns a deep copy (nil for nil).
func (n *Namespace) Copy() *Namespace {
	if n == nil {
		return nil
	}
	c := *n
	c.Hash = slices.Clone(n.Hash)
	c.Meta = maps.Clone(n.Meta)
	c.RequiredExtraClaims = maps.Clone(n.RequiredExtraClaims)
	c.OptionalExtraClaims = maps.Clone(n.OptionalExtraClaims)
	if n.Capabilities != nil {
		cc := *n.Capabilities
		cc.EnabledTaskDrivers = slices.Clone(cc.EnabledTaskDrivers)
		cc.DisabledTaskDrivers = slices.Clone(cc.DisabledTaskDrivers)
		cc.EnabledNetworkModes = slices.Clone(cc.EnabledNetworkModes)
		cc.DisabledNetworkModes = slices.Clone(cc.DisabledNetworkModes)
		c.Capabilities = &cc
	}
	if n.NodePoolConfiguration != nil {
		p := *n.NodePoolConfiguration
		p.Allowed, p.Denied = slices.Clone(p.Allowed), slices.Clone(p.Denied)
		c.NodePoolConfiguration = &p
	}
	if n.VaultConfiguration != nil {
		v := *n.VaultConfiguration
		v.Allowed, v.Denied = slices.Clone(v.Allowed), slices.Clone(v.Denied)
		c.VaultConfiguration = &v
	}
	if n.ConsulConfiguration != nil {
		v := *n.ConsulConfiguration
		v.Allowed, v.Denied = slices.Clone(v.Allowed), slices.Clone(v.Denied)
		c.ConsulConfiguration = &v
	}
	return &c
}

// NewDefaultNamespace is "default" as every store starts with it, at
// raft index 1 (as Nomad's).
func NewDefaultNamespace() *Namespace {
	n := &Namespace{Name: DefaultNamespace, Description: DefaultNamespaceDescription, CreateIndex: 1, ModifyIndex: 1}
	n.SetHash()
	return n
}

// allowedBy is a capability's rule: allowed when enabled is empty or
// names v, and disabled does not name v.
func allowedBy(enabled, disabled []string, v string) bool {
	return (len(enabled) == 0 || slices.Contains(enabled, v)) && !slices.Contains(disabled, v)
}

// CheckCapabilities refuses a job that uses a task driver or a group
// network mode the namespace's capabilities do not allow, with Nomad's
// words.
func (n *Namespace) CheckCapabilities(job *Job) error {
	if n == nil || n.Capabilities == nil || job == nil {
		return nil
	}
	c := n.Capabilities
	var drivers, modes []string
	for _, tg := range job.TaskGroups {
		if tg == nil {
			continue
		}
		for _, t := range tg.Tasks {
			if t != nil && !allowedBy(c.EnabledTaskDrivers, c.DisabledTaskDrivers, t.Driver) {
				drivers = append(drivers, t.Driver)
			}
		}
	}
	switch len(drivers) {
	case 0:
	case 1:
		return fmt.Errorf("used task driver %q is not allowed in namespace %q", drivers[0], n.Name)
	default:
		return fmt.Errorf("used task drivers %q are not allowed in namespace %q", drivers, n.Name)
	}
	for _, tg := range job.TaskGroups {
		if tg == nil {
			continue
		}
		for _, net := range tg.Networks {
			if net == nil {
				continue
			}
			mode := net.Mode
			if mode == "" {
				mode = "host"
			}
			if !allowedBy(c.EnabledNetworkModes, c.DisabledNetworkModes, mode) {
				modes = append(modes, mode)
			}
		}
	}
	switch len(modes) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("used group network mode %q is not allowed in namespace %q", modes[0], n.Name)
	default:
		return fmt.Errorf("used group network modes %q are not allowed in namespace %q", modes, n.Name)
	}
}
