package structs

// Constraint operators drover evaluates.
const (
	ConstraintEqual         = "="
	ConstraintNotEqual      = "!="
	ConstraintRegex         = "regexp"
	ConstraintVersion       = "version"
	ConstraintSemver        = "semver"
	ConstraintIsSet         = "is_set"
	ConstraintIsNotSet      = "is_not_set"
	ConstraintLess          = "<"
	ConstraintLessEq        = "<="
	ConstraintGreater       = ">"
	ConstraintGreaterEq     = ">="
	ConstraintSetContains   = "set_contains"
	ConstraintDistinctHosts = "distinct_hosts"
)

// Constraint restricts placement by a node attribute: LTarget is usually an
// interpolation such as "${attr.kernel.name}" or "${meta.zone}".
type Constraint struct {
	LTarget string
	RTarget string
	Operand string
}

func copyConstraints(in []*Constraint) []*Constraint {
	if in == nil {
		return nil
	}
	out := make([]*Constraint, len(in))
	for i, c := range in {
		cc := *c
		out[i] = &cc
	}
	return out
}

// Spread spreads a group's allocations across the values of a node attribute.
type Spread struct {
	Attribute    string
	Weight       int8
	SpreadTarget []*SpreadTarget `json:",omitempty"`
}

// SpreadTarget is a desired share of allocations for one attribute value.
type SpreadTarget struct {
	Value   string
	Percent uint8
}

func copySpreads(in []*Spread) []*Spread {
	if in == nil {
		return nil
	}
	out := make([]*Spread, len(in))
	for i, s := range in {
		c := *s
		if s.SpreadTarget != nil {
			c.SpreadTarget = make([]*SpreadTarget, len(s.SpreadTarget))
			for j, t := range s.SpreadTarget {
				tt := *t
				c.SpreadTarget[j] = &tt
			}
		}
		out[i] = &c
	}
	return out
}

// Affinity is a placement preference: nodes where LTarget Operand RTarget
// holds (as for a constraint) score Weight, from -100 (repel) to 100
// (attract), never 0. Unlike a constraint it filters no node.
type Affinity struct {
	LTarget string
	RTarget string
	Operand string
	Weight  int8
}

func copyAffinities(in []*Affinity) []*Affinity {
	if in == nil {
		return nil
	}
	out := make([]*Affinity, len(in))
	for i, a := range in {
		c := *a
		out[i] = &c
	}
	return out
}
