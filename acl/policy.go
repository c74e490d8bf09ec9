// Package acl is drover's access control core, in Nomad's model: a
// policy's rules (Nomad's HCL policy language) are parsed once into a
// Policy, the policies of a token are compiled into an ACL, and every
// endpoint asks the ACL one question (AllowNamespaceOp, AllowNodeRead, …).
// The package imports nothing of drover but its diagnostics; it never
// reads a clock or the state.
package acl

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"

	"github.com/droverhq/drover/internal/diag"
)

// Coarse policies, as Nomad's.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyScale = "scale"
	PolicyList  = "list"
)

// Namespace capabilities, Nomad's names. Drover's endpoints ask for
// list-jobs, parse-job, read-job, submit-job, dispatch-job, read-logs,
// read-fs, alloc-exec, alloc-lifecycle, read-job-scaling, scale-job,
// list-scaling-policies and read-scaling-policy (website/api/acl.md); the
// others are accepted in policies so that Nomad's policies load unchanged,
// and guard nothing drover serves.
const (
	NamespaceCapabilityDeny                 = "deny"
	NamespaceCapabilityListJobs             = "list-jobs"
	NamespaceCapabilityParseJob             = "parse-job"
	NamespaceCapabilityReadJob              = "read-job"
	NamespaceCapabilitySubmitJob            = "submit-job"
	NamespaceCapabilityDispatchJob          = "dispatch-job"
	NamespaceCapabilityReadLogs             = "read-logs"
	NamespaceCapabilityReadFS               = "read-fs"
	NamespaceCapabilityAllocExec            = "alloc-exec"
	NamespaceCapabilityAllocNodeExec        = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle       = "alloc-lifecycle"
	NamespaceCapabilityCSIRegisterPlugin    = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume       = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume        = "csi-read-volume"
	NamespaceCapabilityCSIListVolume        = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume       = "csi-mount-volume"
	NamespaceCapabilityListScalingPolicies  = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy    = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling       = "read-job-scaling"
	NamespaceCapabilityScaleJob             = "scale-job"
	NamespaceCapabilitySubmitRecommendation = "submit-recommendation"
	NamespaceCapabilitySentinelOverride     = "sentinel-override"
	NamespaceCapabilityHostVolumeCreate     = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister   = "host-volume-register"
	NamespaceCapabilityHostVolumeRead       = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite      = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete     = "host-volume-delete"
)

// namespaceCapabilities is every capability a namespace rule may list.
var namespaceCapabilities = []string{
	NamespaceCapabilityDeny, NamespaceCapabilityListJobs, NamespaceCapabilityParseJob,
	NamespaceCapabilityReadJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
	NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
	NamespaceCapabilityAllocNodeExec, NamespaceCapabilityAllocLifecycle,
	NamespaceCapabilityCSIRegisterPlugin, NamespaceCapabilityCSIWriteVolume,
	NamespaceCapabilityCSIReadVolume, NamespaceCapabilityCSIListVolume,
	NamespaceCapabilityCSIMountVolume, NamespaceCapabilityListScalingPolicies,
	NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityReadJobScaling,
	NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitRecommendation,
	NamespaceCapabilitySentinelOverride, NamespaceCapabilityHostVolumeCreate,
	NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeRead,
	NamespaceCapabilityHostVolumeWrite, NamespaceCapabilityHostVolumeDelete,
}

// expandNamespacePolicy returns the capabilities a namespace policy
// stands for, as Nomad's.
func expandNamespacePolicy(policy string) []string {
	read := []string{
		NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIReadVolume,
		NamespaceCapabilityReadJobScaling, NamespaceCapabilityListScalingPolicies,
		NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityHostVolumeRead,
	}
	switch policy {
	case PolicyDeny:
		return []string{NamespaceCapabilityDeny}
	case PolicyRead:
		return read
	case PolicyWrite:
		return append(read,
			NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
			NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
			NamespaceCapabilityAllocLifecycle, NamespaceCapabilityCSIMountVolume,
			NamespaceCapabilityCSIWriteVolume, NamespaceCapabilitySubmitRecommendation,
			NamespaceCapabilityHostVolumeCreate, NamespaceCapabilityHostVolumeRegister,
			NamespaceCapabilityHostVolumeWrite, NamespaceCapabilityHostVolumeDelete)
	case PolicyScale:
		return []string{
			NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
			NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob,
		}
	}
	return nil
}

// Policy is the parsed form of a policy's rules.
type Policy struct {
	Name       string
	Namespaces []*NamespaceRule
	// NodePools govern what a token may do with node pools
	// (nodepool.go). HostVolumes govern which client host volumes a job
	// may mount (hostvolume.go).
	NodePools   []*NamedRule
	HostVolumes []*NamedRule
	Node        *CoarseRule
	Agent       *CoarseRule
	Operator    *CoarseRule
	// Quota and Plugin are Nomad's; checked and kept, without effect.
	Quota  *CoarseRule
	Plugin *CoarseRule
}

// NamespaceRule is a namespace "NAME" { policy; capabilities } block;
// NAME may hold "*" globs.
type NamespaceRule struct {
	Name         string
	Policy       string
	Capabilities []string
	// Variables holds the capabilities of each variables path glob
	// (variables.go).
	Variables map[string][]string
}

// NamedRule is a node_pool or host_volume block.
type NamedRule struct {
	Name         string
	Policy       string
	Capabilities []string
}

// CoarseRule is a node, agent, operator, quota or plugin block.
type CoarseRule struct {
	Policy string
}

// ErrInvalid: a policy's rules do not parse or say something invalid.
var ErrInvalid = errors.New("invalid ACL policy")

// Location is a position in a policy's rules.
type Location = diag.Location

// Diagnostic is one problem of a policy's rules: where, which field
// (`namespace "default".policy`), and a message.
type Diagnostic struct {
	Location
	Field   string
	Message string
}

// String formats the diagnostic as "SOURCE:LINE:COL: field: message".
func (d Diagnostic) String() string {
	msg := d.Message
	if d.Field != "" {
		msg = d.Field + ": " + msg
	}
	if at := d.Location.String(); at != "" {
		return at + ": " + msg
	}
	return msg
}

// Errors is every problem of a policy's rules, in source order.
type Errors struct {
	Diagnostics []Diagnostic
}

// Error returns one diagnostic per line.
func (e *Errors) Error() string { return diag.Lines(e.Diagnostics) }

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *Errors) Unwrap() error { return ErrInvalid }

// parser collects the problems of one policy.
type parser struct {
	source string
	errs   []Diagnostic
	dedup  diag.Dedup[Diagnostic]
}

func (p *parser) at(r *hcl.Range) Location {
	if r == nil {
		return Location{File: p.source}
	}
	return Location{File: p.source, Line: r.Start.Line, Column: r.Start.Column}
}

func (p *parser) errorf(r *hcl.Range, field, format string, args ...any) {
	p.dedup.Add(&p.errs, Diagnostic{Location: p.at(r), Field: field, Message: fmt.Sprintf(format, args...)})
}

func (p *parser) hclDiags(diags hcl.Diagnostics, field string) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += "; " + d.Detail
		}
		p.errorf(d.Subject, field, "%s", msg)
	}
}

var (
	topSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
		{Type: "namespace", LabelNames: []string{"name"}},
		{Type: "node_pool", LabelNames: []string{"name"}},
		{Type: "host_volume", LabelNames: []string{"name"}},
		{Type: "node"}, {Type: "agent"}, {Type: "operator"}, {Type: "quota"}, {Type: "plugin"},
	}}
	namespaceSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{{Name: "policy"}, {Name: "capabilities"}},
		Blocks:     []hcl.BlockHeaderSchema{{Type: "variables"}},
	}
	namedSchema     = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "policy"}, {Name: "capabilities"}}}
	coarseSchema    = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "policy", Required: true}}}
	variablesSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "path", LabelNames: []string{"path"}}}}
	pathSchema      = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "capabilities", Required: true}}}
)

// coarsePolicies are the policies each coarse block accepts.
var coarsePolicies = map[string][]string{
	"node":     {PolicyDeny, PolicyRead, PolicyWrite},
	"agent":    {PolicyDeny, PolicyRead, PolicyWrite},
	"operator": {PolicyDeny, PolicyRead, PolicyWrite},
	"quota":    {PolicyDeny, PolicyRead, PolicyWrite},
	"plugin":   {PolicyDeny, PolicyRead, PolicyList},
}

// Parse parses a policy's rules, Nomad's HCL policy language (or its JSON
// form, when the rules start with "{"). source names the rules in
// diagnostics: the file they were read from, or the policy's name. Every
// problem is reported, located, in an *Errors (errors.Is ErrInvalid).
func Parse(name, source, rules string) (*Policy, error) {
	p := &parser{source: source}
	pol := p.parse(name, rules)
	if len(p.errs) > 0 {
		diag.Sort(p.errs, func(d Diagnostic) Location { return d.Location })
		return nil, &Errors{Diagnostics: p.errs}
	}
	return pol, nil
}

func (p *parser) parse(name, rules string) (pol *Policy) {
	defer func() {
		// The HCL parser reports bad input as diagnostics; this guard
		// keeps a policy from ever taking a server down.
		if r := recover(); r != nil {
			p.errorf(nil, "", "cannot parse the rules: %v", r)
			pol = nil
		}
	}()
	if strings.TrimSpace(rules) == "" {
		p.errorf(nil, "", "policy rules cannot be empty")
		return nil
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasPrefix(strings.TrimSpace(rules), "{") {
		f, diags = hcljson.Parse([]byte(rules), p.source)
	} else {
		f, diags = hclsyntax.ParseConfig([]byte(rules), p.source, hcl.InitialPos)
	}
	p.hclDiags(diags, "")
	if f == nil || diags.HasErrors() {
		return nil
	}
	content, diags := f.Body.Content(topSchema)
	p.hclDiags(diags, "")
	pol = &Policy{Name: name}
	seen := map[string]*hcl.Range{}
	for _, b := range content.Blocks {
		key := b.Type
		field := b.Type
		if len(b.Labels) > 0 {
			key += " " + b.Labels[0]
			field = fmt.Sprintf("%s %q", b.Type, b.Labels[0])
		}
		if prev, dup := seen[key]; dup {
			p.errorf(b.DefRange.Ptr(), field, "given twice (first at line %d)", prev.Start.Line)
			continue
		}
		seen[key] = b.DefRange.Ptr()
		switch b.Type {
		case "namespace":
			if r := p.namespace(b, field); r != nil {
				pol.Namespaces = append(pol.Namespaces, r)
			}
		case "node_pool", "host_volume":
			if r := p.named(b, field); r != nil {
				if b.Type == "node_pool" {
					pol.NodePools = append(pol.NodePools, r)
				} else {
					pol.HostVolumes = append(pol.HostVolumes, r)
				}
			}
		default:
			r := p.coarse(b, field)
			switch b.Type {
			case "node":
				pol.Node = r
			case "agent":
				pol.Agent = r
			case "operator":
				pol.Operator = r
			case "quota":
				pol.Quota = r
			case "plugin":
				pol.Plugin = r
			}
		}
	}
	return pol
}

func (p *parser) namespace(b *hcl.Block, field string) *NamespaceRule {
	if !p.label(b, field) {
		return nil
	}
	content, diags := b.Body.Content(namespaceSchema)
	p.hclDiags(diags, field)
	r := &NamespaceRule{Name: b.Labels[0]}
	r.Policy = p.policyAttr(content.Attributes["policy"], field, []string{PolicyDeny, PolicyRead, PolicyWrite, PolicyScale})
	r.Capabilities = p.capabilities(content.Attributes["capabilities"], field, namespaceCapabilities)
	for _, vb := range content.Blocks {
		p.variables(vb, field, r)
	}
	return r
}

func (p *parser) variables(b *hcl.Block, field string, r *NamespaceRule) {
	field += ".variables"
	content, diags := b.Body.Content(variablesSchema)
	p.hclDiags(diags, field)
	if len(content.Blocks) == 0 && !diags.HasErrors() {
		p.errorf(b.DefRange.Ptr(), field, "no variable paths in namespace %q", r.Name)
	}
	for _, pb := range content.Blocks {
		pf := fmt.Sprintf("%s.path %q", field, pb.Labels[0])
		switch {
		case strings.TrimSpace(pb.Labels[0]) == "":
			p.errorf(pb.DefRange.Ptr(), pf, "the path must not be empty")
			continue
		case strings.HasPrefix(pb.Labels[0], "/"):
			p.errorf(pb.DefRange.Ptr(), pf, "cannot start with a leading '/'")
			continue
		}
		pc, diags := pb.Body.Content(pathSchema)
		p.hclDiags(diags, pf)
		caps := p.capabilities(pc.Attributes["capabilities"], pf, []string{
			VariablesCapabilityWrite, VariablesCapabilityRead, VariablesCapabilityList,
			VariablesCapabilityDestroy, VariablesCapabilityDeny})
		if r.Variables == nil {
			r.Variables = map[string][]string{}
		}
		r.Variables[pb.Labels[0]] = append(r.Variables[pb.Labels[0]], caps...)
	}
}

func (p *parser) named(b *hcl.Block, field string) *NamedRule {
	if !p.label(b, field) {
		return nil
	}
	content, diags := b.Body.Content(namedSchema)
	p.hclDiags(diags, field)
	r := &NamedRule{Name: b.Labels[0]}
	policies := []string{PolicyDeny, PolicyRead, PolicyWrite}
	caps := []string{"deny", "read", "write", "mount-readonly", "mount-readwrite"}
	if b.Type == "host_volume" {
		policies = append(policies, "mount")
	} else {
		caps = nodePoolCapabilities
	}
	r.Policy = p.policyAttr(content.Attributes["policy"], field, policies)
	r.Capabilities = p.capabilities(content.Attributes["capabilities"], field, caps)
	return r
}

func (p *parser) coarse(b *hcl.Block, field string) *CoarseRule {
	content, diags := b.Body.Content(coarseSchema)
	p.hclDiags(diags, field)
	return &CoarseRule{Policy: p.policyAttr(content.Attributes["policy"], field, coarsePolicies[b.Type])}
}

// label checks a block's name: not empty.
func (p *parser) label(b *hcl.Block, field string) bool {
	if strings.TrimSpace(b.Labels[0]) == "" {
		p.errorf(b.DefRange.Ptr(), field, "the name must not be empty")
		return false
	}
	return true
}

// policyAttr reads a policy attribute: one of allowed, or "" when absent.
func (p *parser) policyAttr(a *hcl.Attribute, field string, allowed []string) string {
	if a == nil {
		return ""
	}
	field += ".policy"
	v, ok := p.value(a, field)
	if !ok {
		return ""
	}
	if v.Type() != cty.String {
		p.errorf(a.Expr.Range().Ptr(), field, "must be a string")
		return ""
	}
	s := v.AsString()
	if !slices.Contains(allowed, s) {
		p.errorf(a.Expr.Range().Ptr(), field, "%q is not one of %s%s", s, strings.Join(allowed, ", "), suggest(s, allowed))
		return ""
	}
	return s
}

// capabilities reads a list of capabilities, each one of allowed.
func (p *parser) capabilities(a *hcl.Attribute, field string, allowed []string) []string {
	if a == nil {
		return nil
	}
	field += ".capabilities"
	v, ok := p.value(a, field)
	if !ok {
		return nil
	}
	if !v.Type().IsTupleType() && !v.Type().IsListType() {
		p.errorf(a.Expr.Range().Ptr(), field, "must be a list of strings")
		return nil
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || !e.IsKnown() || e.Type() != cty.String {
			p.errorf(a.Expr.Range().Ptr(), field, "must be a list of strings")
			return nil
		}
		s := e.AsString()
		if !slices.Contains(allowed, s) {
			p.errorf(a.Expr.Range().Ptr(), field, "unknown capability %q%s", s, suggest(s, allowed))
			continue
		}
		out = append(out, s)
	}
	return out
}

// value evaluates a's literal value (no variables, no functions).
func (p *parser) value(a *hcl.Attribute, field string) (cty.Value, bool) {
	v, diags := a.Expr.Value(nil)
	p.hclDiags(diags, field)
	if diags.HasErrors() {
		return cty.NilVal, false
	}
	if v.IsNull() || !v.IsWhollyKnown() {
		p.errorf(a.Expr.Range().Ptr(), field, "must not be null")
		return cty.NilVal, false
	}
	return v, true
}

// suggest returns `; did you mean "x"?` for the nearest of known.
func suggest(s string, known []string) string {
	if c := diag.Closest(s, known, 3); c != "" {
		return fmt.Sprintf("; did you mean %q?", c)
	}
	return ""
}
