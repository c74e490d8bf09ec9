package jobspec

import (
	"fmt"
	"time"

	"github.com/droverhq/drover/structs"
	"github.com/hashicorp/nomad/api"
)

// updateFields are the JSON names of the update block's fields.
var updateFields = []string{"Stagger", "MaxParallel", "HealthCheck", "MinHealthyTime", "HealthyDeadline",
	"ProgressDeadline", "Canary", "AutoRevert", "AutoPromote"}

// layUpdate copies the fields a block sets over u.
func (b *builder) layUpdate(u *structs.UpdateStrategy, a *api.UpdateStrategy) {
	if a == nil {
		return
	}
	if a.Stagger != nil {
		u.Stagger = *a.Stagger
	}
	if a.MaxParallel != nil {
		u.MaxParallel = *a.MaxParallel
	}
	if a.HealthCheck != nil {
		u.HealthCheck = *a.HealthCheck
	}
	if a.MinHealthyTime != nil {
		u.MinHealthyTime = *a.MinHealthyTime
	}
	if a.HealthyDeadline != nil {
		u.HealthyDeadline = *a.HealthyDeadline
	}
	if a.ProgressDeadline != nil {
		u.ProgressDeadline = *a.ProgressDeadline
	}
	if a.Canary != nil {
		u.Canary = *a.Canary
	}
	if a.AutoRevert != nil {
		u.AutoRevert = *a.AutoRevert
	}
	if a.AutoPromote != nil {
		u.AutoPromote = *a.AutoPromote
	}
}

// checkUpdate applies the rules of ROLLOUT.md part A to a merged strategy.
// src maps each field to the path it came from (nil: updPath.Field);
// count > 0 enables the max_parallel > count warning.
func (b *builder) checkUpdate(group, updPath string, u *structs.UpdateStrategy, count int, src map[string]string) {
	at := func(f string) string {
		if p, ok := src[f]; ok {
			return p
		}
		return updPath + "." + f
	}
	switch u.HealthCheck {
	case structs.UpdateHealthCheckChecks, structs.UpdateHealthCheckTaskStates, structs.UpdateHealthCheckManual:
	default:
		b.err(at("HealthCheck"), "must be checks, task_states or manual (got %q)", u.HealthCheck)
	}
	if u.MaxParallel < 0 {
		b.err(at("MaxParallel"), "must not be negative (got %d)", u.MaxParallel)
	}
	if u.Canary < 0 {
		b.err(at("Canary"), "must not be negative (got %d)", u.Canary)
	}
	if u.MinHealthyTime < 0 {
		b.err(at("MinHealthyTime"), "must not be negative (got %s)", u.MinHealthyTime)
	}
	if u.ProgressDeadline < 0 {
		b.err(at("ProgressDeadline"), "must not be negative (got %s)", u.ProgressDeadline)
	}
	if u.HealthyDeadline <= 0 {
		b.err(at("HealthyDeadline"), "must be positive (got %s)", u.HealthyDeadline)
	}
	if u.Stagger <= 0 {
		b.err(at("Stagger"), "must be positive (got %s)", u.Stagger)
	}
	if u.AutoPromote && u.Canary == 0 {
		b.err(at("AutoPromote"), "needs canary > 0")
	}
	if u.Canary > 0 && u.MaxParallel == 0 {
		b.err(at("Canary"), "needs max_parallel > 0 (max_parallel = 0 means no deployment)")
	}
	if u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline {
		b.err(at("MinHealthyTime"), "must be less than healthy_deadline (%s >= %s)", u.MinHealthyTime, u.HealthyDeadline)
	}
	if u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline {
		b.err(at("HealthyDeadline"), "must be less than progress_deadline (%s >= %s)", u.HealthyDeadline, u.ProgressDeadline)
	}
	if count > 0 && u.MaxParallel > count {
		b.r.fieldWarn(b.lc, b.lc.get(at("MaxParallel")), "is greater than the count of group %q (%d > %d)", group, u.MaxParallel, count)
	}
}

// layRestart copies the fields a restart block sets over p.
func (b *builder) layRestart(p *structs.RestartPolicy, a *api.RestartPolicy) {
	if a == nil {
		return
	}
	if a.Attempts != nil {
		p.Attempts = *a.Attempts
	}
	if a.Interval != nil {
		p.Interval = *a.Interval
	}
	if a.Delay != nil {
		p.Delay = *a.Delay
	}
	if a.Mode != nil {
		p.Mode = *a.Mode
	}
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
func (b *builder) layReschedule(p *structs.ReschedulePolicy, a *api.ReschedulePolicy) {
	if a == nil || p == nil {
		return
	}
	if a.Attempts != nil {
		p.Attempts = *a.Attempts
	}
	if a.Interval != nil {
		p.Interval = *a.Interval
	}
	if a.Delay != nil {
		p.Delay = *a.Delay
	}
	if a.DelayFunction != nil {
		p.DelayFunction = *a.DelayFunction
	}
	if a.MaxDelay != nil {
		p.MaxDelay = *a.MaxDelay
	}
	if a.Unlimited != nil {
		p.Unlimited = *a.Unlimited
	}
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

var operands = map[string]bool{
	structs.ConstraintEqual: true, structs.ConstraintNotEqual: true, structs.ConstraintRegex: true,
	structs.ConstraintVersion: true, structs.ConstraintSemver: true, structs.ConstraintIsSet: true,
	structs.ConstraintIsNotSet: true, structs.ConstraintLess: true, structs.ConstraintLessEq: true,
	structs.ConstraintGreater: true, structs.ConstraintGreaterEq: true, structs.ConstraintSetContains: true,
	structs.ConstraintDistinctHosts: true, "==": true, "is": true, "set_contains_all": true,
}

func (b *builder) constraints(path string, in []*api.Constraint) []*structs.Constraint {
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
		case sc.Operand == "distinct_property" || sc.Operand == "set_contains_any":
			b.err(cpath+".Operand", "%q is not supported by drover", c.Operand)
		case !operands[sc.Operand]:
			b.err(cpath+".Operand", "unknown operator %q", c.Operand)
		case sc.Operand == structs.ConstraintDistinctHosts:
		case sc.LTarget == "":
			b.err(cpath+".LTarget", "a constraint needs an attribute")
		case sc.RTarget == "" && sc.Operand != structs.ConstraintIsSet && sc.Operand != structs.ConstraintIsNotSet:
			b.err(cpath+".RTarget", "operator %q needs a value", sc.Operand)
		}
		out = append(out, sc)
	}
	return out
}

func (b *builder) spreads(path string, in []*api.Spread) []*structs.Spread {
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
