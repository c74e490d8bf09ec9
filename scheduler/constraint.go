package scheduler

import (
	"regexp"
	"strconv"
	"strings"

	version "github.com/hashicorp/go-version"

	"github.com/droverhq/drover/structs"
)

// resolveTarget returns the value a constraint target names on node: an
// interpolation such as "${attr.kernel.name}", "${meta.rack}" or
// "${node.datacenter}", or the text itself. ok is false when an
// interpolated value is not set.
func resolveTarget(target string, n *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	// One resolver for constraints, spreads and zones: ${meta.K} and
	// ${node.meta.K} are the same, as in Nomad.
	return structs.NodeValue(n, target[2:len(target)-1])
}

// constraintCache keeps compiled regular expressions and version
// constraints; a nil cache compiles every time.
type constraintCache struct {
	re  map[string]*regexp.Regexp
	ver map[string]version.Constraints
}

func newConstraintCache() *constraintCache {
	return &constraintCache{re: map[string]*regexp.Regexp{}, ver: map[string]version.Constraints{}}
}

func (c *constraintCache) regexp(s string) *regexp.Regexp {
	if c != nil {
		if re, ok := c.re[s]; ok {
			return re
		}
	}
	re, err := regexp.Compile(s)
	if err != nil {
		re = nil
	}
	if c != nil {
		c.re[s] = re
	}
	return re
}

func (c *constraintCache) versions(s string) version.Constraints {
	if c != nil {
		if v, ok := c.ver[s]; ok {
			return v
		}
	}
	v, err := version.NewConstraint(s)
	if err != nil {
		v = nil
	}
	if c != nil {
		c.ver[s] = v
	}
	return v
}

// constraintKey names a constraint in metrics, as Nomad's.
func constraintKey(c *structs.Constraint) string {
	return c.LTarget + " " + c.Operand + " " + c.RTarget
}

// meetsConstraint evaluates one constraint against a node. distinct_hosts
// and distinct_property are not node properties and always hold here;
// placement checks them (Placer.check).
func meetsConstraint(c *structs.Constraint, n *structs.Node, cache *constraintCache) bool {
	if c == nil {
		return true
	}
	l, lok := resolveTarget(c.LTarget, n)
	r, rok := resolveTarget(c.RTarget, n)
	switch c.Operand {
	case structs.ConstraintDistinctHosts, "distinct_property":
		return true
	case structs.ConstraintEqual, "==", "is", "":
		return lok && rok && l == r
	case structs.ConstraintNotEqual, "not":
		return lok != rok || l != r
	case structs.ConstraintIsSet:
		return lok
	case structs.ConstraintIsNotSet:
		return !lok
	case structs.ConstraintLess, structs.ConstraintLessEq, structs.ConstraintGreater, structs.ConstraintGreaterEq:
		return lok && rok && compareOrder(c.Operand, l, r)
	case structs.ConstraintRegex:
		re := cache.regexp(r)
		return lok && rok && re != nil && re.MatchString(l)
	case structs.ConstraintVersion:
		return lok && rok && checkVersion(l, cache.versions(r), false)
	case structs.ConstraintSemver:
		return lok && rok && checkVersion(l, cache.versions(r), true)
	case structs.ConstraintSetContains, "set_contains_all":
		return lok && rok && setContains(l, r, true)
	case "set_contains_any":
		return lok && rok && setContains(l, r, false)
	}
	return false
}

func compareOrder(op, l, r string) bool {
	var cmp int
	lf, err1 := strconv.ParseFloat(l, 64)
	rf, err2 := strconv.ParseFloat(r, 64)
	switch {
	case err1 == nil && err2 == nil:
		switch {
		case lf < rf:
			cmp = -1
		case lf > rf:
			cmp = 1
		}
	default:
		cmp = strings.Compare(l, r)
	}
	switch op {
	case structs.ConstraintLess:
		return cmp < 0
	case structs.ConstraintLessEq:
		return cmp <= 0
	case structs.ConstraintGreater:
		return cmp > 0
	}
	return cmp >= 0
}

func checkVersion(v string, cs version.Constraints, strict bool) bool {
	if cs == nil {
		return false
	}
	var ver *version.Version
	var err error
	if strict {
		ver, err = version.NewSemver(v)
	} else {
		ver, err = version.NewVersion(v)
	}
	if err != nil {
		return false
	}
	return cs.Check(ver)
}

// setContains reports whether the comma-separated set have holds all (or,
// with all false, any) of the comma-separated values want.
func setContains(have, want string, all bool) bool {
	set := map[string]bool{}
	for _, s := range strings.Split(have, ",") {
		set[strings.TrimSpace(s)] = true
	}
	for _, s := range strings.Split(want, ",") {
		ok := set[strings.TrimSpace(s)]
		if all && !ok {
			return false
		}
		if !all && ok {
			return true
		}
	}
	return all
}
