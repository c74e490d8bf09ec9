package jobspec

import (
	"fmt"
	"regexp"
	"strconv"
	"time"

	version "github.com/hashicorp/go-version"

	"github.com/droverhq/drover/structs"
)

// lay copies a field the job wrote (non-nil) over dst; an unwritten field
// keeps what dst holds (a default, or the job-level block's value).
func lay[T any](dst *T, written *T) {
	if written != nil {
		*dst = *written
	}
}

// layRestart copies the fields a restart block sets over p.
func (b *builder) layRestart(p *structs.RestartPolicy, a *specRestart) {
	if a == nil {
		return
	}
	lay(&p.Attempts, a.Attempts)
	lay(&p.Interval, a.Interval)
	lay(&p.Delay, a.Delay)
	lay(&p.Mode, a.Mode)
}

func (b *builder) checkRestart(path string, p *structs.RestartPolicy) {
	switch p.Mode {
	case structs.RestartPolicyModeFail, structs.RestartPolicyModeDelay:
	default:
		b.err(path+".Mode", "must be fail or delay (got %q)", p.Mode)
	}
	if p.Attempts < 0 {
		b.err(path+".Attempts", "must not be negative (got %d)", p.Attempts)
	}
	if p.Delay < 0 {
		b.err(path+".Delay", "must not be negative (got %s)", p.Delay)
	}
	if p.Attempts > 0 && p.Interval <= 0 {
		b.err(path+".Interval", "must be positive (got %s)", p.Interval)
	}
	if p.Attempts > 0 && p.Interval > 0 && p.Delay*timeDur(p.Attempts) > p.Interval {
		b.err(path+".Delay", "times %d attempts exceeds the interval (%d × %s > %s)", p.Attempts, p.Attempts, p.Delay, p.Interval)
	}
}

// layReschedule copies the fields a reschedule block sets over p.
func (b *builder) layReschedule(p *structs.ReschedulePolicy, a *specReschedule) {
	if a == nil || p == nil {
		return
	}
	lay(&p.Attempts, a.Attempts)
	lay(&p.Interval, a.Interval)
	lay(&p.Delay, a.Delay)
	lay(&p.DelayFunction, a.DelayFunction)
	lay(&p.MaxDelay, a.MaxDelay)
	lay(&p.Unlimited, a.Unlimited)
}

func (b *builder) checkReschedule(path string, p *structs.ReschedulePolicy) {
	if p == nil {
		return
	}
	switch p.DelayFunction {
	case structs.DelayFunctionConstant, structs.DelayFunctionExponential, structs.DelayFunctionFibonacci:
	default:
		b.err(path+".DelayFunction", "must be constant, exponential or fibonacci (got %q)", p.DelayFunction)
	}
	if p.Attempts < 0 {
		b.err(path+".Attempts", "must not be negative (got %d)", p.Attempts)
	}
	if p.Delay < 0 {
		b.err(path+".Delay", "must not be negative (got %s)", p.Delay)
	}
	if p.Interval < 0 {
		b.err(path+".Interval", "must not be negative (got %s)", p.Interval)
	}
	if p.DelayFunction != structs.DelayFunctionConstant && p.MaxDelay < p.Delay {
		b.err(path+".MaxDelay", "must not be less than delay (%s < %s)", p.MaxDelay, p.Delay)
	}
	if !p.Unlimited && p.Attempts > 0 && p.Interval <= 0 {
		b.err(path+".Interval", "must be positive when attempts are limited (got %s)", p.Interval)
	}
}

// jobMigrate builds the job-level migrate block as written, defaulted
// (Job.Migrate); nil when not written. Only service jobs may have one (as
// Nomad's): their allocations are the ones a drain migrates under it.
func (b *builder) jobMigrate(typ string, a *specMigrate) *structs.MigrateStrategy {
	if a == nil {
		return nil
	}
	if typ != structs.JobTypeService {
		b.err("Job.Migrate", "job type %q does not allow a migrate block (only service jobs migrate under one)", typ)
		return nil
	}
	m := structs.DefaultMigrateStrategy()
	b.layMigrate(m, a)
	b.checkMigrate("Job.Migrate", m)
	return m
}

// groupMigrate builds a group's merged migrate block, as Nomad's: the
// defaults, then the job-level block's fields, then the group's own. Only
// service groups have one.
func (b *builder) groupMigrate(path, typ string, job, group *specMigrate) *structs.MigrateStrategy {
	if typ != structs.JobTypeService {
		if group != nil {
			b.err(path+".Migrate", "job type %q does not allow a migrate block (only service jobs migrate under one)", typ)
		}
		return nil
	}
	m := structs.DefaultMigrateStrategy()
	b.layMigrate(m, job)
	b.layMigrate(m, group)
	if group != nil {
		b.checkMigrate(path+".Migrate", m)
	}
	return m
}

// layMigrate copies the fields a migrate block sets over m.
func (b *builder) layMigrate(m *structs.MigrateStrategy, a *specMigrate) {
	if a == nil {
		return
	}
	lay(&m.MaxParallel, a.MaxParallel)
	lay(&m.HealthCheck, a.HealthCheck)
	lay(&m.MinHealthyTime, a.MinHealthyTime)
	lay(&m.HealthyDeadline, a.HealthyDeadline)
}

// checkMigrate applies Nomad's rules of the migrate block.
func (b *builder) checkMigrate(path string, m *structs.MigrateStrategy) {
	if m.MaxParallel < 0 {
		b.err(path+".MaxParallel", "must not be negative (got %d)", m.MaxParallel)
	}
	switch m.HealthCheck {
	case structs.UpdateHealthCheckChecks, structs.UpdateHealthCheckTaskStates:
	default:
		b.err(path+".HealthCheck", "must be checks or task_states (got %q)", m.HealthCheck)
	}
	if m.MinHealthyTime < 0 {
		b.err(path+".MinHealthyTime", "must not be negative (got %s)", m.MinHealthyTime)
	}
	if m.HealthyDeadline <= 0 {
		b.err(path+".HealthyDeadline", "must be positive (got %s)", m.HealthyDeadline)
	}
	if m.MinHealthyTime >= 0 && m.HealthyDeadline > 0 && m.MinHealthyTime >= m.HealthyDeadline {
		b.err(path+".MinHealthyTime", "must be less than healthy_deadline (%s >= %s)", m.MinHealthyTime, m.HealthyDeadline)
	}
}

var operands = map[string]bool{
	structs.ConstraintEqual: true, structs.ConstraintNotEqual: true, structs.ConstraintRegex: true,
	structs.ConstraintVersion: true, structs.ConstraintSemver: true, structs.ConstraintIsSet: true,
	structs.ConstraintIsNotSet: true, structs.ConstraintLess: true, structs.ConstraintLessEq: true,
	structs.ConstraintGreater: true, structs.ConstraintGreaterEq: true, structs.ConstraintSetContains: true,
	structs.ConstraintDistinctHosts: true, "==": true, "is": true, "set_contains_all": true,
	"set_contains_any": true, "distinct_property": true,
}

func (b *builder) constraints(path string, in []*specConstraint) []*structs.Constraint {
	var out []*structs.Constraint
	for i, c := range in {
		cpath := fmt.Sprintf("%s[%d]", path, i)
		if c == nil {
			b.err(cpath, "must not be null")
			continue
		}
		sc := &structs.Constraint{LTarget: c.LTarget, RTarget: c.RTarget, Operand: c.Operand}
		switch sc.Operand {
		case "":
			sc.Operand = structs.ConstraintEqual
		case "==", "is":
			sc.Operand = structs.ConstraintEqual
		case "set_contains_all":
			sc.Operand = structs.ConstraintSetContains
		}
		switch {
		case !operands[sc.Operand]:
			b.err(cpath+".Operand", "unknown operator %q", c.Operand)
		case sc.Operand == structs.ConstraintDistinctHosts:
		case sc.Operand == "distinct_property":
			// LTarget is the property, RTarget how many allocs may share
			// one value of it (1 when empty), as Nomad's.
			if sc.LTarget == "" {
				b.err(cpath+".LTarget", "distinct_property needs the property (attribute or distinct_property = \"${meta.rack}\")")
			}
			if sc.RTarget != "" {
				if n, err := strconv.Atoi(sc.RTarget); err != nil || n < 1 {
					b.err(cpath+".RTarget", "of a distinct_property constraint must be how many allocations may share a value: a positive whole number (got %q)", sc.RTarget)
				}
			}
		case sc.LTarget == "":
			b.err(cpath+".LTarget", "a constraint needs an attribute")
		case sc.RTarget == "" && sc.Operand != structs.ConstraintIsSet && sc.Operand != structs.ConstraintIsNotSet:
			b.err(cpath+".RTarget", "operator %q needs a value", sc.Operand)
		}
		out = append(out, sc)
	}
	return out
}

// affinityOperands maps the operators an affinity takes, as Nomad's
// (website/jobspec/affinity.md), to the form the scheduler evaluates.
var affinityOperands = map[string]string{
	"=": structs.ConstraintEqual, "==": structs.ConstraintEqual, "is": structs.ConstraintEqual,
	"!=": structs.ConstraintNotEqual, "not": structs.ConstraintNotEqual,
	"<": structs.ConstraintLess, "<=": structs.ConstraintLessEq, ">": structs.ConstraintGreater, ">=": structs.ConstraintGreaterEq,
	"regexp": structs.ConstraintRegex, "version": structs.ConstraintVersion, "semver": structs.ConstraintSemver,
	"set_contains": structs.ConstraintSetContains, "set_contains_all": structs.ConstraintSetContains,
	"set_contains_any": "set_contains_any",
}

// affinities checks affinity blocks (job, group or task) and defaults
// them as Nomad does: operator "=", weight 50. A weight must be from -100
// to 100 and not 0. System and sysbatch jobs take none: they run on every
// eligible node, so there is no choice of node to weigh.
func (b *builder) affinities(path, jobType string, in []*specAffinity) []*structs.Affinity {
	var out []*structs.Affinity
	for i, a := range in {
		apath := fmt.Sprintf("%s[%d]", path, i)
		if a == nil {
			b.err(apath, "must not be null")
			continue
		}
		if structs.PerNode(jobType) {
			b.err(apath, "is not allowed for %s jobs (they run on every eligible node: there is no choice of node to weigh)", jobType)
			continue
		}
		sa := &structs.Affinity{LTarget: a.LTarget, RTarget: a.RTarget, Operand: a.Operand, Weight: 50}
		if a.Weight != nil {
			sa.Weight = *a.Weight
		}
		if sa.Operand == "" {
			sa.Operand = structs.ConstraintEqual
		}
		op, known := affinityOperands[sa.Operand]
		switch {
		case !known:
			b.err(apath+".Operand", "unknown operator %q (=, !=, <, <=, >, >=, regexp, version, semver, set_contains_all or set_contains_any)", a.Operand)
		case sa.LTarget == "":
			b.err(apath, "needs an attribute")
		case sa.RTarget == "":
			b.err(apath, "needs a value for operator %q", sa.Operand)
		case op == structs.ConstraintRegex:
			if _, err := regexp.Compile(sa.RTarget); err != nil {
				b.err(apath+".RTarget", "is not a valid regular expression: %v", err)
			}
		case op == structs.ConstraintVersion || op == structs.ConstraintSemver:
			if _, err := version.NewConstraint(sa.RTarget); err != nil {
				b.err(apath+".RTarget", "is not a valid version constraint: %v", err)
			}
		}
		if known {
			sa.Operand = op
		}
		switch {
		case sa.Weight == 0:
			b.err(apath+".Weight", "must not be 0 (from -100 to 100: a negative weight repels, a positive one attracts)")
		case sa.Weight < -100 || sa.Weight > 100:
			b.err(apath+".Weight", "must be between -100 and 100 (got %d)", sa.Weight)
		}
		out = append(out, sa)
	}
	return out
}

func (b *builder) spreads(path string, in []*specSpread) []*structs.Spread {
	var out []*structs.Spread
	for i, s := range in {
		spath := fmt.Sprintf("%s[%d]", path, i)
		if s == nil {
			b.err(spath, "must not be null")
			continue
		}
		ss := &structs.Spread{Attribute: s.Attribute, Weight: 50}
		if s.Weight != nil {
			ss.Weight = *s.Weight
		}
		if ss.Attribute == "" {
			b.err(spath+".Attribute", "a spread needs an attribute")
		}
		if ss.Weight < 0 || ss.Weight > 100 {
			b.err(spath+".Weight", "must be between 0 and 100 (got %d)", ss.Weight)
		}
		sum := 0
		seen := map[string]bool{}
		for j, t := range s.SpreadTarget {
			if t == nil {
				continue
			}
			if seen[t.Value] {
				b.err(fmt.Sprintf("%s.SpreadTarget[%d].Value", spath, j), "duplicate target %q", t.Value)
			}
			seen[t.Value] = true
			sum += int(t.Percent)
			ss.SpreadTarget = append(ss.SpreadTarget, &structs.SpreadTarget{Value: t.Value, Percent: t.Percent})
		}
		if sum > 100 {
			b.err(spath+".SpreadTarget", "target percentages add up to %d, more than 100", sum)
		}
		out = append(out, ss)
	}
	return out
}

func timeDur(n int) time.Duration { return time.Duration(n) }
